// Decoding fuzz corpus files for people and tools (`qconform decode FILE`): what scheme, shape,
// scales, global, table and data a file stands for, and what the reference answers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "qconform/errors.h"

namespace qconform::fuzz {

// A file of corpus/scheme_qparams/: the scheme text, shape, scales (hex floats), global, lookup
// table and data it decodes to, and the reference's result for it.
[[nodiscard]] std::string describe(std::span<const std::uint8_t> bytes);

// The same for the input format of any fuzz target (see target_names()); an unknown name gives
// a one-line message listing the known ones.
[[nodiscard]] std::string describe(std::string_view target, std::span<const std::uint8_t> bytes);

// Every fuzz target, in the order fuzz/CMakeLists.txt registers them.
[[nodiscard]] std::span<const std::string_view> target_names() noexcept;

// The error kind the reference gives for `bytes` read as `target`'s input (nullopt: success or a
// target without a single error outcome, such as minifloat). For target_bits: the reference's
// quantize of the case, as if the target value were a runnable one.
[[nodiscard]] std::optional<ErrorKind> reference_outcome(std::string_view target,
                                                         std::span<const std::uint8_t> bytes);

}  // namespace qconform::fuzz
