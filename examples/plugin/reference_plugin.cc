// An example qconform plugin: the reference quantizer behind the C ABI of qconform/plugin.h.
// Build it as a shared library and run `qconform run --impl ./libqconform_example_plugin.so`.
// A plugin for another library has the same shape: parse the scheme text, run the kernel,
// write the serialized layout of SPEC §7 or name the error kind.
#include <cstring>
#include <string>
#include <vector>

#include "qconform/plugin.h"
#include "qconform/reference.h"

namespace {

int fail(qconform_result* result, qconform::ErrorKind kind) {
  const std::string_view name = qconform::to_string(kind);
  std::memset(result->error_kind, 0, sizeof result->error_kind);
  std::memcpy(result->error_kind, name.data(), std::min(name.size(), sizeof result->error_kind - 1));
  result->size = 0;
  return 1;
}

int example_quantize(const char* scheme, const size_t* shape, size_t rank, const float* input, size_t count,
                     const float* scales, size_t scale_count, const float* global, uint8_t* out,
                     size_t out_capacity, qconform_result* result) {
  const auto s = qconform::parse_scheme(scheme);
  if (!s.ok()) return fail(result, s.kind());
  const std::vector<std::size_t> dims(shape, shape + rank);
  const auto t = qconform::quantize(s.value(), dims, {input, count}, {scales, scale_count},
                                    global ? std::optional<float>(*global) : std::nullopt);
  if (!t.ok()) return fail(result, t.kind());
  const auto bytes = qconform::serialize(t.value());
  if (!bytes.ok()) return fail(result, bytes.kind());
  if (bytes->size() > out_capacity) return -1;
  if (!bytes->empty()) std::memcpy(out, bytes->data(), bytes->size());  // (out may be null when empty)
  result->size = bytes->size();
  result->error_kind[0] = '\0';
  return 0;
}

int example_dequantize(const char* scheme, const size_t* shape, size_t rank, const uint8_t* bytes, size_t size,
                       float* out, size_t out_capacity, qconform_result* result) {
  const auto s = qconform::parse_scheme(scheme);
  if (!s.ok()) return fail(result, s.kind());
  const std::vector<std::size_t> dims(shape, shape + rank);
  const auto t = qconform::parse(s.value(), dims, {bytes, size});
  if (!t.ok()) return fail(result, t.kind());
  const auto values = qconform::dequantize(t.value());
  if (!values.ok()) return fail(result, values.kind());
  if (values->size() > out_capacity) return -1;
  if (!values->empty()) std::memcpy(out, values->data(), values->size() * sizeof(float));
  result->size = values->size();
  result->error_kind[0] = '\0';
  return 0;
}

const qconform_plugin kPlugin = {QCONFORM_PLUGIN_ABI_VERSION, "example-reference", &example_quantize,
                                 &example_dequantize};

}  // namespace

extern "C" __attribute__((visibility("default"))) const qconform_plugin* qconform_plugin_v1(void) { return &kPlugin; }
