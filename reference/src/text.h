// Text for error messages: floats as C99 hex floats, exact and unambiguous.
#pragma once

#include <cstdio>
#include <string>

namespace qconform::detail {

inline std::string hexf(float x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(x));
  return buf;
}

}  // namespace qconform::detail
