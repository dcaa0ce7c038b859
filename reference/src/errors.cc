// Error kind names (SPEC §3): the registry in errors.h is the single source.
#include "qconform/errors.h"

namespace qconform {

std::string_view to_string(ErrorKind kind) noexcept {
  for (const auto& [k, name] : kErrorKinds) {
    if (k == kind) return name;
  }
  if (kind == ErrorKind::implementation_fault) return "implementation-fault";
  return "unknown-error";
}

std::optional<ErrorKind> error_kind_from_string(std::string_view name) noexcept {
  if (name == "implementation-fault") return ErrorKind::implementation_fault;
  for (const auto& [k, n] : kErrorKinds) {
    if (n == name) return k;
  }
  return std::nullopt;
}

}  // namespace qconform
