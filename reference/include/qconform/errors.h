// Typed errors of SPEC §3 and §7: one kind per distinct failure, never a crash or an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace qconform {

// X-macro registry of every error kind, in the precedence order of SPEC §3 (then §7, §8).
// Adding a kind is one line here; names, parsing and the docs table all follow from it.
#define QCONFORM_ERROR_KINDS(X)                               \
  X(invalid_scheme, "invalid-scheme")                         \
  X(invalid_block_size, "invalid-block-size")                 \
  X(unsupported_scale_dtype, "unsupported-scale-dtype")       \
  X(narrow_global_scale, "narrow-global-scale")               \
  X(block_scale_too_wide, "block-scale-too-wide")             \
  X(unsupported_store, "unsupported-store")                   \
  X(unsupported_lookup_scheme, "unsupported-lookup-scheme")   \
  X(absmean_two_level, "absmean-two-level")                   \
  X(missing_global_scale, "missing-global-scale")             \
  X(unexpected_global_scale, "unexpected-global-scale")       \
  X(shape_overflow, "shape-overflow")                         \
  X(shape_mismatch, "shape-mismatch")                         \
  X(block_rank_exceeds_tensor, "block-rank-exceeds-tensor")   \
  X(packing_dim_out_of_range, "packing-dim-out-of-range")     \
  X(block_not_divisible, "block-not-divisible")               \
  X(truncated_buffer, "truncated-buffer")                     \
  X(trailing_bytes, "trailing-bytes")                         \
  X(scale_count_mismatch, "scale-count-mismatch")             \
  X(invalid_scale, "invalid-scale")                           \
  X(invalid_global_scale, "invalid-global-scale")             \
  X(missing_lookup_table, "missing-lookup-table")             \
  X(unexpected_lookup_table, "unexpected-lookup-table")       \
  X(lookup_table_size, "lookup-table-size")                   \
  X(invalid_lookup_table, "invalid-lookup-table")             \
  X(invalid_code, "invalid-code")                             \
  X(nan_input, "nan-input")                                   \
  X(calibration_overflow, "calibration-overflow")

enum class ErrorKind : std::uint8_t {
#define QCONFORM_X(id, name) id,
  QCONFORM_ERROR_KINDS(QCONFORM_X)
#undef QCONFORM_X
  // Not a SPEC kind and never returned by the reference: an implementation under test (a
  // plugin) crashed, timed out, wrote past its buffer or answered inconsistently.
  implementation_fault = 255,
};

inline constexpr std::pair<ErrorKind, std::string_view> kErrorKinds[] = {
#define QCONFORM_X(id, name) {ErrorKind::id, name},
    QCONFORM_ERROR_KINDS(QCONFORM_X)
#undef QCONFORM_X
};

// The kebab-case name every interface prints.
[[nodiscard]] std::string_view to_string(ErrorKind kind) noexcept;
[[nodiscard]] std::optional<ErrorKind> error_kind_from_string(std::string_view name) noexcept;

struct [[nodiscard]] Error {
  ErrorKind kind;
  std::string message;  // names the offending part: index, value, scheme
};

// A value or a typed error (C++20 has no std::expected).
template <class T>
class [[nodiscard]] Result {
 public:
  // By reference, not by value: a large T (Layout) is then copied once, not twice.
  Result(const T& value) : v_(value) {}              // NOLINT: implicit by design
  Result(T&& value) : v_(std::move(value)) {}        // NOLINT
  Result(Error error) : v_(std::move(error)) {}      // NOLINT
  [[nodiscard]] bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  [[nodiscard]] const Error& error() const& { return std::get<1>(v_); }
  [[nodiscard]] ErrorKind kind() const { return std::get<1>(v_).kind; }
  const T* operator->() const { return &std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success or a typed error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : e_(std::move(error)) {}  // NOLINT
  [[nodiscard]] bool ok() const noexcept { return !e_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] const Error& error() const& { return *e_; }
  [[nodiscard]] ErrorKind kind() const { return e_->kind; }

 private:
  std::optional<Error> e_;
};

}  // namespace qconform
