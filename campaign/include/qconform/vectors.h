// Golden conformance vectors as JSON Lines (schema: docs/vectors.md), for implementations that
// cannot link qconform: export once from the reference, read with a few lines of any language.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "qconform/implementation.h"

namespace qconform::vectors {

inline constexpr int kSchemaVersion = 1;

struct ExportSummary {
  std::size_t quantize = 0, dequantize = 0, calibrate = 0;
  std::vector<std::string> files;
};

// Writes DIR/manifest.json and DIR/{quantize,dequantize,calibrate}.jsonl from the reference.
// Returns an empty string or why it failed.
[[nodiscard]] std::string export_to(const std::string& dir, ExportSummary* summary = nullptr);

struct Failure {
  std::string file;
  std::size_t line = 0;
  std::string detail;
};

struct VerifySummary {
  std::size_t checked = 0, skipped = 0;
  std::vector<Failure> failures;
  std::string error;  // unreadable directory or malformed file
};

// Checks `impl` against every vector in DIR (operations it does not answer are skipped).
[[nodiscard]] VerifySummary verify(const std::string& dir, const Implementation& impl);

}  // namespace qconform::vectors
