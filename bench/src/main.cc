// qconform_benchmarks [--json] [--min-time=SECONDS] [--filter=REGEX]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "qconform/bench.h"

int main(int argc, char** argv) {
  bool json = false;
  double min_time = 0.2;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a.starts_with("--min-time=")) {
      min_time = std::strtod(std::string(a.substr(11)).c_str(), nullptr);
    } else if (a.starts_with("--filter=")) {
      filter = a.substr(9);
    } else {
      std::fprintf(stderr, "usage: %s [--json] [--min-time=SECONDS] [--filter=REGEX]\n", argv[0]);
      return 2;
    }
  }
  return qconform::bench::run(json, min_time, filter);
}
