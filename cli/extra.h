// Subcommands beyond the fixed tensor contract: run (the campaign), vectors, bench, decode.
#pragma once

#include <CLI/CLI.hpp>

namespace qconform::cli {

// Registers the subcommands on `app`; after parsing, dispatch() runs the one given, if any,
// and returns its exit status (or -1 when none of them was parsed).
struct Extra {
  virtual ~Extra() = default;
  virtual int dispatch() = 0;
};
[[nodiscard]] std::unique_ptr<Extra> add_extra_commands(CLI::App& app);

}  // namespace qconform::cli
