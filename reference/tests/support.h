// Helpers of the reference unit suite: bit-exact comparisons that print hex floats and codes.
//
// Every expected value in this suite comes from SPEC.md, burn's published vectors or a hand
// derivation written beside it; never from running the code under test.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#if defined(__unix__)
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "qconform/errors.h"
#include "qconform/numeric.h"
#include "qconform/reference.h"
#include "qconform/scheme.h"

namespace qconform {
// gtest prints error kinds by their kebab-case name.
inline void PrintTo(ErrorKind kind, std::ostream* os) { *os << to_string(kind); }
}  // namespace qconform

namespace qct {

using qconform::ErrorKind;
using Bytes = std::vector<std::uint8_t>;
using Codes = std::vector<std::int32_t>;
using Floats = std::vector<float>;

[[nodiscard]] inline std::uint32_t bits(float x) noexcept { return std::bit_cast<std::uint32_t>(x); }
[[nodiscard]] inline float from_bits(std::uint32_t b) noexcept { return std::bit_cast<float>(b); }

// "%a (0xXXXXXXXX)": the value as a hex float and its bit pattern.
[[nodiscard]] inline std::string hex(float x) {
  char buf[80];
  std::snprintf(buf, sizeof buf, "%a (0x%08x)", static_cast<double>(x),
                static_cast<unsigned>(bits(x)));
  return buf;
}

[[nodiscard]] inline std::string hex_bytes(std::span<const std::uint8_t> b) {
  std::string out;
  char buf[4];
  for (std::size_t i = 0; i < b.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(b[i]));
    if (i) out += ' ';
    out += buf;
  }
  return "[" + out + "]";
}

// EXPECT_BITS_EQ(expected, actual): identical f32 bit patterns (so -0 != +0, NaN payloads count).
inline ::testing::AssertionResult SameBits(const char* e_expr, const char* a_expr, float expected,
                                           float actual) {
  if (bits(expected) == bits(actual)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a_expr << " is " << hex(actual) << ", expected "
                                       << e_expr << " = " << hex(expected);
}
#define EXPECT_BITS_EQ(expected, actual) EXPECT_PRED_FORMAT2(::qct::SameBits, expected, actual)
#define ASSERT_BITS_EQ(expected, actual) ASSERT_PRED_FORMAT2(::qct::SameBits, expected, actual)

// Element-wise bit equality of float vectors; prints every differing index as hex floats.
inline ::testing::AssertionResult SameFloats(const char* e_expr, const char* a_expr,
                                             const std::vector<float>& expected,
                                             const std::vector<float>& actual) {
  std::ostringstream os;
  bool ok = expected.size() == actual.size();
  if (!ok) os << "size " << actual.size() << ", expected " << expected.size() << "\n";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < expected.size() && i < actual.size(); ++i) {
    if (bits(expected[i]) != bits(actual[i])) {
      ok = false;
      if (shown++ < 16) os << "  [" << i << "] " << hex(actual[i]) << ", expected " << hex(expected[i]) << "\n";
    }
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a_expr << " differs from " << e_expr << ":\n" << os.str();
}
#define EXPECT_FLOATS_EQ(expected, actual) EXPECT_PRED_FORMAT2(::qct::SameFloats, expected, actual)

// Element-wise equality of codes; prints index, decimal and hex of both.
inline ::testing::AssertionResult SameCodes(const char* e_expr, const char* a_expr,
                                            const std::vector<std::int32_t>& expected,
                                            const std::vector<std::int32_t>& actual) {
  std::ostringstream os;
  bool ok = expected.size() == actual.size();
  if (!ok) os << "size " << actual.size() << ", expected " << expected.size() << "\n";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < expected.size() && i < actual.size(); ++i) {
    if (expected[i] != actual[i]) {
      ok = false;
      if (shown++ < 16) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  [%zu] code %d (0x%x), expected %d (0x%x)\n", i, actual[i],
                      static_cast<unsigned>(actual[i]), expected[i], static_cast<unsigned>(expected[i]));
        os << buf;
      }
    }
  }
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a_expr << " differs from " << e_expr << ":\n" << os.str();
}
#define EXPECT_CODES_EQ(expected, actual) EXPECT_PRED_FORMAT2(::qct::SameCodes, expected, actual)

inline ::testing::AssertionResult SameBytes(const char* e_expr, const char* a_expr,
                                            const std::vector<std::uint8_t>& expected,
                                            const std::vector<std::uint8_t>& actual) {
  if (expected == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a_expr << " is " << hex_bytes(actual) << ",\n expected "
                                       << e_expr << " = " << hex_bytes(expected);
}
#define EXPECT_BYTES_EQ(expected, actual) EXPECT_PRED_FORMAT2(::qct::SameBytes, expected, actual)

// EXPECT_ERROR(result, kind): a Result<T> or Status that failed with exactly that kind.
template <class R>
::testing::AssertionResult HasKind(const char* r_expr, const char* /*k_expr*/, const R& r,
                                   ErrorKind kind) {
  if (r.ok()) {
    return ::testing::AssertionFailure() << r_expr << " succeeded, expected error "
                                         << qconform::to_string(kind);
  }
  if (r.kind() != kind) {
    return ::testing::AssertionFailure() << r_expr << " failed with "
                                         << qconform::to_string(r.kind()) << " (\""
                                         << r.error().message << "\"), expected "
                                         << qconform::to_string(kind);
  }
  return ::testing::AssertionSuccess();
}
#define EXPECT_ERROR(result, kind) \
  EXPECT_PRED_FORMAT2(::qct::HasKind, result, ::qconform::ErrorKind::kind)
#define ASSERT_ERROR(result, kind) \
  ASSERT_PRED_FORMAT2(::qct::HasKind, result, ::qconform::ErrorKind::kind)

// EXPECT_OK(result): prints the error kind and message on failure.
template <class R>
::testing::AssertionResult IsOk(const char* r_expr, const R& r) {
  if (r.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r_expr << " failed with " << qconform::to_string(r.kind())
                                       << ": " << r.error().message;
}
#define EXPECT_OK(result) EXPECT_PRED_FORMAT1(::qct::IsOk, result)
#define ASSERT_OK(result) ASSERT_PRED_FORMAT1(::qct::IsOk, result)

// A scheme from its text; a text that does not parse fails the calling test.
[[nodiscard]] inline qconform::Scheme scheme(std::string_view text) {
  auto r = qconform::parse_scheme(text);
  if (!r.ok()) {
    ADD_FAILURE() << "scheme \"" << text << "\" does not parse: " << qconform::to_string(r.kind())
                  << ": " << r.error().message;
    return qconform::Scheme{};
  }
  return r.value();
}

[[nodiscard]] inline qconform::Table table(const std::vector<float>& t) {
  return std::span<const float>(t);
}

// Little-endian bytes of 32-bit words (SPEC §6: words are serialized little-endian).
[[nodiscard]] inline Bytes le_words(std::initializer_list<std::uint32_t> words) {
  Bytes out;
  for (std::uint32_t w : words) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(w >> (8 * i)));
  }
  return out;
}
[[nodiscard]] inline Bytes le_f32(float x) { return le_words({bits(x)}); }
[[nodiscard]] inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}


// Runs `body` in a child process that is killed after `seconds`: a call that never returns fails
// its test instead of hanging the suite. `body` returns whether its own checks held (gtest
// assertions do not cross the process boundary; it prints its own diagnostics to stderr).
inline ::testing::AssertionResult FinishesWithin(unsigned seconds, const std::function<bool()>& body) {
#if defined(__unix__)
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return ::testing::AssertionFailure() << "fork failed";
  if (pid == 0) {
    alarm(seconds);
    const bool ok = body();
    std::fflush(nullptr);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return ::testing::AssertionFailure() << "waitpid failed";
  if (WIFSIGNALED(status)) {
    if (WTERMSIG(status) == SIGALRM) {
      return ::testing::AssertionFailure() << "did not finish within " << seconds << " s";
    }
    return ::testing::AssertionFailure() << "child killed by signal " << WTERMSIG(status);
  }
  if (WEXITSTATUS(status) != 0) return ::testing::AssertionFailure() << "checks failed (see stderr)";
  return ::testing::AssertionSuccess();
#else
  return body() ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "checks failed";
#endif
}

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kMax = std::numeric_limits<float>::max();
inline constexpr float kMinNormal = std::numeric_limits<float>::min();

}  // namespace qct
