// Plugins with realistic bugs for the loader tests, one per QCONFORM_BUG value:
// 1 crashes on 4-bit values, 2 writes one byte past out_capacity, 3 rounds ties to even,
// 4 hangs, 5 reports a kind that does not exist, 6 quantizes right but its dequantize trusts the
// bytes' codes: a q8s -128 (or any code quantize never writes) decodes instead of invalid-code.
// 1 to 5 fail every dequantize with invalid-code.
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "qconform/plugin.h"
#include "qconform/reference.h"

namespace {

int fail(qconform_result* result, const char* kind) {
  std::strncpy(result->error_kind, kind, sizeof result->error_kind - 1);
  result->size = 0;
  return 1;
}

int buggy_quantize(const char* scheme, const size_t* shape, size_t rank, const float* input, size_t count,
                   const float* scales, size_t scale_count, const float* global, uint8_t* out, size_t out_capacity,
                   qconform_result* result) {
  const auto s = qconform::parse_scheme(scheme);
  if (!s.ok()) return fail(result, "invalid-scheme");
  if (QCONFORM_BUG == 1 && qconform::info(s->value).bits == 4) {
    // A crash: SIGSEGV with its default action, as a stray store would end. (A real null store
    // is undefined behaviour, which UBSan reports and ends the worker with an exit status instead,
    // and ASan's own SIGSEGV handler does the same.)
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
  if (QCONFORM_BUG == 4) {
    // A hang with a side effect in the loop: an empty infinite loop is undefined behaviour in
    // C++, and clang removed it (this plugin then returned at once, with a garbage result).
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::vector<std::size_t> dims(shape, shape + rank);
  auto t = qconform::quantize(s.value(), dims, {input, count}, {scales, scale_count},
                              global ? std::optional<float>(*global) : std::nullopt);
  if (!t.ok()) return fail(result, QCONFORM_BUG == 5 ? "something-went-wrong" : std::string(qconform::to_string(t.kind())).c_str());
  if (QCONFORM_BUG == 3 && !qconform::info(s->value).minifloat) {
    // Round half to even where the reference rounded half away (a real AVX2 shortcut).
    const auto l = qconform::make_layout(s.value(), dims).value();
    for (std::size_t i = 0; i < count; ++i) {
      const float eff = qconform::effective_scale(t.value().scales[qconform::block_of(l, i)], t.value().global);
      const float y = input[i] / eff;
      if (std::fabs(y - std::trunc(y)) == 0.5f && std::fabs(y) < 100.0f) t.value().codes[i] = static_cast<std::int32_t>(std::nearbyint(y));
    }
  }
  const auto bytes = qconform::serialize(t.value());
  if (!bytes.ok()) return fail(result, std::string(qconform::to_string(bytes.kind())).c_str());
  if (bytes->size() > out_capacity) return -1;
  if (!bytes->empty()) std::memcpy(out, bytes->data(), bytes->size());  // (out may be null when empty)
  if (QCONFORM_BUG == 2) out[out_capacity] = 0xFF;  // one past the end
  result->size = bytes->size();
  result->error_kind[0] = '\0';
  return 0;
}

int buggy_dequantize(const char* scheme, const size_t* shape, size_t rank, const uint8_t* bytes, size_t size,
                     float* out, size_t out_capacity, qconform_result* result) {
  if (QCONFORM_BUG != 6) return fail(result, "invalid-code");
  const auto s = qconform::parse_scheme(scheme);
  if (!s.ok()) return fail(result, "invalid-scheme");
  const std::vector<std::size_t> dims(shape, shape + rank);
  auto t = qconform::parse(s.value(), dims, {bytes, size});
  if (!t.ok() && t.kind() == qconform::ErrorKind::invalid_code) {
    // The bug: re-read the codes without the canonical-code check (a lax unpacker), keeping the
    // scales parse accepted. Rebuild the tensor from the storage bytes, sign-extending fields.
    const auto l = qconform::make_layout(s.value(), dims).value();
    std::vector<std::uint8_t> fixed(bytes, bytes + size);
    const qconform::ValueInfo& vi = qconform::info(s->value);
    if (!vi.minifloat && vi.bits == 8 && s->store.kind != qconform::StoreKind::packed_u32) {
      for (std::size_t i = 0; i < l.storage_bytes; ++i) {
        if (fixed[i] == 0x80) fixed[i] = 0x81;  // -128 read as -127: "close enough"
      }
    }
    t = qconform::parse(s.value(), dims, fixed);
  }
  if (!t.ok()) return fail(result, std::string(qconform::to_string(t.kind())).c_str());
  const auto values = qconform::dequantize(t.value());
  if (!values.ok()) return fail(result, std::string(qconform::to_string(values.kind())).c_str());
  if (values->size() > out_capacity) return -1;
  if (!values->empty()) std::memcpy(out, values->data(), values->size() * sizeof(float));
  result->size = values->size();
  result->error_kind[0] = '\0';
  return 0;
}

const qconform_plugin kPlugin = {QCONFORM_PLUGIN_ABI_VERSION, "buggy", &buggy_quantize, &buggy_dequantize};

}  // namespace

extern "C" __attribute__((visibility("default"))) const qconform_plugin* qconform_plugin_v1(void) { return &kPlugin; }
