// Replays fuzz inputs without libFuzzer (zstd's regression_driver): every file named, and every
// file under every directory named, goes once through LLVMFuzzerTestOneInput. Linked whenever
// the engine is not libFuzzer, so any compiler replays corpus/<target>/ in ctest.
//
// Exit status: 0 when every file ran (a failing check aborts with its report, naming the file);
// 1 on an unreadable path or when nothing was tested, so an empty corpus cannot pass.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) __attribute__((weak));

namespace fs = std::filesystem;

namespace {

bool run_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  qconform::fuzz::set_input_name(path.string());
  // A heap copy of exactly the file's size, so ASan sees reads past the end as libFuzzer would.
  auto* copy = new std::uint8_t[bytes.size() + (bytes.empty() ? 1 : 0)];
  std::copy(bytes.begin(), bytes.end(), copy);
  LLVMFuzzerTestOneInput(copy, bytes.size());
  delete[] copy;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\nreplays each input once through the fuzz target\n", argv[0]);
    return 1;
  }
  std::size_t tested = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(arg, ec)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      if (ec) {
        std::fprintf(stderr, "replay: cannot list %s: %s\n", arg.c_str(), ec.message().c_str());
        ok = false;
      }
      std::sort(files.begin(), files.end());  // a stable order makes failures reproducible
      for (const fs::path& f : files) {
        if (run_file(f)) {
          ++tested;
        } else {
          ok = false;
        }
      }
    } else if (fs::is_regular_file(arg, ec)) {
      if (run_file(arg)) {
        ++tested;
      } else {
        ok = false;
      }
    } else {
      std::fprintf(stderr, "replay: no such file or directory: %s\n", arg.c_str());
      ok = false;
    }
  }
  std::printf("tested %zu files\n", tested);
  if (tested == 0) {
    std::fprintf(stderr, "replay: nothing was tested\n");
    return 1;
  }
  return ok ? 0 : 1;
}
