// The optimized library on one SIMD target, behind the Implementation interface.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qconform/implementation.h"

namespace qconform::detail {

std::vector<std::unique_ptr<Implementation>> optimized_implementations();
std::unique_ptr<Implementation> make_optimized(std::string_view name);
std::vector<std::string> optimized_names();

}  // namespace qconform::detail
