// qconform_benchmarks [--json] [--min-time=SECONDS] [--filter=REGEX] [--offset=BYTES] [--far-prefetch=auto|on|off]
//                     [--chunk-prefetch=auto|l1|l2]
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "qconform/bench.h"
#include "qconform/optimized.h"

int main(int argc, char** argv) {
  bool json = false;
  double min_time = 0.2;
  std::string filter;
  std::size_t offset = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a.starts_with("--min-time=")) {
      min_time = std::strtod(std::string(a.substr(11)).c_str(), nullptr);
    } else if (a.starts_with("--filter=")) {
      filter = a.substr(9);
    } else if (a.starts_with("--offset=") && a.size() > 9 && a.size() <= 11 &&
               a.find_first_not_of("0123456789", 9) == std::string_view::npos) {
      offset = std::strtoul(std::string(a.substr(9)).c_str(), nullptr, 10);  // run() checks the range
    } else if (const auto mode = a.starts_with("--far-prefetch=") ? qconform::bench::far_prefetch_mode(a.substr(15))
                                                                  : std::nullopt) {
      qconform::optimized::set_far_prefetch(*mode);
    } else if (const auto level = a.starts_with("--chunk-prefetch=") ? qconform::bench::chunk_prefetch_mode(a.substr(17))
                                                                     : std::nullopt) {
      qconform::optimized::set_chunk_prefetch(*level);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--json] [--min-time=SECONDS] [--filter=REGEX] [--offset=BYTES] "
                   "[--far-prefetch=auto|on|off] [--chunk-prefetch=auto|l1|l2]\n",
                   argv[0]);
      return 2;
    }
  }
  return qconform::bench::run(json, min_time, filter, offset);
}
