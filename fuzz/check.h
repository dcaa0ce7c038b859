// Always-on checks for fuzz targets: FUZZ_CHECK prints what disagreed and aborts, and a
// pairwise table compares the outcome of every implementation (simdjson's fuzz_implementations).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "qconform/errors.h"

namespace qconform::fuzz {

// Concatenates anything streamable; the message half of FUZZ_CHECK.
template <class... Args>
[[nodiscard]] std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// The failure path of FUZZ_CHECK: prints the failed condition, the message, the input being
// replayed and the target's description of the decoded case, then std::abort() — the one
// place where aborting is right, since libFuzzer and the replay driver both report it.
[[noreturn]] void fail(const char* file, int line, const char* cond, const std::string& message);

// While alive, its callback describes the case under test in every failure report.
class Context {
 public:
  explicit Context(std::function<std::string()> describe);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  std::function<std::string()> previous_;
};

// The replay driver names the file it runs, so a failure says how to rerun it.
void set_input_name(std::string name);

// "%a (0xXXXXXXXX)": a float as a hex float and its bit pattern (NaN payloads stay visible).
[[nodiscard]] std::string hexf(float x);
[[nodiscard]] std::string hex_bytes(std::span<const std::uint8_t> b, std::size_t limit = 64);

// What one implementation returned for one operation: an error kind, or the result's bytes
// (a canonical encoding: floats by bit pattern, so -0.0 and NaN payloads compare exactly).
struct Outcome {
  std::string impl;
  std::optional<ErrorKind> kind;  // nullopt: success
  std::string message;            // the error message, or a short summary of the result
  std::vector<std::uint8_t> bytes;
};

template <class T>
[[nodiscard]] Outcome outcome_of(std::string impl, const Result<T>& r,
                                 const std::function<std::vector<std::uint8_t>(const T&)>& encode) {
  if (!r.ok()) return Outcome{std::move(impl), r.kind(), r.error().message, {}};
  std::vector<std::uint8_t> b = encode(r.value());
  return Outcome{std::move(impl), std::nullopt, cat("ok, ", b.size(), " bytes"), std::move(b)};
}

[[nodiscard]] bool same(const Outcome& a, const Outcome& b);

// Aborts with a table of every outcome and every disagreeing pair (first differing byte) unless
// all outcomes are the same error kind or the same bytes. `explain` may add a per-element view
// (inputs, scales, codes) for two differing results.
void check_agree(std::string_view op, std::span<const Outcome> outcomes,
                 const std::function<std::string(const Outcome&, const Outcome&)>& explain = nullptr,
                 const char* file = __builtin_FILE(), int line = __builtin_LINE());

// Little-endian appenders for canonical encodings.
void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v);
void put_f32(std::vector<std::uint8_t>& out, float v);

}  // namespace qconform::fuzz

// An always-on check: never compiled out, unlike assert.
#define FUZZ_CHECK(cond, ...)                                                               \
  do {                                                                                      \
    if (!(cond)) ::qconform::fuzz::fail(__FILE__, __LINE__, #cond,                          \
                                        ::qconform::fuzz::cat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
