// The fuzz corpus as a conformance suite for any implementation, and failing property cases as
// corpus files.
//
// A corpus file is an input of one fuzz target (fuzz/producer.h); replaying it here asks an
// implementation under test what the target asks the built-in implementations, through the
// checks of checks.h. A property failure is written the other way: its shrunk case becomes a
// file of the fuzz target that replays it (scheme_qparams, calibrate or minifloat), so that
// `ctest -L corpus` keeps replaying it from then on.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "qconform/checks.h"
#include "qconform/implementation.h"

namespace qconform::corpus {

// A case as the corpus file of one fuzz target.
struct File {
  std::string target;               // corpus/<target>/
  std::vector<std::uint8_t> bytes;  // the fuzz input
  std::string text;                 // what it decodes to, in SPEC text form with hex floats
};

// Encodes a case; nullopt when the fuzz input format cannot carry it (a tensor larger than the
// fuzz producer decodes, say), which is checked by decoding the bytes back.
[[nodiscard]] std::optional<File> quantize_case(const checks::QuantizeCase& c);
[[nodiscard]] std::optional<File> calibrate_case(const checks::QuantizeCase& c, Calibration method);
[[nodiscard]] std::optional<File> minifloat_case(float x);
// A scale rounded up as the block scale of a one-element tensor with that block dtype.
[[nodiscard]] std::optional<File> round_up_case(float s, ScaleDtype dtype);

// Writes root/<target>/<prefix>-<16 hex digits of a hash of the bytes> (so writing the same
// case twice gives one file). Returns the path, or an empty string when it cannot be written.
[[nodiscard]] std::string write(const File& f, const std::filesystem::path& root, const std::string& prefix);

// The failing case of the most recent failing check in this thread (set by QC_CHECK), taken
// once. The last failing call of a RapidCheck run is its shrunk counterexample.
void record(std::optional<File> f);
[[nodiscard]] std::optional<File> take_recorded();

// Replays every file of root/<target>/ for the targets an implementation can be asked about,
// until `deadline`. Files that cannot be asked through the implementation's operations (scheme
// text that does not parse, lookup tables through an ABI without them) are counted as skipped.
struct Failure {
  std::string file, report;
};
struct Replay {
  std::size_t files = 0, skipped = 0;
  std::vector<Failure> failures;
  bool complete = true;  // false when the deadline stopped it
};
[[nodiscard]] Replay replay(const Implementation& impl, const std::filesystem::path& root,
                            std::chrono::steady_clock::time_point deadline);
// The report for one file of `target` ("" when the implementation conforms on it).
[[nodiscard]] std::string replay_file(const Implementation& impl, const std::string& target,
                                      std::span<const std::uint8_t> bytes, bool* skipped = nullptr);

}  // namespace qconform::corpus
