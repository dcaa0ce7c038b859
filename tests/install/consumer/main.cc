// Consumer of the installed package: burn's published q8s vector through the reference and the
// optimized library, and the plugin header compiles.
#include <cstdio>
#include <vector>

#include "qconform/implementation.h"
#include "qconform/optimized.h"
#include "qconform/plugin.h"
#include "qconform/reference.h"

int main() {
  const auto scheme = qconform::parse_scheme("value=q8s,store=native").value();
  const std::vector<std::size_t> shape{4};
  const std::vector<float> data{-1.8f, -1.0f, 0.0f, 0.5f}, scales{0.014173228f};
  const auto r = qconform::quantize(scheme, shape, data, scales, std::nullopt);
  const auto o = qconform::optimized::quantize(scheme, shape, data, scales, std::nullopt);
  const std::vector<std::int32_t> want{-127, -71, 0, 35};  // burn's test_int8_symmetric_quantization
  if (!r.ok() || !o.ok() || r->codes != want || o->codes != want) return 1;
  if (qconform::available_implementations().empty() || QCONFORM_PLUGIN_ABI_VERSION != 1) return 1;
  std::puts("consumer ok");
  return 0;
}
