// Plain job descriptions passed from the dispatching wrappers (optimized.cc) to the per-target
// kernels (quantize-inl.h), and the scalar helpers both share. No SIMD types (Highway's target
// bits only).
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "hwy/detect_targets.h"
#include "qconform/reference.h"

namespace qconform::optimized::detail {

// Whether the single-pass loops prefetch far ahead into L2 (quantize-inl.h's PrefetchFar): 0 not
// decided yet, 1 on, 2 off. set_far_prefetch (optimized.h) sets it; DecideFarPrefetch
// (optimized.cc) sets it for this CPU the first time a loop asks while it is 0. One relaxed load
// per loop: the kernels read it once before their lines.
inline std::atomic<std::uint8_t> g_far_prefetch{0};
bool DecideFarPrefetch();
inline bool FarPrefetchOn() {
  const std::uint8_t m = g_far_prefetch.load(std::memory_order_relaxed);
  return m == 0 ? DecideFarPrefetch() : m == 1;
}

// Where calibrate+quantize's codes pass prefetches the next chunk's input (GridCodes, from
// kFarPrefetchBytes of input on): 0 not decided yet, 1 into L1 on the AVX-512 targets and into L2
// on the others, 2 into L2 on every target, 3 into L1 on every target. set_chunk_prefetch
// (optimized.h) sets it; DecideChunkPrefetch (optimized.cc) sets it for this CPU the first time a
// kernel asks while it is 0. Read once per call.
inline std::atomic<std::uint8_t> g_chunk_prefetch{0};
std::uint8_t DecideChunkPrefetch();
// Whether the kernels of `target` (Highway target bits) prefetch the next chunk into L1 now.
inline bool ChunkPrefetchL1(std::int64_t target) {
  std::uint8_t m = g_chunk_prefetch.load(std::memory_order_relaxed);
  if (m == 0) m = DecideChunkPrefetch();
  return m == 3 || (m == 1 && (target & (HWY_AVX3 | HWY_AVX3_DL)) != 0);
}

// Rows are the lines along the last axis of a row-major tensor (rank 0: one row of one element).
// Every kernel walks rows, and within a row, segments of `b` elements that share one block
// (SPEC §4: a block is a rectangle, so the rows of one block row share their block indices).
struct RowGeometry {
  std::size_t rows = 0;        // elements / n (0 when the tensor is empty)
  std::size_t n = 1;           // last extent (1 for rank 0)
  std::size_t b = 1;           // block extent along the last axis (max(n, 1) when per-tensor)
  std::size_t outer_rank = 0;  // number of axes before the last
  std::size_t shape[kMaxRank] = {};   // outer extents
  std::size_t block[kMaxRank] = {};   // outer block extents (1 when per-tensor)
  std::size_t gstride[kMaxRank] = {}; // grid stride of each outer axis (0 when per-tensor)
};

// Yields, row after row, the flat index of the row's first block, without divisions.
class RowWalker {
 public:
  explicit RowWalker(const RowGeometry& g) : g_(g) {}
  [[nodiscard]] std::size_t base() const { return base_; }
  void next() {
    for (std::size_t d = g_.outer_rank; d-- > 0;) {
      ++coord_[d];
      if (++rem_[d] == g_.block[d]) {
        rem_[d] = 0;
        ++q_[d];
        base_ += g_.gstride[d];
      }
      if (coord_[d] < g_.shape[d]) return;
      base_ -= q_[d] * g_.gstride[d];
      coord_[d] = rem_[d] = q_[d] = 0;
    }
  }

 private:
  const RowGeometry& g_;
  std::size_t base_ = 0;
  std::size_t coord_[kMaxRank] = {}, rem_[kMaxRank] = {}, q_[kMaxRank] = {};
};

// How a row's codes are laid out when the storage is contiguous along the last axis (SPEC §6:
// native, or a packed store with D = 0, or rank 0): `per_byte` codes per byte, the first in the
// low bits, then zero padding up to `row_bytes` (the row's whole units).
struct Packing {
  unsigned bits = 8;
  unsigned per_byte = 1;   // 1, 2 or 4
  std::size_t row_bytes = 0;
};

// What a code means: a signed integer in [lo, hi], a minifloat pattern, or a lookup-table index.
enum class CodeKind : std::uint8_t { integer, minifloat, index };

struct ScaleJob;

struct QuantizeJob {
  const float* x = nullptr;
  RowGeometry geo;
  const float* eff = nullptr;   // effective scale per block (SPEC §5), or
  const ScaleJob* scale_src = nullptr;  // the scales to compute them from, chunk by chunk
  Value value = Value::q8f;
  std::int32_t* codes = nullptr;   // one code per element, or
  std::uint8_t* storage = nullptr; // the value storage, laid out by `pack`
  Packing pack;
};

// One-level per-block minmax calibration fused with quantize: blocks lie along the last axis and
// divide it. Writes the value storage and the encoded stored scales.
struct CalibrateQuantizeJob {
  const float* x = nullptr;
  RowGeometry geo;
  Value value = Value::q8f;
  ScaleDtype dtype = ScaleDtype::f32;
  std::uint8_t* storage = nullptr;
  Packing pack;
  std::uint8_t* scales = nullptr;  // scale_count encoded scales, scale_bytes(dtype) each
};

struct DequantizeJob {
  RowGeometry geo;
  const float* eff = nullptr;                  // effective scale per block, or
  const ScaleJob* scale_src = nullptr;  // the scales to compute them from, chunk by chunk
  Value value = Value::q8f;
  const std::int32_t* codes = nullptr;   // one code per element, or
  const std::uint8_t* storage = nullptr; // the value storage, laid out by `pack`
  Packing pack;
  float* out = nullptr;
};

struct PackJob {
  RowGeometry geo;  // rows and n only
  CodeKind kind = CodeKind::integer;
  Value value = Value::q8f;
  std::int32_t* codes = nullptr;       // unpack writes here; pack reads
  std::uint8_t* storage = nullptr;     // pack writes here; unpack reads
  Packing pack;
};

// Lookup mode (SPEC §5), per element: quantize writes the index of the table entry nearest to
// y = fl(x / eff), dequantize writes eff * table[code]. The nearest entry of a finite y is found by
// thresholds that optimized.cc derives from the table with the reference's own comparison (see
// `lookup_tables` there): the code is index[number of thresholds t <= y], the thresholds ascending
// and padded with +Inf to 2^bits - 1; y = +Inf and -Inf take pos_inf and neg_inf.
struct LookupJob {
  RowGeometry geo;
  const float* eff = nullptr;               // effective scale per block
  unsigned bits = 8;                        // the table has 2^bits entries
  const float* x = nullptr;                 // quantize input
  const float* thresholds = nullptr;        // quantize: 2^bits - 1 entries
  const std::int32_t* index = nullptr;      // quantize: 2^bits entries
  bool index_is_identity = false;           // quantize: index[K] == K for every K (skip it)
  std::int32_t pos_inf = 0, neg_inf = 0;    // quantize
  const float* table = nullptr;             // dequantize: 2^bits entries
  std::int32_t* codes = nullptr;            // quantize writes here; dequantize reads
  float* out = nullptr;                     // dequantize output
};

// Scales of SPEC §2, §3.5 and §7 in bulk. From raw scales (quantize): -0 taken as +0, rejected
// when NaN, infinite or negative, rounded up; from stored patterns (parse): rejected when the
// pattern carries a sign bit or decodes to NaN or infinity. Then, with a global, rejected when
// g * stored overflows; eff = g * stored (or stored), 0 becoming 0.1.
struct ScaleJob {
  ScaleDtype dtype = ScaleDtype::f32;
  std::size_t count = 0;
  const float* raw = nullptr;              // quantize input, or
  const std::uint8_t* encoded = nullptr;   // parse input (scale_bytes(dtype) each, little-endian)
  bool has_global = false;
  float global = 0.0f;                     // valid (checked by the caller) when has_global
  float* stored = nullptr;                 // optional output
  float* eff = nullptr;                    // output
  std::uint8_t* out_encoded = nullptr;     // optional output (from raw only)
};

// Max of |x| per block as f32 bit patterns (NaN above Inf above every finite value).
struct AbsMaxJob {
  const float* x = nullptr;
  RowGeometry geo;
  std::uint32_t* amax = nullptr;  // scale_count entries, zero on entry
};

// SPEC §2 round-up, the same operations as the reference's round_up_scale but without its
// per-call environment guard (the entry points hold one). s >= 0, not NaN; never ue8m0.
inline float round_up(float s, ScaleDtype dtype) {
  switch (dtype) {
    case ScaleDtype::f32:
    case ScaleDtype::ue8m0: return s;
    default: break;
  }
  const float max = dtype == ScaleDtype::f16 ? 65504.0f : dtype == ScaleDtype::bf16 ? 0x1.fep127f : 448.0f;
  if (s >= max) return max;
  if (dtype == ScaleDtype::f16 && s < 0x1p-14f) return std::ceil(s * 0x1p24f) * 0x1p-24f;
  if (dtype == ScaleDtype::ue4m3 && s < 0x1p-6f) return std::ceil(s * 0x1p9f) * 0x1p-9f;
  const std::uint32_t step = dtype == ScaleDtype::f16 ? (1u << 13) : dtype == ScaleDtype::bf16 ? (1u << 16) : (1u << 20);
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(s) + step - 1) & ~(step - 1));
}

// Little-endian stores of encoded scales and the global (SPEC §7).
inline void store_le(std::uint8_t* p, std::uint32_t v, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// The value of each 4-bit field (index: the field, the nibble), for the AVX-512 and AVX2 lookups of
// quantize-inl.h's DequantizeValue: e2m1 as OCP MX (sign in bit 3, so the first 8 are the
// magnitudes), the 4-bit integers as two's complement (exact as floats, as ConvertTo is).
alignas(64) inline constexpr std::array<float, 16> kE2m1Values = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                                                 -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
alignas(64) inline constexpr std::array<float, 16> kInt4Values = {0.0f,  1.0f,  2.0f,  3.0f,  4.0f,  5.0f,  6.0f,  7.0f,
                                                                 -8.0f, -7.0f, -6.0f, -5.0f, -4.0f, -3.0f, -2.0f, -1.0f};

// One target's exported kernels (quantize-inl.h), for a target compiled in a translation unit
// of its own (emu128.cc) rather than by foreach_target.h in optimized.cc. Each member is named
// after its kernel, so that a call reads the same through this table as through HWY_EXPORT's.
struct KernelTable {
  bool (*QuantizeRows)(const QuantizeJob&);
  bool (*DequantizeRows)(const DequantizeJob&);
  bool (*CalibrateQuantizeRows)(const CalibrateQuantizeJob&);
  void (*AbsMaxRows)(const AbsMaxJob&);
  bool (*Scales)(const ScaleJob&);
  bool (*PackRows)(const PackJob&);
  bool (*UnpackRows)(const PackJob&);
  bool (*LookupQuantizeRows)(const LookupJob&);
  bool (*LookupDequantizeRows)(const LookupJob&);
  void (*Ceiling4to1)(const float*, std::uint8_t*, std::size_t);
  void (*Ceiling1to4)(const std::uint8_t*, float*, std::size_t);
  std::int64_t (*TargetOfThisCode)();
};

extern const KernelTable kEmu128Kernels;  // emu128.cc, when built (QCONFORM_EMU128_UNIT)

}  // namespace qconform::optimized::detail
