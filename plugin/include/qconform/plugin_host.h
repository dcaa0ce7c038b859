// Loading a plugin (qconform/plugin.h) as an implementation under test, out of process: a
// worker child dlopens it and serves calls over pipes, so a crash, a hang or a write past
// out_capacity (a guard page follows every output buffer) is reported as nonconformance with
// ErrorKind::implementation_fault, never a crash of qconform. The worker restarts after a fault.
#pragma once

#include <memory>
#include <string>

#include "qconform/implementation.h"

namespace qconform {

struct PluginLoad {
  std::unique_ptr<Implementation> impl;  // null on failure
  std::string error;                     // why loading failed
};

// Loads `path`, checks the ABI version and the exported symbol. `timeout_ms` bounds each call.
[[nodiscard]] PluginLoad load_plugin(const std::string& path, int timeout_ms = 10000);

}  // namespace qconform
