// The registry of implementations under test: the reference and, when built, every SIMD target.
#include "qconform/implementation.h"

#if QCONFORM_HAVE_OPTIMIZED
#include "optimized_adapter.h"
#endif

namespace qconform {

std::vector<std::unique_ptr<Implementation>> available_implementations() {
  std::vector<std::unique_ptr<Implementation>> out;
  out.push_back(std::make_unique<ReferenceImplementation>());
#if QCONFORM_HAVE_OPTIMIZED
  for (auto& impl : detail::optimized_implementations()) out.push_back(std::move(impl));
#endif
  return out;
}

std::unique_ptr<Implementation> make_implementation(std::string_view name) {
  if (name == "reference") return std::make_unique<ReferenceImplementation>();
#if QCONFORM_HAVE_OPTIMIZED
  return detail::make_optimized(name);
#else
  return nullptr;
#endif
}

std::vector<std::string> implementation_names() {
  std::vector<std::string> names{"reference"};
#if QCONFORM_HAVE_OPTIMIZED
  for (auto& n : detail::optimized_names()) names.push_back(n);
#endif
  return names;
}

}  // namespace qconform
