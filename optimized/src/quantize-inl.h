// Per-target kernels of qconform::optimized (Highway): quantize, dequantize, calibration maxima,
// pack/unpack and the bandwidth ceilings. Included once per target by optimized.cc through
// foreach_target.h; callers never see a vector type.
//
// Exactness rules (SPEC §5, STYLE.md): y = x / eff is a true IEEE division per lane, or, where
// the block's 1 / eff is a normal float, x * fl(1 / eff) whenever that provably gives the same code
// (QuantizeVecRcp: lanes near a rounding boundary are recomputed with the division); NaN lanes are
// zeroed before any float->int conversion and reported separately; integer codes are clamped to
// [lo, hi] before the (then always defined) truncating conversion, and rounded half away from zero
// on the exact fraction; minifloats are rounded with integer operations on the f32 bits exactly as
// numeric.cc's round_magnitude does. The last elements of a segment run the same full-vector code
// on a zero-padded copy, so there is no separate scalar definition to keep in step.

#if defined(QCONFORM_OPTIMIZED_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef QCONFORM_OPTIMIZED_QUANTIZE_INL_H_
#undef QCONFORM_OPTIMIZED_QUANTIZE_INL_H_
#else
#define QCONFORM_OPTIMIZED_QUANTIZE_INL_H_
#endif

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels.h"

#ifndef QCONFORM_INLINE_LAMBDA
// Written after a lambda's parameters: GCC and Clang inline its every call.
#define QCONFORM_INLINE_LAMBDA __attribute__((always_inline))
#endif

HWY_BEFORE_NAMESPACE();
namespace qconform::optimized::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using detail::AbsMaxJob;
using detail::CalibrateQuantizeJob;
using detail::DequantizeJob;
using detail::LookupJob;
using detail::PackJob;
using detail::QuantizeJob;
using detail::RowGeometry;
using detail::RowWalker;

// Elements per chunk of a row: the scratch buffers below stay in L1.
inline constexpr std::size_t kChunk = 2048;
// The fused calibrate+quantize reads each chunk twice, the second time from L1 (maxima, then
// codes): chunks of 16 KiB halve its per-chunk work against kChunk's 8 KiB while the input is
// cached (512 KiB and 1 MiB, input 16 bytes past a line: 0.084 -> 0.079 and 0.085 -> 0.081
// ns/element), but from beyond the L2 (4 MiB and more) the longer codes pass leaves memory idle
// for longer (0.152 -> 0.156 at 4 MiB; at 256 MiB, paired with the ceiling, 0.85 -> 0.81 of it).
// So inputs above kFusedSmallBytes take kChunk.
inline constexpr std::size_t kFusedChunk = 4096;
inline constexpr std::size_t kFusedSmallBytes = std::size_t{2} << 20;
// Inputs from which calibrate+quantize's codes pass prefetches the next chunk into L2. Below, in
// L2 or L3, the prefetches cost more than they save: on the Zen 4 of session 14 (32 MiB L3),
// interleaved A/B against no such prefetch, 1.03 in time at 4 MiB and 1.01 at 8 MiB, 0.81 at 16
// and 32 MiB. (The output is streamed from 64 MiB of input on, kStreamBytes.)
inline constexpr std::size_t kFarPrefetchBytes = std::size_t{16} << 20;
// Inputs from which, below kFarPrefetchBytes, calibrate+quantize's codes pass prefetches the
// whole next chunk into L1 where ChunkPrefetchL1 says L1 (the AVX-512 targets of the Zen 5):
// otherwise the maxima pass waits on L2 or L3 for every line, and the two passes add up. On the
// Zen 5 of session 49, avx3_dl, three alternations (x ceiling, medians): 0.482 -> 0.548 at 512
// KiB, 0.502 -> 0.561 at 128 KiB, 0.545 -> 0.622 at 2 MiB, 0.528 -> 0.637 at 4 MiB, 0.580 ->
// 0.681 at 12 MiB, 1 MiB within the noise; from 1040 elements into the chunk (as the far path)
// instead of its first line, less (0.526 at 512 KiB); on avx2 neutral to worse (0.37 -> 0.34 at
// 512 KiB), which ChunkPrefetchL1 leaves out. Smaller inputs stay in L1.
inline constexpr std::size_t kNearChunkPrefetchBytes = std::size_t{64} << 10;
// Inputs from which calibrate+quantize's maxima pass loads aligned vectors when the input is not
// 64-byte aligned (AVX-512: AbsMaxGroups' kAligned form). Each unaligned 512-bit load then spans
// two cache lines, which the load ports serve as two accesses; aligned loads take one more
// vrangeps per block instead. On the Emerald Rapids Xeon of session 39, input 16 bytes past a
// line (as std::vector gives): 5 to 6 % less time from 64 KiB to 1 MiB, 4 to 5 % more at 16 and
// 32 KiB, where the two passes hit L1 and the extra operations cost more than the accesses.
// Below kFarPrefetchBytes only: from DRAM the pass is bound by memory, and two full bench runs
// gave calibrate+quantize 0.961 and 0.943 of the ceiling at 256 MiB with it, against 0.962 to
// 0.996 over four runs of session 38 without; alternated six times in session 39, 0.931 to
// 0.982 with and 0.910 to 0.975 without: no difference this host can show, so the form measured
// longer stays there.
inline constexpr std::size_t kAlignedMaximaBytes = std::size_t{32} << 10;
// Input elements read ahead of the quantize loop: the arithmetic keeps a core busy enough that the
// hardware prefetcher alone leaves DRAM idle between requests. Not a multiple of 4 KiB, so the
// prefetch and the load 4 KiB behind it do not share their page offset (one A/B run was faster in
// L1 with this distance; L1 figures are noisy, see bench/README.md).
inline constexpr std::size_t kPrefetch = 1040;

// Prefetch every cache line of [p + ahead, p + ahead + bytes) that lies before `end`, p <= end
// (no pointer is formed past it). kL2: into L2 only (prefetcht1 on x86), for lines that a later
// pass prefetches again into L1: a prefetch into L1 holds one of the L1's few miss buffers for
// the whole DRAM latency (on the Zen 4 of session 14 calibrate+quantize's far prefetches, into
// L1, ran at about 12 GB/s of input against the ceiling's 17 to 19; see optimized/README.md).
template <bool kL2 = false>
HWY_INLINE void PrefetchBytes(const void* p, std::size_t ahead, std::size_t bytes, const void* end) {
  const char* c = static_cast<const char*>(p);
  const std::size_t stop = std::min(ahead + bytes, static_cast<std::size_t>(static_cast<const char*>(end) - c));
  for (std::size_t i = ahead; i < stop; i += 64) {
    if constexpr (kL2) {
      __builtin_prefetch(c + i, 0, 2);  // read, moderate locality: prefetcht1 (GCC and clang)
    } else {
      hwy::Prefetch(c + i);
    }
  }
}

// The lines that calibrate+quantize's codes pass prefetches for the next chunk (GridCodes):
// `lines` lines from `at` (none when it is null), into L1 when `l1`, else into L2. Whole lines of
// the tensor only: at + 16 * lines, the end GridCodes forms, is at most one past its last element
// (a partial last line is left to the hardware).
struct NextChunkPrefetch {
  const float* at = nullptr;
  std::size_t lines = 0;
  bool l1 = false;
};

// Floats per cache line: the group loops prefetch once per line (on AVX2, once per vector had
// been twice per line, and a quarter of the instructions of quantize e4m3's group loop).
inline constexpr std::size_t kLineFloats = 64 / sizeof(float);

// Prefetch of x[min(i + kPrefetch, last)], `last` the index of the tensor's last element relative
// to x: no pointer is formed past the tensor, and near its end the last line is fetched again
// (harmless), for an add and a minimum instead of a branch.
HWY_INLINE void PrefetchAhead(const float* x, std::size_t i, std::size_t last) {
  hwy::Prefetch(x + std::min(i + kPrefetch, last));
}

// The single-pass loops (quantize with given scales, and the 4-to-1 ceiling) also prefetch into
// L2 (prefetcht1) the line kFarAhead elements past the near prefetch, while at least kFarFloats
// of the tensor lie ahead: the near prefetch (into L1, kPrefetch ahead) then finds its line in L2
// or on its way, and holds one of the L1's few miss buffers for an L2 hit instead of a memory
// latency. On the Emerald Rapids Xeon of session 42, at 256 MiB (fresh buffers per round, each
// pass paired with the ceiling as it was): quantize q8s per-tensor 0.87 -> 0.98 of it, q4s
// two-level 0.80 to 0.83 -> 0.91 to 0.93, nvfp4 0.83 to 0.85 -> 0.93 to 0.94, e4m3 0.86 to 0.87
// -> 0.94 to 0.96; 2048, 8192 and 16384 instead of 4096 within 0.02 of it, 1024 less; the same
// lines prefetched as one burst at each chunk's start: 0.70 to 0.91, worse than none. A loop of
// the ceiling's with them ran 1.06 to 1.09x faster than without, so the ceiling has them too.
// In the caches (less than kFarFloats ahead) one predicted branch per line, or per block or call
// where that cost (BlockVectors, QuantizeBlockRange). On the AMD Zen 5 of session 43 the same
// loops ran faster without them (quantize at 256 MiB in 0.77 to 0.97 of the time, once 1.08, the
// ceiling in 0.78 to 0.94; alternated runs of one binary), so they run only where FarPrefetchOn says
// (kernels.h: Intel CPUs unless set_far_prefetch says otherwise).
inline constexpr std::size_t kFarAhead = 4096;
inline constexpr std::size_t kFarFloats = kFarPrefetchBytes / sizeof(float);
static_assert(kFarFloats > kPrefetch + kFarAhead, "the far line lies within the tensor");
// Where far prefetches are off for this CPU (FarPrefetchOn, kernels.h), 0; else the first index i
// from which fewer than kFarFloats of the tensor lie ahead, `last` the index of its last element:
// i < FarEnd(last) exactly when i + kFarFloats <= last. A loop computes it once, before its lines.
HWY_INLINE std::size_t FarEnd(std::size_t last) {
  return last >= kFarFloats && detail::FarPrefetchOn() ? last - kFarFloats + 1 : 0;
}
// x[i + kPrefetch + kFarAhead] into L2, where the caller knows that i < FarEnd(last) (the line
// then lies within the tensor).
HWY_INLINE void PrefetchFarAt(const float* x, std::size_t i) { __builtin_prefetch(x + i + kPrefetch + kFarAhead, 0, 2); }
// PrefetchFarAt when i < far_end = FarEnd(last): no pointer past the tensor.
HWY_INLINE void PrefetchFar(const float* x, std::size_t i, std::size_t far_end) {
  if (i < far_end) PrefetchFarAt(x, i);  // prefetcht1 on x86
}
// PrefetchAhead and PrefetchFar.
HWY_INLINE void PrefetchNearFar(const float* x, std::size_t i, std::size_t last, std::size_t far_end) {
  PrefetchAhead(x, i, last);
  PrefetchFar(x, i, far_end);
}

// Outputs of at least this many bytes are written with streaming stores (dequantize, quantize,
// calibrate+quantize and both ceilings): beyond the last-level cache share of a core, where a line
// read for ownership before being overwritten doubles the traffic of a float output and adds a
// quarter to that of a 4-to-1 stream (whose streaming ceiling is 20 to 25 % faster here).
inline constexpr std::size_t kStreamBytes = std::size_t{16} << 20;

// How many floats from dst on come before a vector-aligned address (where streaming stores may
// start), or -1 when dst is not even float-aligned.
HWY_INLINE std::ptrdiff_t StreamHead(const float* dst, std::size_t lanes) {
  const std::size_t off = reinterpret_cast<std::uintptr_t>(dst) % (lanes * sizeof(float));
  if (off % sizeof(float) != 0) return -1;
  return static_cast<std::ptrdiff_t>(off == 0 ? 0 : (lanes * sizeof(float) - off) / sizeof(float));
}

// dst[0..count) = src[0..count) with streaming stores for the vector-aligned part of dst (plain
// stores before and after it, and for all of it if dst is not even float-aligned).
HWY_INLINE void StreamFloats(const float* HWY_RESTRICT src, float* HWY_RESTRICT dst, std::size_t count) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  if (const std::ptrdiff_t head = StreamHead(dst, lanes); head >= 0) {
    for (; i < std::min(count, static_cast<std::size_t>(head)); ++i) dst[i] = src[i];
    for (; i + lanes <= count; i += lanes) hn::Stream(hn::LoadU(d, src + i), d, dst + i);
  }
  for (; i < count; ++i) dst[i] = src[i];
}

// The storage bytes of a quantize call, produced in order a chunk at a time: Next() is where the
// next bytes go and Commit(n) takes n of them. When `stream` (storage of at least kStreamBytes), they
// are produced in an L1 buffer after the bytes left over from the previous chunk (fewer than one
// vector), and every whole vector-aligned vector of the destination goes out with one streaming
// store: no line of the output is read for ownership, and no line is partly written by two chunks
// (that line would be read from memory for the plain store). The bytes before the first aligned
// address and after the last one are plain stores; Finish writes those after the last and fences.
// Otherwise Next is the destination itself. Rows are contiguous, so one stream covers the tensor.
class StorageStream {
 public:
  static constexpr std::size_t kMaxBytes = std::max(kChunk, kFusedChunk);  // per Commit

  StorageStream(std::uint8_t* dst, bool stream) : stream_(stream), dst_(dst) {
    // buf_[lead_] goes to dst_[0]; buf_[0] would go to the vector-aligned address at or before it.
    if (stream_) lead_ = fill_ = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(dst) % kVec);
  }
  StorageStream(const StorageStream&) = delete;
  StorageStream& operator=(const StorageStream&) = delete;

  std::uint8_t* Next() { return stream_ ? buf_ + fill_ : dst_; }

  void Commit(std::size_t n) {
    if (!stream_) {
      dst_ += n;
      return;
    }
    fill_ += n;
    if (fill_ < kVec) return;
    const hn::ScalableTag<std::uint8_t> d8;
    std::size_t k = 0;
    if (lead_ > 0) {  // the bytes before the first aligned address
      std::memcpy(dst_, buf_ + lead_, kVec - lead_);
      dst_ += kVec - lead_;
      lead_ = 0;
      k = kVec;
    }
    for (; k + kVec <= fill_; k += kVec, dst_ += kVec) hn::Stream(hn::Load(d8, buf_ + k), d8, dst_);
    std::memmove(buf_, buf_ + k, fill_ - k);
    fill_ -= k;
  }

  void Finish() {
    if (!stream_) return;
    std::memcpy(dst_, buf_ + lead_, fill_ - lead_);
    hwy::FlushStream();
  }

 private:
  static constexpr std::size_t kVec = hn::MaxLanes(hn::ScalableTag<std::uint8_t>());  // == Lanes on x86
  bool stream_;
  std::uint8_t* dst_;
  std::size_t lead_ = 0;
  std::size_t fill_ = 0;  // bytes in buf_, fewer than kVec between commits
  alignas(HWY_MAX_BYTES) std::uint8_t buf_[kMaxBytes + kVec];
};

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Streamed storage one 64-byte vector at a time, straight from the registers: vector k holds the
// tensor's bytes [64k, 64k + 64), and the destination has `lead` bytes before its first 64-byte
// aligned address. Each vector is spliced with the one before it into the aligned vector they
// share (vpermt2b on AVX3_DL; on AVX3 vpermt2d when lead is a multiple of 4, else two vpermt2q,
// two shifts and an or), stored with one streaming store; the first `lead` bytes and the last
// 64 - lead are plain stores. Where StorageStream produces a chunk in L1 and copies it out, this
// stores each vector once: calibrate+quantize q8s at 256 MiB, 16 bytes past a 64-byte boundary,
// paired with the ceiling, 0.81-0.84 of it through L1 and 0.86-0.90 this way.
class VectorStream {
 public:
  static bool Supported(const std::uint8_t*) { return true; }

  VectorStream(std::uint8_t* dst) : dst_(dst), lead_(static_cast<std::size_t>((64 - reinterpret_cast<std::uintptr_t>(dst) % 64) % 64)) {
#if HWY_TARGET == HWY_AVX3_DL
    alignas(64) std::uint8_t idx[64];
    for (std::size_t i = 0; i < 64; ++i) idx[i] = static_cast<std::uint8_t>(lead_ + i);
    idx_ = _mm512_load_si512(idx);
#else
    alignas(64) std::uint32_t idx[16];
    for (std::size_t i = 0; i < 16; ++i) idx[i] = static_cast<std::uint32_t>(lead_ / 4 + i);
    idx_ = _mm512_load_si512(idx);
    alignas(64) std::uint64_t lo[8], hi[8];
    for (std::size_t i = 0; i < 8; ++i) {
      lo[i] = lead_ / 8 + i;
      hi[i] = lead_ / 8 + i + 1;
    }
    lo_ = _mm512_load_si512(lo);
    hi_ = _mm512_load_si512(hi);
    right_ = _mm512_set1_epi64(static_cast<long long>(lead_ % 8 * 8));
    left_ = _mm512_set1_epi64(static_cast<long long>(64 - lead_ % 8 * 8));
#endif
  }

  // The next 64 bytes of the tensor.
  HWY_INLINE void Put(hn::Vec512<std::uint8_t> v) {
    if (HWY_UNLIKELY(count_ == 0)) {
      alignas(64) std::uint8_t b[64];
      hn::Store(v, hn::Full512<std::uint8_t>(), b);
      std::memcpy(dst_, b, lead_);
    } else {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst_ + lead_ + 64 * (count_ - 1)), Splice(prev_, v.raw));
    }
    prev_ = v.raw;
    ++count_;
  }

  // The bytes of the last vector after the last aligned address, and the fence.
  void Finish() {
    if (count_ > 0) {
      alignas(64) std::uint8_t b[64];
      _mm512_store_si512(b, prev_);
      std::memcpy(dst_ + lead_ + 64 * (count_ - 1), b + lead_, 64 - lead_);
    }
    hwy::FlushStream();
  }

 private:
  // Bytes [lead, lead + 64) of a:b (a first).
  HWY_INLINE __m512i Splice(__m512i a, __m512i b) const {
#if HWY_TARGET == HWY_AVX3_DL
    return _mm512_permutex2var_epi8(a, idx_, b);
#else
    // Whole 4-byte lanes (every output 16-byte aligned, as malloc gives) in one vpermt2d, else
    // qwords shifted by the bytes left over.
    if (lead_ % 4 == 0) return _mm512_permutex2var_epi32(a, idx_, b);
    const __m512i x = _mm512_permutex2var_epi64(a, lo_, b), y = _mm512_permutex2var_epi64(a, hi_, b);
    return _mm512_or_si512(_mm512_srlv_epi64(x, right_), _mm512_sllv_epi64(y, left_));  // a shift of 64 gives 0
#endif
  }

  std::uint8_t* dst_;
  std::size_t lead_;
  std::size_t count_ = 0;
  __m512i prev_ = _mm512_setzero_si512();
#if HWY_TARGET == HWY_AVX3_DL
  __m512i idx_;
#else
  __m512i idx_, lo_, hi_, right_, left_;
#endif
};
#elif HWY_TARGET == HWY_AVX2
// The same for 32-byte vectors, for the two offsets an output takes in practice: 32-byte aligned,
// or 16 bytes past (glibc's large blocks, and every 16-byte-aligned malloc half of the time),
// spliced with one vperm2i128. Other offsets go through StorageStream (Supported is false).
class VectorStream {
 public:
  static bool Supported(const std::uint8_t* dst) { return reinterpret_cast<std::uintptr_t>(dst) % 16 == 0; }

  VectorStream(std::uint8_t* dst) : dst_(dst), lead_(static_cast<std::size_t>((32 - reinterpret_cast<std::uintptr_t>(dst) % 32) % 32)) {}

  // The next 32 bytes of the tensor.
  HWY_INLINE void Put(hn::Vec256<std::uint8_t> v) {
    if (lead_ == 0) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst_ + 32 * count_), v.raw);
    } else if (HWY_UNLIKELY(count_ == 0)) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst_), _mm256_castsi256_si128(v.raw));
    } else {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst_ + 16 + 32 * (count_ - 1)), _mm256_permute2x128_si256(prev_, v.raw, 0x21));
    }
    prev_ = v.raw;
    ++count_;
  }

  // The next 16 bytes of the tensor: every other call puts the two halves as one vector (the
  // caller hands over an even number of halves in all).
  HWY_INLINE void PutHalf(__m128i h) {
    if (!half_) {
      pending_ = h;
      half_ = true;
      return;
    }
    half_ = false;
    Put(hn::Vec256<std::uint8_t>{_mm256_inserti128_si256(_mm256_castsi128_si256(pending_), h, 1)});
  }

  // The bytes of the last vector after the last aligned address, and the fence.
  void Finish() {
    if (lead_ != 0 && count_ > 0) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst_ + 16 + 32 * (count_ - 1)), _mm256_extracti128_si256(prev_, 1));
    }
    hwy::FlushStream();
  }

 private:
  std::uint8_t* dst_;
  std::size_t lead_;  // 0 or 16
  std::size_t count_ = 0;
  __m256i prev_ = _mm256_setzero_si256();
  bool half_ = false;  // pending_ holds a half
  __m128i pending_ = _mm_setzero_si128();
};
#endif

// log2 of the vectors per block when a block is a power-of-two number of whole vectors, else -1:
// such chunks run as one loop over their vectors, each taking its block's scale (a loop per block
// cost as much as its one or two vectors).
HWY_INLINE int VectorsPerBlockLog2(std::size_t b, std::size_t lanes) {
  const std::size_t per_block = b / lanes;
  return b % lanes == 0 && std::has_single_bit(per_block) ? std::countr_zero(per_block) : -1;
}

// A vector constant GCC 12 cannot rematerialize: in the larger loops it rebuilds constants inside
// the loop (a move and a vpbroadcastd from a general register, both on the shuffle port, per use)
// instead of keeping them in one of the 32 vector registers. The empty asm hides the value, so
// the Set is hoisted once and the register kept. No effect on any result.
template <class V>
HWY_INLINE V Hidden(V v) {
#if defined(__GNUC__) && !defined(__clang__) && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  asm("" : "+v"(v.raw));
#else
  asm("" : "+x"(v.raw));
#endif
#endif
  return v;
}

template <class D, typename T>
HWY_INLINE hn::Vec<D> Konst(D d, T value) {
  return Hidden(hn::Set(d, static_cast<hn::TFromD<D>>(value)));
}

// Targets with group kernels (four vectors at a time, from the registers to their stored bytes;
// x86 intrinsics): AVX-512 (64 lanes a group) and AVX2 (32). GroupAcc is a group kernel's running
// u16 maximum (NaN found after a row's groups).
#undef QCONFORM_GROUP_KERNELS
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define QCONFORM_GROUP_KERNELS 1
using GroupAcc = __m512i;
HWY_INLINE GroupAcc GroupAccZero() { return _mm512_setzero_si512(); }
#elif HWY_TARGET == HWY_AVX2
#define QCONFORM_GROUP_KERNELS 1
using GroupAcc = __m256i;
HWY_INLINE GroupAcc GroupAccZero() { return _mm256_setzero_si256(); }
#else
#define QCONFORM_GROUP_KERNELS 0
#endif

// Minifloat boundary margin of the reciprocal path, in f32 patterns (the approximation is within
// 3; crossing a binade can double a distance counted in patterns).
inline constexpr std::int32_t kNearUlps = 16;

// Compile-time facts of a value type (SPEC §1, §5).
template <Value V>
struct Fmt {
  static constexpr bool kMini = info(V).minifloat;
  static constexpr unsigned kBits = info(V).bits;
  static constexpr std::uint32_t kMask = (1u << kBits) - 1;
  static constexpr float kLo = info(V).lo;
  static constexpr float kHi = info(V).hi;
  // Minifloats: sign above `kWidth` magnitude bits.
  static constexpr int kMbits = V == Value::e4m3 ? 3 : V == Value::e5m2 ? 2 : 1;
  static constexpr int kBias = V == Value::e4m3 ? 7 : V == Value::e5m2 ? 15 : 1;
  static constexpr unsigned kWidth = kBits - 1;
  static constexpr std::uint32_t kMagMask = (1u << kWidth) - 1;
  static constexpr std::uint32_t kMaxCode = V == Value::e4m3 ? 0x7Eu : V == Value::e5m2 ? 0x7Bu : 0x7u;
  static constexpr std::int32_t kMaxBits = static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(kHi));
  static constexpr std::int32_t kMinNormalBits = (128 - kBias) << 23;  // 2^(1 - bias)
  // Minifloats: the normal code of an f32 magnitude pattern a is (a + kNormalRound) >> (23 - kMbits)
  // (round at that bit, ties up, and re-bias the exponent in the same add; MagnitudeCode).
  static constexpr std::uint32_t kNormalRound =
      (1u << (22 - kMbits)) - (static_cast<std::uint32_t>(127 - kBias) << 23);
};

// Highway 1.0.3 has >= and <= for floats only; integer forms negate the strict compares.
template <class V>
HWY_INLINE auto IGe(V a, V b) { return hn::Not(hn::Lt(a, b)); }
template <class V>
HWY_INLINE auto ILe(V a, V b) { return hn::Not(hn::Gt(a, b)); }

// ------------------------------------------------------------------ encode (SPEC §5)

// The code of y = x / eff (not NaN), as the reference's quantize_value.
// With kField, integer codes come back offset by 0x4B400000, whose low 22 bits are zero: the low
// `bits` bits (the stored field) are the code's, one subtraction saved.
template <Value V, bool kField = false, class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> Encode(DF df, hn::Vec<DF> y) {
  using F = Fmt<V>;
  const hn::RebindToSigned<DF> di;
  if constexpr (!F::kMini) {
    // Clamp first: ±Inf saturate, and rounding a value strictly inside (lo, hi) never leaves
    // [lo, hi] because lo and hi are integers. Max(NaN, lo) is lo on every Highway 1.0.3 target
    // (x86 max returns its second operand, scalar and emu128 test isnan), so no NaN goes further;
    // NaN input is reported by the caller anyway.
    const auto c = hn::Min(hn::Max(y, hn::Set(df, F::kLo)), hn::Set(df, F::kHi));
    // Half away from zero on the exact value: t = trunc(c), frac = c - t (exact), and
    // trunc(2 * frac) is +1 exactly when frac >= 0.5, -1 when frac <= -0.5, else 0 (all exact).
    const auto t = hn::Trunc(c);
    const auto frac = hn::Sub(c, t);
    const auto r = hn::Add(t, hn::Trunc(hn::Add(frac, frac)));
    // r is an integer in [-128, 127]: adding 1.5 * 2^23 is exact and leaves r in the low
    // mantissa bits, so no float->int conversion (and no rounding mode) is involved.
    const auto biased = hn::BitCast(di, hn::Add(r, hn::Set(df, 0x1.8p23f)));
    if constexpr (kField) {
      return biased;
    } else {
      return hn::Sub(biased, hn::Set(di, 0x4B400000));
    }
  } else {
    const hn::RebindToUnsigned<DF> du;
    constexpr int kS = 23 - F::kMbits;  // f32 mantissa bits dropped for a normal result
    const auto b = hn::BitCast(du, y);
    const auto a = hn::And(b, hn::Set(du, 0x7FFFFFFFu));
    const auto ai = hn::BitCast(di, a);  // >= 0: signed compares order magnitudes
    const auto sign = hn::ShiftLeft<F::kWidth>(hn::ShiftRight<31>(b));
    // Normal result: round the f32 pattern to nearest-even at bit kS; a carry moves into the
    // exponent field, as N = 2^mbits does in round_magnitude. Then re-bias the exponent.
    const auto lsb = hn::And(hn::ShiftRight<kS>(a), hn::Set(du, 1u));
    const auto rounded = hn::ShiftRight<kS>(hn::Add(hn::Add(a, hn::Set(du, (1u << (kS - 1)) - 1u)), lsb));
    const auto normal = hn::Sub(rounded, hn::Set(du, static_cast<std::uint32_t>(127 - F::kBias) << F::kMbits));
    // Subnormal result: m * 2^e at the fixed quantum 2^(emin - mbits), shift = q - e >= 21,
    // clamped at 31 where the result is 0 either way (round_magnitude's shift > 40 case). Lanes
    // with normal results compute garbage here, clamped to [1, 31] so no shift is undefined.
    const auto fexp = hn::ShiftRight<23>(a);
    const auto implicit = hn::IfThenElseZero(hn::Ne(fexp, hn::Zero(du)), hn::Set(du, 0x800000u));
    const auto m = hn::Or(hn::And(a, hn::Set(du, 0x7FFFFFu)), implicit);
    const auto fe1 = hn::BitCast(du, hn::Max(hn::BitCast(di, fexp), hn::Set(di, 1)));
    const auto shift = hn::BitCast(
        du, hn::Min(hn::Max(hn::Sub(hn::Set(di, 151 - F::kBias - F::kMbits), hn::BitCast(di, fe1)), hn::Set(di, 1)),
                    hn::Set(di, 31)));
    const auto half_m1 = hn::Sub(hn::Shl(hn::Set(du, 1u), hn::Sub(shift, hn::Set(du, 1u))), hn::Set(du, 1u));
    const auto lsb2 = hn::And(hn::Shr(m, shift), hn::Set(du, 1u));
    const auto sub = hn::Shr(hn::Add(hn::Add(m, half_m1), lsb2), shift);
    const auto is_sub = hn::RebindMask(du, hn::Lt(ai, hn::Set(di, F::kMinNormalBits)));
    auto mag = hn::IfThenElse(is_sub, sub, normal);
    // Saturate (±Inf included) to ±max, as encode_minifloat does before rounding.
    mag = hn::IfThenElse(hn::RebindMask(du, hn::Gt(ai, hn::Set(di, F::kMaxBits - 1))), hn::Set(du, F::kMaxCode), mag);
    return hn::BitCast(di, hn::Or(mag, sign));
  }
}

// The minifloat code of a magnitude pattern a (an f32 pattern, not NaN), with ties rounded up:
// the reciprocal path calls it only where no tie can matter (QuantizeVecRcp). Normal results round
// the pattern at bit kS and re-bias in one add; subnormal results are fl(|y| + C) with C's ulp the
// format's subnormal quantum, so the pattern of the sum counts quanta above C's (exact, under the
// entry point's round-to-nearest). Saturation (±Inf included) is a minimum: the code is monotonic
// in a. Garbage in lanes whose pattern is NaN or above.
// e2m1's code for every magnitude in each quarter-binade from 2^-2 up (index 1 + 4 (e + 2) + m
// for [2^e (1 + m / 4), 2^e (1 + (m + 1) / 4)); index 0 is everything below 2^-2, 21 and up
// everything from 8). Every midpoint of two e2m1 values (0.25, 0.75, 1.25, 1.75, 2.5, 3.5 and 5)
// starts a quarter-binade, so the code is constant inside each one, away from the midpoints: the
// number of midpoints at or below its lower end.
struct QuarterCodes {
  std::int32_t code[32];
};
constexpr QuarterCodes E2m1QuarterCodes() {
  constexpr float kMidpoints[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  QuarterCodes t{};
  for (int i = 1; i < 32; ++i) {
    float lo = 0.25f;  // 2^-2 * 2^((i - 1) / 4) * (1 + ((i - 1) % 4) / 4), exact
    for (int e = 0; e < (i - 1) / 4; ++e) lo *= 2.0f;
    lo *= 1.0f + static_cast<float>((i - 1) % 4) / 4.0f;
    for (float m : kMidpoints) t.code[i] += m <= lo ? 1 : 0;
  }
  return t;
}

// MagnitudeCode's normal or subnormal code before its saturating minimum: at most 4095 (the
// normal form of a pattern up to 0xFFFFFFFF, shifted by kS >= 20), NaN patterns' above Inf's.
template <Value V, class DU>
HWY_INLINE hn::Vec<DU> MagnitudeCodeUnsaturated(DU du, hn::Vec<DU> a) {
  using F = Fmt<V>;
  const hn::RebindToSigned<DU> di;
  const hn::RebindToFloat<DU> df;
  constexpr int kS = 23 - F::kMbits;
  constexpr std::uint32_t kCBits = static_cast<std::uint32_t>(127 + 1 - F::kBias - F::kMbits + 23) << 23;
  const auto normal = hn::ShiftRight<kS>(hn::Add(a, Konst(du, F::kNormalRound)));
  const auto sub = hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(df, a), Konst(df, std::bit_cast<float>(kCBits)))),
                           Konst(du, kCBits));
  const auto is_sub = hn::Lt(hn::BitCast(di, a), Konst(di, F::kMinNormalBits));
  return hn::IfThenElse(hn::RebindMask(du, is_sub), sub, normal);
}

template <Value V, class DU>
HWY_INLINE hn::Vec<DU> MagnitudeCode(DU du, hn::Vec<DU> a) {
  using F = Fmt<V>;
  const hn::RebindToSigned<DU> di;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (V == Value::e2m1) {
    const hn::RebindToFloat<DU> df;
    // One two-table lookup by quarter-binade (E2m1QuarterCodes): |q| clamped to 8 (NaN lanes
    // become 8: garbage, as allowed), bits 21 up less 499 (saturating at 0 on the 16-bit halves:
    // the pattern's high half is then 0), four operations instead of seven.
    static constexpr QuarterCodes kQuarters = E2m1QuarterCodes();
    const hn::Repartition<std::uint16_t, DU> d16;
    const auto clamped = hn::BitCast(du, hn::Min(hn::BitCast(df, a), Konst(df, 8.0f)));
    const auto idx = hn::SaturatedSub(hn::BitCast(d16, hn::ShiftRight<21>(clamped)), Konst(d16, 499));
    const hn::Full512<std::int32_t> d32;
    const auto lo = Hidden(hn::LoadU(d32, kQuarters.code)), hi = Hidden(hn::LoadU(d32, kQuarters.code + 16));
    return hn::BitCast(du, hn::Vec512<std::int32_t>{_mm512_permutex2var_epi32(lo.raw, hn::BitCast(du, idx).raw, hi.raw)});
  }
#endif
  const auto mag = MagnitudeCodeUnsaturated<V>(du, a);
  return hn::BitCast(du, hn::Min(hn::BitCast(di, mag), Konst(di, static_cast<std::int32_t>(F::kMaxCode))));
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// The lanes of a minifloat magnitude pattern `a` (of q = x * rcp) that the reciprocal path cannot
// trust: a multiple of 2^(kS - 1) at or above half the subnormal quantum lies in (a - 16, a + 16]
// (QuantizeVecRcp gives the argument). The second compare is masked by the first: no kandw.
template <Value V>
HWY_INLINE __mmask16 NearBoundary(__m512i a) {
  using F = Fmt<V>;
  constexpr int kS = 23 - F::kMbits;
  constexpr std::int32_t kHalfQuantumBits = (127 - F::kBias - F::kMbits) << 23;
  const hn::Full512<std::int32_t> di;
  const __m512i a16 = _mm512_add_epi32(a, Konst(di, kNearUlps).raw);
  // (a16 >= kHalfQuantumBits as a16 > kHalfQuantumBits - 1: one compare, no mask negation)
  const __mmask16 above = _mm512_cmpgt_epi32_mask(a16, Konst(di, kHalfQuantumBits - 1).raw);
  return _mm512_mask_cmplt_epi32_mask(above, _mm512_and_si512(a16, Konst(di, (1 << (kS - 1)) - 1).raw),
                                      Konst(di, 2 * kNearUlps).raw);
}
#endif

#if HWY_TARGET == HWY_AVX2
// AVX2's near-boundary test of minifloat magnitude patterns `a` for a group of vectors, without
// mask registers. u = a + 16 and l = a - 16 share their bits from kS - 1 up exactly when no
// multiple of 2^(kS - 1) lies in (l, u] = (a - 16, a + 16], so (u ^ l) >= 2^(kS - 1) flags the
// lanes NearBoundary flags, and more: multiples below half the subnormal quantum, which are no
// boundaries (harmless, as the representable values it flags too). A lane with a < 16 (|q| below
// 2^-145: code 0 either way, QuantizeVecRcp) has l < 0 and u ^ l negative as a signed integer, so
// exact zeros are not flagged. Nor is the largest value: `a` is first clamped to T, halfway between
// the largest minifloat's pattern and that of the last midpoint below it (2^(kS - 1) lower: the
// largest minifloat of e4m3, e5m2 and e2m1 has a nonzero mantissa, so its predecessor is one ulp
// below in its binade), both multiples of 2^(kS - 1), 2^(kS - 2) away. A lane with a >= T lies above that midpoint by far more than
// 16 patterns, so fl(x / eff) does too, and both codes are the largest (MagnitudeCode of a
// saturates). Calibrated data with f32 block scales puts each block's maximum exactly there,
// which would send every group holding one to the per-vector path. One signed maximum per vector
// gathers a group (NearSpread), one compare tests it (AnyNear). NaN lanes (a above 0x7F800000)
// are clamped too: the callers find them by their codes.
template <Value V>
HWY_INLINE __m256i NearSpread(__m256i spread, __m256i a) {
  using F = Fmt<V>;
  constexpr int kS = 23 - F::kMbits;
  static_assert(((F::kMaxBits >> kS) & ((1 << F::kMbits) - 1)) != 0, "the largest minifloat's predecessor shares its binade");
  const hn::Full256<std::int32_t> di;
  const __m256i k = Konst(di, kNearUlps).raw;
  const __m256i t = _mm256_min_epi32(a, Konst(di, F::kMaxBits - (1 << (kS - 2))).raw);
  return _mm256_max_epi32(spread, _mm256_xor_si256(_mm256_add_epi32(t, k), _mm256_sub_epi32(t, k)));
}
template <Value V>
HWY_INLINE bool AnyNear(__m256i spread) {
  constexpr int kS = 23 - Fmt<V>::kMbits;
  const __m256i near = _mm256_cmpgt_epi32(spread, Konst(hn::Full256<std::int32_t>(), (1 << (kS - 1)) - 1).raw);
  return _mm256_testz_si256(near, near) == 0;
}
#endif

// The low byte of each u32 lane: U8FromU32 (two shuffles), or one byte permute on AVX3_DL (VBMI).
template <class DU>
HWY_INLINE hn::Vec<hn::Rebind<std::uint8_t, DU>> LowBytes(DU /*du*/, hn::Vec<DU> v) {
#if HWY_TARGET == HWY_AVX3_DL
  const hn::Full512<std::uint8_t> d8;
  alignas(16) static constexpr std::uint8_t kIdx[16] = {0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60};
  const hn::Vec512<std::uint8_t> bytes{_mm512_permutexvar_epi8(Hidden(hn::LoadDup128(d8, kIdx)).raw, v.raw)};
  return hn::LowerHalf(hn::LowerHalf(bytes));
#else
  return hn::U8FromU32(v);
#endif
}

// Stores one vector of codes: as int32, or fields (code & mask) as bytes.
template <Value V, bool kBytes, class D>
HWY_INLINE void StoreCode(D /*d*/, hn::Vec<hn::RebindToSigned<D>> code, std::int32_t* HWY_RESTRICT codes,
                          std::uint8_t* HWY_RESTRICT fields) {
  const hn::RebindToSigned<D> di;
  if constexpr (kBytes) {
    // The field is the code's low `bits` bits (two's complement), gathered as bytes: U8FromU32
    // is two shuffles where a saturating demotion takes three. (Not TruncateTo: in Highway 1.0.3
    // its AVX3_DL u32->u8 form permutes 32-bit lanes instead of bytes; these tests caught it.)
    // The mask is needed for integers below 8 bits (negative codes), and for integers on SCALAR
    // and EMU128, whose U8FromU32 saturates (the clang build's EMU128 tests caught that; integer
    // codes may come biased, see Encode). A minifloat code is sign and magnitude, already
    // within its `bits` bits: no mask (one operation of about 24 for nvfp4).
    const hn::RebindToUnsigned<D> du;
    auto field = hn::BitCast(du, code);
    if constexpr (!Fmt<V>::kMini && (Fmt<V>::kBits < 8 || HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128)) {
      field = hn::And(field, Konst(du, Fmt<V>::kMask));
    }
    hn::StoreU(LowBytes(du, field), hn::Rebind<std::uint8_t, D>(), fields);
  } else {
    hn::StoreU(code, di, codes);
  }
}

// One vector of quantize. `amax` keeps the largest |x| bit pattern seen, so NaN input (above
// 0x7F800000) is found after the loop.
template <Value V, bool kBytes, class D, class VI>
HWY_INLINE void QuantizeVec(D d, const float* HWY_RESTRICT x, hn::Vec<D> eff, std::int32_t* HWY_RESTRICT codes,
                            std::uint8_t* HWY_RESTRICT fields, VI& amax) {
  const hn::RebindToSigned<D> di;
  const auto v = hn::LoadU(d, x);
  amax = hn::Max(amax, hn::And(hn::BitCast(di, v), hn::Set(di, 0x7FFFFFFF)));
  StoreCode<V, kBytes>(d, Encode<V, kBytes>(d, hn::Div(v, eff)), codes, fields);  // a true division per lane (SPEC §5)
}

// The effective scales that take the reciprocal path: 1 / eff is then a normal float.
inline constexpr float kRcpMinEff = 0x1p-125f, kRcpMaxEff = 0x1p125f;

// fl(1 / eff) for an effective scale on the reciprocal path, else 0 (the division path).
HWY_INLINE float Reciprocal(float eff) { return eff >= kRcpMinEff && eff <= kRcpMaxEff ? 1.0f / eff : 0.0f; }

// rcp[k] = Reciprocal(eff[k]), k < n, a vector at a time; `none` instead of 0 for the division
// path (kCalibrated marks it with NaN, which fails every lane's check). Returns whether every
// block takes the reciprocal path.
HWY_INLINE bool Reciprocals(const float* HWY_RESTRICT eff, std::size_t n, float* HWY_RESTRICT rcp, float none = 0.0f) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  auto all = hn::Eq(hn::Zero(d), hn::Zero(d));
  std::size_t k = 0;
  for (; k + lanes <= n; k += lanes) {
    const auto e = hn::LoadU(d, eff + k);
    const auto ok = hn::And(hn::Ge(e, hn::Set(d, kRcpMinEff)), hn::Le(e, hn::Set(d, kRcpMaxEff)));
    all = hn::And(all, ok);
    hn::StoreU(hn::IfThenElse(ok, hn::Div(hn::Set(d, 1.0f), e), hn::Set(d, none)), d, rcp + k);
  }
  bool every = hn::AllTrue(d, all);
  for (; k < n; ++k) {
    const float r = Reciprocal(eff[k]);
    every = every && r != 0.0f;
    rcp[k] = r != 0.0f ? r : none;
  }
  return every;
}

// QuantizeVec without a division in the common case, with the same codes on every input.
// q = fl(x * rcp), rcp = fl(1 / eff) normal (Reciprocal), is within a relative 2^-23 (1 + 2^-24)
// of x / eff, so within 3 f32 ulps of fl(x / eff), or both are below 2^-125 in magnitude (code 0
// for every value type, and a minifloat keeps the shared sign). The code is a monotonic step
// function of y whose steps sit at rounding boundaries (half-integers; midpoints of adjacent
// minifloats; clamping and saturation happen at representable values): when no boundary lies
// within that distance of q (Encode's `near`), q and fl(x / eff) give the same code. Vectors with
// a lane near a boundary, or a NaN lane (caught later by `amax`), are recomputed with the true
// division, so the result is QuantizeVec's bit for bit.
//
// Integer values take a shorter form of Encode here, with no float->int conversion. With
// t1 = fl(x * rcp + eps) and t2 = fl(x * rcp - eps) (MulAdd: fused on AVX2 and up, a product and
// a sum below; the bound holds for both), fl(t + 1.5 * 2^23) holds t rounded to the nearest integer
// in its low mantissa bits, and is monotonic in t everywhere. When the two agree, no half-integer
// lies strictly between t2 and t1, and fl(x / eff) does (below 256 in magnitude, |fl(x / eff) -
// x * rcp| <= 3 * 2^-24 * 257 < eps - 2^-17; above, both sides clamp to the same bound): so it is no
// tie, rounds half away from zero to the same integer, and clamping the common pattern as a signed
// integer to the biased [lo, hi] gives its code (the patterns of non-negative floats order like
// their values, negative floats are negative integers, and ±Inf clamp to hi / lo). NaN never
// compares equal, so NaN lanes take the division path, which also records NaN in `amax`.
//
// kCalibrated (integers): the block's scale s is its calibrated stored scale, not saturated
// (SPEC §8: s is fl(fl(2 * a) / range) rounded up, a the block's max |x|). With q = fl(2a / range):
// q >= (2a / range)(1 - 2^-24) when normal; when subnormal, 2a / range <= q + 2^-150 <= s (1 + 2^-25)
// since this path has s >= 2^-125. So every lane has |y| <= (range / 2)(1 + 2^-23) < 128.5 with
// y = fl(x / s), and one fused step replaces the two-sided check:
//   t = fl(x * rcp + M), M = 768.5 + 2^-14, in [512, 1024) where the f32 grid is 2^-14,
// so t's pattern holds floor(t) - 512 = 256 + K above bit 14 and frac(t) in units of 2^-14 below,
// with K = floor(t) - 768 (bits 14..21 are K mod 256, the field of code K). Let e = |t - (y + M)|:
// rounding to the grid is at most 2^-15, |x * rcp - x / s| <= |x / s| 2^-24 < 2^-17 and
// |x / s - y| <= 2^-18, plus 2^-18 where MulAdd is a product and a sum (SSE2/SSE4), so
// e < 2^-15 + 2^-16 < 2^-14. A lane passes when frac(t) >= 4 * 2^-14 (pattern & 0x3FFC nonzero):
//   y + 0.5 >= floor(t) + 2^-12 - 2^-14 - e - 768 > K, and y + 0.5 <= t + e - 768 - 2^-14 < K + 1,
// so y lies strictly inside (K - 1/2, K + 1/2): no tie, and its code (half away from zero) is K.
// K is within [lo, hi] on a passing lane, so no clamp: for symmetric values |y| < hi + 1/2; for
// full-range ones (range / 2 = hi + 1/2, lo = -hi - 1) K > y - 1/2 > lo - 1, and a lane with
// y > hi + 1/2 has y < hi + 1/2 + 2^-16, so t < 769 + hi + 2^-13 + 2^-16 and frac(t) < 3 * 2^-14:
// it fails.
// A block off the reciprocal path has rcp NaN here, and t NaN (pattern 0x7FC00000) fails every lane.
// A NaN x gives a NaN t that keeps x's payload, and a payload can set bits 2 to 13: the check
// also fails a lane whose t has bit 29 set (kGridNaN), which every NaN and infinite t has (its
// exponent field is all ones) and no t in [512, 1024) has (pattern 0x44000000 to 0x447FFFFF).
// s = 0.1 (stored 0) means 2a / range < 2^-150: the code is 0. The rounding of the sum needs
// round-to-nearest, which the entry points set (fp_guard.h).
inline constexpr float kGridM = 768.5f + 0x1p-14f;
inline constexpr std::uint32_t kGridFrac = 0x3FFC;  // frac(t) >= 4 * 2^-14 when (bits & this) != 0
inline constexpr std::uint32_t kGridNaN = 0x20000000;  // set in every NaN or infinite t, in no t of [512, 1024)
inline constexpr std::uint32_t kGridBias = 0x44000000u >> 14 | 256u;  // bits >> 14 == K + this
inline constexpr float kIntEps = 0x1p-13f;

template <Value V, bool kBytes, bool kCalibrated = false, class D, class VI>
HWY_INLINE void QuantizeVecRcp(D d, const float* HWY_RESTRICT x, float eff, hn::Vec<D> rcp,
                               std::int32_t* HWY_RESTRICT codes, std::uint8_t* HWY_RESTRICT fields, VI& amax) {
  using F = Fmt<V>;
  const hn::RebindToSigned<D> di;
  const auto v = hn::LoadU(d, x);
  hn::Vec<decltype(di)> code;
  bool exact;
  if constexpr (!F::kMini && kCalibrated) {
    const hn::RebindToUnsigned<D> du;
    const auto t = hn::BitCast(du, hn::MulAdd(v, rcp, hn::Set(d, kGridM)));
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    // The lanes with frac(t) >= 4 * 2^-14, then of those the ones without kGridNaN.
    const __mmask16 no_tie = _mm512_test_epi32_mask(t.raw, hn::Set(du, kGridFrac).raw);
    exact = _mm512_mask_testn_epi32_mask(no_tie, t.raw, hn::Set(du, kGridNaN).raw) == 0xFFFF;
#else
    exact = hn::AllFalse(du, hn::Or(hn::Eq(hn::And(t, hn::Set(du, kGridFrac)), hn::Zero(du)),
                                    hn::Ne(hn::And(t, hn::Set(du, kGridNaN)), hn::Zero(du))));
#endif
    code = hn::BitCast(di, hn::ShiftRight<14>(t));  // low 8 bits: K mod 256 (see above)
    if constexpr (!kBytes) code = hn::Sub(code, hn::Set(di, static_cast<std::int32_t>(kGridBias)));
  } else if constexpr (!F::kMini) {
    const auto magic = Konst(d, 0x1.8p23f);
    const auto b1 = hn::Add(hn::MulAdd(v, rcp, Konst(d, kIntEps)), magic);
    const auto b2 = hn::Add(hn::MulAdd(v, rcp, Konst(d, -kIntEps)), magic);
    exact = hn::AllTrue(d, hn::Eq(b1, b2));
    constexpr std::int32_t kBias = 0x4B400000;
    code = hn::Min(hn::Max(hn::BitCast(di, b1), Konst(di, kBias + static_cast<std::int32_t>(F::kLo))),
                   Konst(di, kBias + static_cast<std::int32_t>(F::kHi)));
    if constexpr (!kBytes) code = hn::Sub(code, hn::Set(di, kBias));
  } else {
    // Every midpoint of two adjacent minifloats (the code's only steps: saturation happens at
    // the maximum, itself representable) is an f32 pattern that is a multiple of 2^(kS - 1), at
    // least that of Q / 2 (Q the subnormal quantum): a normal midpoint is the pattern of a
    // minifloat with one more mantissa bit set, bit kS - 1; a subnormal one has at most mbits + 1
    // significant bits. fl(x / eff) lies within 6 patterns of q's (3 ulps; a binade crossing
    // doubles the count) and has the same sign. So when no such multiple lies in
    // (a - 16, a + 16], no midpoint separates them, a is no tie, and the code of a is that of
    // fl(x / eff). Representable values and exact zeros below Q / 2 are not midpoints; the first
    // are flagged too (harmless), the second are not. |q| is NaN exactly when x is: `amax` records
    // it.
    [[maybe_unused]] constexpr int kS = 23 - F::kMbits;  // (AVX-512: NearBoundary has its own)
    [[maybe_unused]] constexpr std::int32_t kHalfQuantumBits = (127 - F::kBias - F::kMbits) << 23;
    const hn::RebindToUnsigned<D> du;
    const auto bits = hn::BitCast(du, hn::Mul(v, rcp));
    const auto a = hn::And(bits, Konst(du, 0x7FFFFFFFu));
    amax = hn::Max(amax, hn::BitCast(di, a));
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    exact = NearBoundary<V>(a.raw) == 0;
#else
    const auto a16 = hn::BitCast(di, hn::Add(a, Konst(du, static_cast<std::uint32_t>(kNearUlps))));
    const auto near = hn::And(hn::Lt(hn::And(a16, Konst(di, (1 << (kS - 1)) - 1)), Konst(di, 2 * kNearUlps)),
                              hn::Gt(a16, Konst(di, kHalfQuantumBits - 1)));
    exact = hn::AllFalse(di, near);
#endif
    code = hn::BitCast(di, hn::OrAnd(MagnitudeCode<V>(du, a), hn::ShiftRight<31 - F::kWidth>(bits),
                                     Konst(du, 1u << F::kWidth)));
  }
  if (HWY_UNLIKELY(!exact)) {
    amax = hn::Max(amax, hn::And(hn::BitCast(di, v), hn::Set(di, 0x7FFFFFFF)));
    code = Encode<V, kBytes>(d, hn::Div(v, hn::Set(d, eff)));
  }
  StoreCode<V, kBytes>(d, code, codes, fields);
}

// The last r < Lanes(d) elements of a segment, through a zero-padded copy so they run the very
// same full-vector code (Highway 1.0.3's one-lane x86 vectors shift by the broadcast count of two
// lanes, so partial vectors are avoided rather than trusted). `effp` null: one scale for all.
template <Value V, bool kBytes, class D, class VU>
HWY_INLINE void QuantizeTail(D d, const float* HWY_RESTRICT x, const float* HWY_RESTRICT effp, float eff,
                             std::size_t r, std::int32_t* HWY_RESTRICT codes, std::uint8_t* HWY_RESTRICT fields,
                             VU& nan_acc) {
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
  alignas(HWY_MAX_BYTES) float xb[kMax] = {};
  alignas(HWY_MAX_BYTES) float eb[kMax];
  alignas(HWY_MAX_BYTES) std::int32_t cb[kMax];
  alignas(HWY_MAX_BYTES) std::uint8_t fb[kMax];
  std::copy(x, x + r, xb);
  std::fill(eb, eb + kMax, 1.0f);
  if (effp != nullptr) std::copy(effp, effp + r, eb);
  const auto ev = effp != nullptr ? hn::Load(d, eb) : hn::Set(d, eff);
  QuantizeVec<V, kBytes>(d, xb, ev, cb, fb, nan_acc);
  if constexpr (kBytes) {
    std::copy(fb, fb + r, fields);
  } else {
    std::copy(cb, cb + r, codes);
  }
}

// ------------------------------------------------------------------ fields <-> bytes (SPEC §6)

// `count` fields (one per byte, already masked) to `per_byte` per byte, the first in the low bits.
HWY_INLINE void PackFields(const std::uint8_t* HWY_RESTRICT f, std::size_t count, unsigned per_byte,
                           std::uint8_t* HWY_RESTRICT out) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<std::uint8_t> d8;
  const std::size_t n8 = hn::Lanes(d8);
  if (per_byte == 2) {
    const hn::Repartition<std::uint16_t, decltype(d8)> d16;
    const hn::RebindToSigned<decltype(d16)> di16;
    const hn::Rebind<std::uint8_t, decltype(d16)> dh;
    for (; i + n8 <= count; i += n8) {
      const auto v = hn::BitCast(d16, hn::LoadU(d8, f + i));  // f0 | f1 << 8
      const auto p = hn::And(hn::Or(v, hn::ShiftRight<4>(v)), hn::Set(d16, 0xFF));
      hn::StoreU(hn::DemoteTo(dh, hn::BitCast(di16, p)), dh, out + i / 2);
    }
  } else if (per_byte == 4) {
    const hn::Repartition<std::uint32_t, decltype(d8)> d32;
    const hn::RebindToSigned<decltype(d32)> di32;
    const hn::Rebind<std::uint8_t, decltype(d32)> dq;
    for (; i + n8 <= count; i += n8) {
      const auto v = hn::BitCast(d32, hn::LoadU(d8, f + i));  // f0 | f1 << 8 | f2 << 16 | f3 << 24
      const auto p = hn::Or(hn::Or(v, hn::ShiftRight<6>(v)), hn::Or(hn::ShiftRight<12>(v), hn::ShiftRight<18>(v)));
      hn::StoreU(hn::DemoteTo(dq, hn::BitCast(di32, hn::And(p, hn::Set(d32, 0xFF)))), dq, out + i / 4);
    }
  }
#endif
  const unsigned bits = 8 / per_byte;
  for (; i < count; i += per_byte) {
    unsigned byte = 0;
    for (unsigned k = 0; k < per_byte && i + k < count; ++k) byte |= static_cast<unsigned>(f[i + k]) << (k * bits);
    out[i / per_byte] = static_cast<std::uint8_t>(byte);
  }
}

// The inverse: `count` fields from `per_byte`-per-byte storage (count a multiple of per_byte
// except at the end of a row).
HWY_INLINE void UnpackFields(const std::uint8_t* HWY_RESTRICT in, std::size_t count, unsigned per_byte,
                             std::uint8_t* HWY_RESTRICT f) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  if (per_byte == 2) {
    const hn::ScalableTag<std::uint16_t> d16;
    const hn::Rebind<std::uint8_t, decltype(d16)> dh;
    const hn::Repartition<std::uint8_t, decltype(d16)> d8;
    const std::size_t step = 2 * hn::Lanes(d16);
    for (; i + step <= count; i += step) {
      const auto b = hn::PromoteTo(d16, hn::LoadU(dh, in + i / 2));
      const auto w = hn::Or(hn::And(b, hn::Set(d16, 0xF)), hn::ShiftLeft<8>(hn::ShiftRight<4>(b)));
      hn::StoreU(hn::BitCast(d8, w), d8, f + i);
    }
  } else if (per_byte == 4) {
    const hn::ScalableTag<std::uint32_t> d32;
    const hn::Rebind<std::uint8_t, decltype(d32)> dq;
    const hn::Repartition<std::uint8_t, decltype(d32)> d8;
    const std::size_t step = 4 * hn::Lanes(d32);
    const auto three = hn::Set(d32, 3u);
    for (; i + step <= count; i += step) {
      const auto b = hn::PromoteTo(d32, hn::LoadU(dq, in + i / 4));
      const auto w = hn::Or(hn::Or(hn::And(b, three), hn::ShiftLeft<8>(hn::And(hn::ShiftRight<2>(b), three))),
                            hn::Or(hn::ShiftLeft<16>(hn::And(hn::ShiftRight<4>(b), three)),
                                   hn::ShiftLeft<24>(hn::ShiftRight<6>(b))));
      hn::StoreU(hn::BitCast(d8, w), d8, f + i);
    }
  }
#endif
  const unsigned bits = 8 / per_byte;
  const unsigned mask = (1u << bits) - 1;
  for (; i < count; ++i) f[i] = static_cast<std::uint8_t>((in[i / per_byte] >> ((i % per_byte) * bits)) & mask);
}

// Zero the row's padding after its payload; for reading, whether padding and unused high bits of
// the last byte are all zero (SPEC §7: nonzero padding is invalid-code).
// Bytes holding n fields at p.per_byte per byte (the last one partly filled).
inline std::size_t PayloadBytes(std::size_t n, const detail::Packing& p) { return (n + p.per_byte - 1) / p.per_byte; }

inline void ZeroPadding(std::uint8_t* row, std::size_t n, const detail::Packing& p) {
  const std::size_t payload = PayloadBytes(n, p);
  if (p.row_bytes > payload) std::memset(row + payload, 0, p.row_bytes - payload);
}
inline bool PaddingIsZero(const std::uint8_t* row, std::size_t n, const detail::Packing& p) {
  const std::size_t payload = PayloadBytes(n, p);
  const std::size_t used = n % p.per_byte;
  if (used != 0 && (row[payload - 1] >> (used * (8 / p.per_byte))) != 0) return false;
  for (std::size_t i = payload; i < p.row_bytes; ++i) {
    if (row[i] != 0) return false;
  }
  return true;
}

// A chunk's `count` fields into the stream: written in place (one per byte) or packed from f.
inline void CommitFields(StorageStream& out, const std::uint8_t* HWY_RESTRICT f, std::size_t count,
                         const detail::Packing& p) {
  if (p.per_byte > 1) PackFields(f, count, p.per_byte, out.Next());
  out.Commit(PayloadBytes(count, p));
}

// The zero bytes after a row's payload (ZeroPadding's), into the stream.
inline void CommitPadding(StorageStream& out, std::size_t n, const detail::Packing& p) {
  const std::size_t payload = PayloadBytes(n, p);
  if (p.row_bytes > payload) {
    std::memset(out.Next(), 0, p.row_bytes - payload);
    out.Commit(p.row_bytes - payload);
  }
}

// ------------------------------------------------------------------ quantize

bool ScalesRange(const detail::ScaleJob& job, std::size_t begin, std::size_t count, float* eff, float* stored);

// The effective scales of blocks [j0, j1) of the row whose first block is `base`: the precomputed
// eff + base + j0, or, with a scale source, buf[0..j1 - j0) computed from its raw or encoded
// scales (SPEC §3.5's checks included; the encoded ones written too when `src` writes them). Null
// when one is invalid: the caller then hands the call to the reference.
HWY_INLINE const float* ChunkScales(const float* eff, const detail::ScaleJob* src, std::size_t base, std::size_t j0,
                                    std::size_t j1, float* HWY_RESTRICT buf) {
  if (src == nullptr) return eff + base + j0;
  // Not a copy of *src with the range's pointers: fields of a job written with one wide store
  // and read back narrower miss store forwarding, and at DRAM sizes that load then waits for
  // every older store to reach the cache (a fifth of quantize-nvfp4's time went there).
  return ScalesRange(*src, base + j0, j1 - j0, buf, nullptr) ? buf : nullptr;
}

// p + i when the pointer is in use, else null (UBSan rejects offsets on null pointers).
template <bool kUsed, class T>
HWY_INLINE T* Offset(T* p, std::size_t i) {
  if constexpr (kUsed) {
    return p + i;
  } else {
    (void)p;
    (void)i;
    return nullptr;
  }
}

#if QCONFORM_GROUP_KERNELS
// Four vectors of an 8-bit minifloat (e4m3, e5m2) on the reciprocal path of one scale, to their
// 64 field bytes with one store: the codes of QuantizeVecRcp, but saturation, signs, NaN and the
// narrowing done on 64 lanes at once. Per vector: the product, its magnitude, the near-boundary
// test and MagnitudeCode's normal or subnormal code before its minimum (a dword <= 4095). Two
// saturating pack levels interleave the four vectors (128-bit lane j holds elements 4j..4j+3 of
// each), the unsigned saturation to 255 and one byte minimum saturate to the largest code, the
// products' patterns packed with signed saturation keep each sign in bit 7 (a negative pattern
// saturates to 0x80, a non-negative one to 0..0x7F), and one dword permute restores element order.
// NaN: a NaN product's magnitude is a quiet NaN (>= 0x7FC00000), whose normal code lies above that
// of every finite value and Inf, so a u16 maximum of the packed codes (`cmax`) finds it instead of a
// maximum per vector. A group with a lane near a boundary runs QuantizeVecRcp per vector.
// AVX2 (32 lanes): the same packs within each 128-bit half (half j holds elements 4j..4j+3 of each
// vector), the sign put in by a byte blend on it, the near test AnyNear's, the order one vpermd.
template <Value V>
inline constexpr std::uint32_t kMiniNanCode = (0x7FC00000u + Fmt<V>::kNormalRound) >> (23 - Fmt<V>::kMbits);
static_assert(kMiniNanCode<Value::e4m3> > ((0x7F800000u + Fmt<Value::e4m3>::kNormalRound) >> 20) &&
                  kMiniNanCode<Value::e5m2> > ((0x7F800000u + Fmt<Value::e5m2>::kNormalRound) >> 21),
              "a quiet NaN's normal code must exceed Inf's");

// A group's four vectors one by one (QuantizeVecRcp: the division for the lanes that need it), when
// a lane of the group fails the group kernel's check.
template <Value V, class D, class VI>
HWY_INLINE void GroupByVectors(D d, const float* HWY_RESTRICT x, float eff, hn::Vec<D> rv, std::uint8_t* HWY_RESTRICT fields,
                               VI& nan_acc) {
  constexpr std::size_t kLanes = hn::MaxLanes(d);
  for (std::size_t k = 0; k < 4; ++k) QuantizeVecRcp<V, true>(d, x + k * kLanes, eff, rv, nullptr, fields + k * kLanes, nan_acc);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
template <Value V>
HWY_INLINE void QuantizeMiniGroup(const float* HWY_RESTRICT x, float eff, float r, std::uint8_t* HWY_RESTRICT fields,
                                  __m512i& cmax, hn::Vec512<std::int32_t>& nan_acc) {
  using F = Fmt<V>;
  const hn::Full512<float> d;
  const hn::Full512<std::int32_t> di;
  const hn::Full512<std::uint32_t> du;
  const __m512 rv = _mm512_set1_ps(r);
  __m512i bits[4], mag[4];
  __mmask16 near = 0;
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    bits[k] = _mm512_castps_si512(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * k), rv));
    const __m512i a = _mm512_and_si512(bits[k], Konst(di, 0x7FFFFFFF).raw);
    near |= NearBoundary<V>(a);
    mag[k] = MagnitudeCodeUnsaturated<V>(du, hn::Vec512<std::uint32_t>{a}).raw;
  }
  if (HWY_UNLIKELY(near != 0)) return GroupByVectors<V>(d, x, eff, hn::Vec512<float>{rv}, fields, nan_acc);
  const __m512i m01 = _mm512_packus_epi32(mag[0], mag[1]), m23 = _mm512_packus_epi32(mag[2], mag[3]);
  cmax = _mm512_max_epu16(cmax, _mm512_max_epu16(m01, m23));
  const __m512i m = _mm512_min_epu8(_mm512_packus_epi16(m01, m23), Konst(di, static_cast<std::int32_t>(F::kMaxCode * 0x01010101u)).raw);
  const __m512i sign = _mm512_packs_epi16(_mm512_packs_epi32(bits[0], bits[1]), _mm512_packs_epi32(bits[2], bits[3]));
  const __m512i code = _mm512_ternarylogic_epi32(m, sign, Konst(di, static_cast<std::int32_t>(0x80808080u)).raw, 0xF8);  // m | (sign & 0x80)
  alignas(64) static constexpr std::int32_t kOrder[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
  _mm512_storeu_si512(fields, _mm512_permutexvar_epi32(Hidden(hn::Load(di, kOrder)).raw, code));
}

// After a row's groups: NaN found by their code maximum into nan_acc.
template <Value V>
HWY_INLINE void MiniGroupNan(__m512i cmax, hn::Vec512<std::int32_t>& nan_acc) {
  if (_mm512_cmpge_epu16_mask(cmax, _mm512_set1_epi16(static_cast<short>(kMiniNanCode<V>))) != 0) {
    nan_acc = hn::Max(nan_acc, hn::Set(hn::Full512<std::int32_t>(), 0x7FC00000));
  }
}
#else  // AVX2
// A group's 32 bytes in the order of two levels of packs (128-bit half j holds elements 4j..4j+3
// of each vector) in element order: one vpermd.
HWY_INLINE __m256i GroupOrder(__m256i bytes) {
  alignas(32) static constexpr std::int32_t kOrder[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  const __m256i order = Hidden(hn::Load(hn::Full256<std::int32_t>(), kOrder)).raw;
  return _mm256_permutevar8x32_epi32(bytes, order);
}

// A group's 32 minifloat codes in element order (GroupOrder), false (nothing kept) when a lane
// lies near a rounding boundary (AnyNear): the caller then takes GroupByVectors. cmax: the
// running maximum of the magnitude codes (MiniGroupNan).
template <Value V>
HWY_INLINE bool MiniGroupCodes(const float* HWY_RESTRICT x, __m256 rv, __m256i& cmax, __m256i& codes) {
  using F = Fmt<V>;
  const hn::Full256<std::int32_t> di;
  const hn::Full256<std::uint32_t> du;
  // Each pair of vectors is packed as soon as it is computed (magnitude codes unsigned to u16,
  // patterns signed to i16), so that only the packs stay live, not the 4 x 3 vectors of products,
  // magnitudes and codes (which had spilled: 16 registers).
  __m256i mags[2], signs[2];
  __m256i spread = _mm256_setzero_si256();
  __m256i amin = Konst(di, F::kMinNormalBits).raw;
  // Normal codes only (MagnitudeCodeUnsaturated's normal form), unless a lane's magnitude is below
  // the smallest normal minifloat, which is rare with a scale fitted to the data (|y| < 2^-6 of
  // e4m3's 448, 2^-14 of e5m2's 57344): then the full form, for the whole group (recomputed).
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    __m256i bits[2], mag[2];
#pragma GCC unroll 2
    for (int k = 0; k < 2; ++k) {
      bits[k] = _mm256_castps_si256(_mm256_mul_ps(_mm256_loadu_ps(x + 16 * h + 8 * k), rv));
      const __m256i a = _mm256_and_si256(bits[k], Konst(di, 0x7FFFFFFF).raw);
      spread = NearSpread<V>(spread, a);
      amin = _mm256_min_epi32(amin, a);
      mag[k] = _mm256_srli_epi32(_mm256_add_epi32(a, Konst(di, F::kNormalRound).raw), 23 - F::kMbits);
    }
    mags[h] = _mm256_packus_epi32(mag[0], mag[1]);
    signs[h] = _mm256_packs_epi32(bits[0], bits[1]);
  }
  if (HWY_UNLIKELY(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(Konst(di, F::kMinNormalBits).raw, amin))) != 0)) {
    for (int h = 0; h < 2; ++h) {
      __m256i mag[2];
      for (int k = 0; k < 2; ++k) {
        const __m256i a = _mm256_and_si256(_mm256_castps_si256(_mm256_mul_ps(_mm256_loadu_ps(x + 16 * h + 8 * k), rv)),
                                           Konst(di, 0x7FFFFFFF).raw);
        mag[k] = MagnitudeCodeUnsaturated<V>(du, hn::Vec256<std::uint32_t>{a}).raw;
      }
      mags[h] = _mm256_packus_epi32(mag[0], mag[1]);
    }
  }
  if (HWY_UNLIKELY(AnyNear<V>(spread))) return false;
  cmax = _mm256_max_epu16(cmax, _mm256_max_epu16(mags[0], mags[1]));
  const __m256i m = _mm256_min_epu8(_mm256_packus_epi16(mags[0], mags[1]), Konst(di, static_cast<std::int32_t>(F::kMaxCode * 0x01010101u)).raw);
  const __m256i sign = _mm256_packs_epi16(signs[0], signs[1]);
  codes = GroupOrder(_mm256_blendv_epi8(m, _mm256_or_si256(m, Konst(di, static_cast<std::int32_t>(0x80808080u)).raw), sign));
  return true;
}

template <Value V>
HWY_INLINE void MiniGroupNan(__m256i cmax, hn::Vec256<std::int32_t>& nan_acc) {
  // Codes <= 4095: a signed compare of the u16 lanes.
  const __m256i nan = _mm256_cmpgt_epi16(cmax, _mm256_set1_epi16(static_cast<short>(kMiniNanCode<V> - 1)));
  if (_mm256_testz_si256(nan, nan) == 0) nan_acc = hn::Max(nan_acc, hn::Set(hn::Full256<std::int32_t>(), 0x7FC00000));
}

// Integer codes of four vectors on the reciprocal path (AVX2), as bytes in the order of two levels
// of packs (128-bit half j holds elements 4j..4j+3 of each vector), masked to the value's width
// (two's complement truncated, as StoreCode); vector k has reciprocal rk. QuantizeVecRcp's
// two-sided check (its sums b1 and b2 equal in every lane of the four; false otherwise, and for
// NaN, whose b1 is NaN), then the codes narrowed by saturating packs instead of a clamp per
// vector. b1 = fl(fl(y * rcp +- 2^-13) + 1.5 * 2^23): below its pattern's clamp at that of lo
// (a signed maximum, as QuantizeVecRcp's), which takes every negative b1 (whose pattern, as a
// signed integer, would wrap when the bias is subtracted, for b1 in (-1.5 * 2^23, 0)), b1 is a
// float of [lo + 1.5 * 2^23, +Inf], and its pattern less 0x4B400000 is the rounded code r when
// r < 2^22, and at least 2^22 otherwise (+Inf included). So two signed saturating packs give
// min(r, 127) in each byte and a byte minimum clamps it to hi.
template <Value V>
HWY_INLINE bool IntGroupCodes(const float* HWY_RESTRICT x, __m256 r0, __m256 r1, __m256 r2, __m256 r3, __m256i& codes) {
  using F = Fmt<V>;
  const hn::Full256<float> d;
  const hn::Full256<std::int32_t> di;
  const __m256 eps = Konst(d, kIntEps).raw, neps = Konst(d, -kIntEps).raw, magic = Konst(d, 0x1.8p23f).raw;
  const __m256 rv[4] = {r0, r1, r2, r3};
  __m256i q[4];
  __m256 same = _mm256_castsi256_ps(Konst(di, -1).raw);
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m256 v = _mm256_loadu_ps(x + 8 * k);
    const __m256 b1 = _mm256_add_ps(_mm256_fmadd_ps(v, rv[k], eps), magic);
    const __m256 b2 = _mm256_add_ps(_mm256_fmadd_ps(v, rv[k], neps), magic);
    same = _mm256_and_ps(same, _mm256_cmp_ps(b1, b2, _CMP_EQ_OQ));
    const __m256i lo = Konst(di, 0x4B400000 + static_cast<std::int32_t>(F::kLo)).raw;
    q[k] = _mm256_sub_epi32(_mm256_max_epi32(_mm256_castps_si256(b1), lo), Konst(di, 0x4B400000).raw);
  }
  if (HWY_UNLIKELY(_mm256_movemask_ps(same) != 0xFF)) return false;
  __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  if constexpr (F::kHi < 127) b = _mm256_min_epi8(b, Konst(di, static_cast<std::int32_t>(static_cast<std::uint32_t>(F::kHi) * 0x01010101u)).raw);
  if constexpr (F::kBits < 8) b = _mm256_and_si256(b, Konst(di, static_cast<std::int32_t>(F::kMask * 0x01010101u)).raw);
  codes = b;
  return true;
}

// A group's 32 field bytes in element order for a value with a group kernel, on the reciprocal
// path of one reciprocal rv: MiniGroupCodes, or IntGroupCodes and one vpermd. False when a lane
// fails the kernel's check: the caller then takes GroupByVectors (QuantizeVecRcp per vector).
template <Value V>
HWY_INLINE bool GroupCodes(const float* HWY_RESTRICT x, __m256 rv, __m256i& cmax, __m256i& codes) {
  if constexpr (Fmt<V>::kMini) {
    return MiniGroupCodes<V>(x, rv, cmax, codes);
  } else {
    if (!IntGroupCodes<V>(x, rv, rv, rv, rv, codes)) return false;
    codes = GroupOrder(codes);
    return true;
  }
}
#endif

// The value types with a group kernel: 8-bit minifloats, and on AVX2 integers too.
template <Value V>
inline constexpr bool kGroupValue = Fmt<V>::kMini ? Fmt<V>::kBits == 8 : HWY_TARGET == HWY_AVX2;

// One group of four vectors of one scale to its 32 (AVX2) or 64 (AVX-512) field bytes, and the
// NaN check after a row's groups.
template <Value V, class VI>
HWY_INLINE void QuantizeGroup(const float* HWY_RESTRICT x, float eff, float r, std::uint8_t* HWY_RESTRICT fields,
                              GroupAcc& cmax, VI& nan_acc) {
#if HWY_TARGET == HWY_AVX2
  const __m256 rv = _mm256_set1_ps(r);
  __m256i codes;
  if (HWY_UNLIKELY(!GroupCodes<V>(x, rv, cmax, codes))) {
    return GroupByVectors<V>(hn::Full256<float>(), x, eff, hn::Vec256<float>{rv}, fields, nan_acc);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(fields), codes);
#else
  QuantizeMiniGroup<V>(x, eff, r, fields, cmax, nan_acc);
#endif
}
template <Value V, class VI>
HWY_INLINE void GroupNan(GroupAcc cmax, VI& nan_acc) {
  if constexpr (Fmt<V>::kMini) MiniGroupNan<V>(cmax, nan_acc);
}

#if HWY_TARGET == HWY_AVX2
// One-byte fields of elements [c0, c1) of a row, handed to a VectorStream a group (32 bytes) at a
// time straight from the registers (as calibrate+quantize's GridCodes), where QuantizeChunk
// stores them to StorageStream's L1 buffer, which copies them out after the chunk. c0 and c1 - c0
// are multiples of 32, and so is b unless one block spans the row; element c has scale
// eff[c / b - j0]. A group that its kernel does not take (a lane near a boundary, or a scale on
// the division path) goes through a 32-byte buffer. Session 19 (Zen 3, interleaved A/B, 256 MiB,
// with the once-per-line prefetches in both): quantize q8s per-tensor 0.90, e4m3 0.96 to 0.98 and
// e5m2 0.95 in time (optimized/README.md).
template <Value V>
HWY_INLINE void QuantizeGroupsStreamed(const float* HWY_RESTRICT xr, std::size_t c0, std::size_t c1, std::size_t b,
                                       const float* HWY_RESTRICT eff, std::size_t j0, std::size_t last, VectorStream& vs,
                                       hn::Vec256<std::int32_t>& nan_acc) {
  const hn::Full256<float> d;
  const hn::Full256<std::uint8_t> d8;
  GroupAcc cmax = GroupAccZero();
  alignas(32) float rcp[kChunk / 32 + 1];  // the chunk's reciprocals, a vector at a time
  (void)Reciprocals(eff, (c1 - 1) / b - j0 + 1, rcp);
  const std::size_t far_end = FarEnd(last);
  std::size_t j = c0 / b;
  for (std::size_t c = c0; c < c1; ++j) {
    const std::size_t e = std::min((j + 1) * b, c1);
    const float s = eff[j - j0];
    const float r = rcp[j - j0];
    const __m256 rv = _mm256_set1_ps(r);
    for (; c < e; c += 32) {
      PrefetchNearFar(xr, c, last, far_end);
      PrefetchNearFar(xr, c + kLineFloats, last, far_end);
      __m256i codes;
      if (HWY_UNLIKELY(r == 0.0f || !GroupCodes<V>(xr + c, rv, cmax, codes))) {
        alignas(32) std::uint8_t four[32];
        if (r != 0.0f) {
          GroupByVectors<V>(d, xr + c, s, hn::Vec256<float>{rv}, four, nan_acc);
        } else {
          for (std::size_t k = 0; k < 4; ++k) QuantizeVec<V, true>(d, xr + c + 8 * k, hn::Set(d, s), nullptr, four + 8 * k, nan_acc);
        }
        codes = hn::Load(d8, four).raw;
      }
      vs.Put(hn::Vec256<std::uint8_t>{codes});
    }
  }
  GroupNan<V>(cmax, nan_acc);
}
#endif
#endif  // QCONFORM_GROUP_KERNELS

// The whole vectors of [i, e) of a row, which lie in one block of scale s: the reciprocal path
// when r = Reciprocal(s) is nonzero, else the division. Returns where the whole vectors end.
// kFar: every line also prefetched far ahead (PrefetchFar, whose test the caller has made).
template <Value V, bool kBytes, bool kFar, class D, class CodesAt, class FieldsAt, class VU>
HWY_INLINE std::size_t BlockVectorsPf(D d, const float* HWY_RESTRICT xr, std::size_t i, std::size_t e, float s, float r,
                                    std::size_t last, CodesAt codes_at, FieldsAt fields_at, VU& nan_acc) {
  const std::size_t lanes = hn::Lanes(d);
  const auto ev = hn::Set(d, s);
  if (r != 0.0f) {
    const auto rv = hn::Set(d, r);
#if QCONFORM_GROUP_KERNELS
    if constexpr (kBytes && kGroupValue<V>) {
      GroupAcc cmax = GroupAccZero();
      constexpr std::size_t kGroup = 4 * hn::MaxLanes(d);  // == 4 * lanes on every x86 target
      for (; i + kGroup <= e; i += kGroup) {
#pragma GCC unroll 4
        for (std::size_t q = 0; q < kGroup; q += kLineFloats) {
          PrefetchAhead(xr, i + q, last);
          if constexpr (kFar) PrefetchFarAt(xr, i + q);
        }
        QuantizeGroup<V>(xr + i, s, r, fields_at(i), cmax, nan_acc);
      }
      GroupNan<V>(cmax, nan_acc);
    }
#endif
    for (; i + lanes <= e; i += lanes) {
      PrefetchAhead(xr, i, last);
      if constexpr (kFar) PrefetchFarAt(xr, i);
      QuantizeVecRcp<V, kBytes>(d, xr + i, s, rv, codes_at(i), fields_at(i), nan_acc);
    }
  }
  for (; i + lanes <= e; i += lanes) {
    PrefetchAhead(xr, i, last);
    if constexpr (kFar) PrefetchFarAt(xr, i);
    QuantizeVec<V, kBytes>(d, xr + i, ev, codes_at(i), fields_at(i), nan_acc);
  }
  return i;
}

// BlockVectorsPf with far prefetches for the vectors from which at least kFarFloats of the tensor
// lie ahead (a multiple of four vectors from i, so that the group loop leaves nothing between
// the two parts), and without for the rest: one test per call. A test per line took 12 % of
// quantize q8s per-tensor at 16 KiB on the Xeon of session 42.
template <Value V, bool kBytes, class D, class CodesAt, class FieldsAt, class VU>
HWY_INLINE std::size_t BlockVectors(D d, const float* HWY_RESTRICT xr, std::size_t i, std::size_t e, float s, float r,
                                    std::size_t last, CodesAt codes_at, FieldsAt fields_at, VU& nan_acc) {
  const std::size_t far_end = FarEnd(last);  // i < far_end: far
  if (far_end > i) {
    const std::size_t quad = 4 * hn::Lanes(d);
    const std::size_t split = i + (std::min(e, far_end) - i) / quad * quad;
    i = BlockVectorsPf<V, kBytes, true>(d, xr, i, split, s, r, last, codes_at, fields_at, nan_acc);
  }
  return BlockVectorsPf<V, kBytes, false>(d, xr, i, e, s, r, last, codes_at, fields_at, nan_acc);
}

// Blocks [k0, k1) of QuantizeBlocks, block k from element c0 + k * width (width = per lanes):
// kClamp moves each block's prefetches back near the tensor's end, kTest tests the block's
// reciprocal (0: the division path).
template <Value V, bool kBytes, int kShift, bool kCalibrated, bool kClamp, bool kTest, class D, class CodesAt,
          class FieldsAt, class VU>
HWY_INLINE void QuantizeBlockRange(D d, const float* HWY_RESTRICT xr, std::size_t c0, std::size_t k0, std::size_t k1,
                                   std::size_t per, const float* HWY_RESTRICT es, const float* HWY_RESTRICT rcp,
                                   std::size_t last, CodesAt codes_at, FieldsAt fields_at, VU& nan_acc) {
  constexpr std::size_t kLanes = hn::MaxLanes(d);  // == Lanes(d) on every x86 target
  const std::size_t width = per * kLanes;
#if QCONFORM_GROUP_KERNELS
  // Blocks of four vectors or more of a value with a group kernel: QuantizeGroup, four vectors at a time.
  constexpr bool kMiniGroups = kBytes && kGroupValue<V> && !kCalibrated && (kShift >= 2 || kShift == -1);  // (-1: 16 vectors or more)
  GroupAcc cmax = GroupAccZero();
#endif
  const std::size_t far_end = FarEnd(last);  // i < far_end: PrefetchFar's line
  for (std::size_t k = k0; k < k1; ++k) {
    const std::size_t i0 = c0 + k * width;
    // The block's prefetches, kPrefetch ahead (moved back so that they stay within the tensor).
    const float* HWY_RESTRICT pf = xr + (kClamp ? std::min(i0 + kPrefetch, last + 1 - width) : i0 + kPrefetch);
    if (!kTest || kCalibrated || rcp[k] != 0.0f) {  // kCalibrated: NaN takes the division per vector
#if QCONFORM_GROUP_KERNELS
      if constexpr (kMiniGroups) {
#pragma GCC unroll 2
        for (std::size_t u = 0; u < per; u += 4) {
          const std::size_t i = i0 + u * kLanes;
#pragma GCC unroll 4
          for (std::size_t q = 0; q < 4 * kLanes; q += kLineFloats) {
            hwy::Prefetch(pf + u * kLanes + q);
            PrefetchFar(xr, i + q, far_end);
          }
          QuantizeGroup<V>(xr + i, es[k], rcp[k], fields_at(i), cmax, nan_acc);
        }
        continue;
      }
#endif
      const auto rv = hn::Set(d, rcp[k]);
      // Far prefetches for whole blocks with kFarFloats of the tensor ahead: one test per block
      // (a test per line took 8 % of quantize q8s per-tensor at 512 KiB on the Xeon of session 42).
      auto vectors = [&](auto far) HWY_ATTR __attribute__((always_inline)) {
#pragma GCC unroll 8
        for (std::size_t u = 0; u < per; ++u) {
          const std::size_t i = i0 + u * kLanes;
          if constexpr (!kCalibrated) {  // else the block maxima pass did (and the codes pass far ahead)
            hwy::Prefetch(pf + u * kLanes);
            if constexpr (decltype(far)::value) PrefetchFarAt(xr, i);
          }
          QuantizeVecRcp<V, kBytes, kCalibrated>(d, xr + i, es[k], rv, codes_at(i), fields_at(i), nan_acc);
        }
      };
      if (!kCalibrated && i0 + width <= far_end) {
        vectors(std::true_type{});
      } else {
        vectors(std::false_type{});
      }
    } else {
      const auto ev = hn::Set(d, es[k]);
      for (std::size_t u = 0; u < per; ++u) {
        const std::size_t i = i0 + u * kLanes;
        hwy::Prefetch(pf + u * kLanes);
        PrefetchFar(xr, i, far_end);
        QuantizeVec<V, kBytes>(d, xr + i, ev, codes_at(i), fields_at(i), nan_acc);
      }
    }
  }
#if QCONFORM_GROUP_KERNELS
  if constexpr (kMiniGroups) GroupNan<V>(cmax, nan_acc);
#endif
}

// `nb` whole blocks of 2^shift vectors from element c0, block k of scale es[k] and reciprocal
// rcp[k] (0: the division path). kShift >= 0 fixes the shift at compile time, so a block is one
// iteration with its vectors unrolled and one test of its reciprocal (a test and a broadcast per
// vector cost about as much as the arithmetic they chose between). Blocks of one vector (kShift
// 0: nvfp4 on AVX-512), when every rcp[k] is nonzero (`every_rcp`), skip the test, and those
// whose prefetches stay within the tensor (all but the tensor's last few) skip the clamp too: the
// two had been a quarter of that loop's instructions. (Wider blocks spread them over two or more
// vectors, and the same split for them nearly doubled the object code.)
template <Value V, bool kBytes, int kShift, bool kCalibrated, class D, class CodesAt, class FieldsAt, class VU>
HWY_INLINE void QuantizeBlocks(D d, const float* HWY_RESTRICT xr, std::size_t c0, std::size_t nb, int shift,
                               const float* HWY_RESTRICT es, const float* HWY_RESTRICT rcp, bool every_rcp,
                               std::size_t last, CodesAt codes_at, FieldsAt fields_at, VU& nan_acc) {
  const std::size_t per = std::size_t{1} << (kShift >= 0 ? kShift : shift);
  std::size_t k = 0;
  if constexpr (kShift == 0) {
    if (kCalibrated || every_rcp) {
      // Blocks k < unclamped have c0 + (k + 1) * lanes + kPrefetch <= last + 1.
      const std::size_t room = last + 1 - c0;  // the chunk lies within the tensor
      const std::size_t unclamped = room >= kPrefetch ? std::min(nb, (room - kPrefetch) / hn::MaxLanes(d)) : 0;
      QuantizeBlockRange<V, kBytes, kShift, kCalibrated, false, false>(d, xr, c0, 0, unclamped, per, es, rcp, last,
                                                                       codes_at, fields_at, nan_acc);
      k = unclamped;
    }
  } else {
    (void)every_rcp;
  }
  QuantizeBlockRange<V, kBytes, kShift, kCalibrated, true, true>(d, xr, c0, k, nb, per, es, rcp, last, codes_at,
                                                                 fields_at, nan_acc);
}

// Quantizes elements [c0, c1) of one row. Element c uses eff[c / b - j0]. Fields are written to
// fields[c - c0], codes to codes[c]. The input is prefetched kPrefetch ahead, up to element `last`
// of the row (the tensor's last element). kCalibrated: the scales
// are calibrated and unsaturated (QuantizeVecRcp). `rcp_in`, when given, holds the reciprocals
// (indexed like eff) as Reciprocals would compute them, and `every_in` whether all are on the
// reciprocal path.
template <Value V, bool kBytes, bool kCalibrated = false, class VU>
HWY_INLINE void QuantizeChunk(const float* HWY_RESTRICT xr, std::size_t c0, std::size_t c1, std::size_t b,
                              const float* HWY_RESTRICT eff, std::size_t j0, std::int32_t* HWY_RESTRICT codes,
                              std::uint8_t* HWY_RESTRICT fields, float* HWY_RESTRICT effrow, std::size_t last, VU& nan_acc,
                              [[maybe_unused]] const float* HWY_RESTRICT rcp_in = nullptr,
                              [[maybe_unused]] bool every_in = false) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  // Only one of the two outputs exists: no pointer arithmetic on the null one.
  auto codes_at = [&](std::size_t i) { return Offset<!kBytes>(codes, i); };
  auto fields_at = [&](std::size_t i) { return Offset<kBytes>(fields, i - c0); };
#if HWY_TARGET != HWY_SCALAR
  if (b % lanes == 0 && c0 % b == 0 && (c1 - c0) % b == 0) {
    // Whole blocks of whole vectors (the common case): the reciprocals of the chunk's scales a
    // vector at a time, then the blocks.
    const std::size_t nb = (c1 - c0) / b;  // <= max(kChunk, kFusedChunk) / lanes
    const float* HWY_RESTRICT es = eff + (c0 / b - j0);
    alignas(HWY_MAX_BYTES) float rcp_own[std::max(kChunk, kFusedChunk) / 4];
    const float* HWY_RESTRICT rcp = rcp_in != nullptr ? rcp_in + (c0 / b - j0) : rcp_own;
    const bool every = rcp_in != nullptr
                           ? every_in
                           : Reciprocals(es, nb, rcp_own, kCalibrated ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
    switch (const int shift = VectorsPerBlockLog2(b, lanes)) {
      case 0: return QuantizeBlocks<V, kBytes, 0, kCalibrated>(d, xr, c0, nb, 0, es, rcp, every, last, codes_at, fields_at, nan_acc);
      case 1: return QuantizeBlocks<V, kBytes, 1, kCalibrated>(d, xr, c0, nb, 1, es, rcp, every, last, codes_at, fields_at, nan_acc);
      case 2: return QuantizeBlocks<V, kBytes, 2, kCalibrated>(d, xr, c0, nb, 2, es, rcp, every, last, codes_at, fields_at, nan_acc);
      case 3: return QuantizeBlocks<V, kBytes, 3, kCalibrated>(d, xr, c0, nb, 3, es, rcp, every, last, codes_at, fields_at, nan_acc);
      case -1:
        for (std::size_t k = 0; k < nb; ++k) {
          (void)BlockVectors<V, kBytes>(d, xr, c0 + k * b, c0 + (k + 1) * b, es[k], rcp[k], last, codes_at, fields_at, nan_acc);
        }
        return;
      default: return QuantizeBlocks<V, kBytes, -1, kCalibrated>(d, xr, c0, nb, shift, es, rcp, every, last, codes_at, fields_at, nan_acc);
    }
  }
#endif
  if (b >= lanes) {
    // Whole vectors inside each block: broadcast its scale.
    std::size_t j = c0 / b;
    for (std::size_t c = c0; c < c1; ++j) {
      const std::size_t e = std::min((j + 1) * b, c1);
      const float s = eff[j - j0];
      const std::size_t i = BlockVectors<V, kBytes>(d, xr, c, e, s, Reciprocal(s), last, codes_at, fields_at, nan_acc);
      if (i < e) QuantizeTail<V, kBytes>(d, xr + i, nullptr, s, e - i, codes_at(i), fields_at(i), nan_acc);
      c = e;
    }
  } else {
    // Blocks narrower than a vector: one scale per lane.
    std::size_t j = c0 / b;
    for (std::size_t c = c0; c < c1; ++j) {
      const std::size_t e = std::min((j + 1) * b, c1);
      std::fill(effrow + (c - c0), effrow + (e - c0), eff[j - j0]);
      c = e;
    }
    std::size_t i = c0;
    const std::size_t far_end = FarEnd(last);
    for (; i + lanes <= c1; i += lanes) {
      PrefetchNearFar(xr, i, last, far_end);
      QuantizeVec<V, kBytes>(d, xr + i, hn::LoadU(d, effrow + (i - c0)), codes_at(i), fields_at(i), nan_acc);
    }
    if (i < c1) QuantizeTail<V, kBytes>(d, xr + i, effrow + (i - c0), 0.0f, c1 - i, codes_at(i), fields_at(i), nan_acc);
  }
}

#if QCONFORM_GROUP_KERNELS
// e2m1 fields packed two per byte (nvfp4), blocks of one vector, every block on the reciprocal
// path: 64 elements (four blocks) at a time from the registers to their 32 bytes, with the same
// codes as QuantizeVecRcp followed by PackFields. Per vector it keeps only the product, its
// magnitude, the near-boundary test and the magnitude's bits 21 up (h); per group, two
// saturating packs interleave the four vectors' h as u16 (lane j of the 128-bit lanes holds
// elements 4j..4j+3 of each vector), h - 499 saturating and one more pack give the quarter-binade
// indices as bytes in that order (MagnitudeCode's, clamped to 21 with a minimum: >= 8), one byte
// permute looks up the magnitude codes (E2m1QuarterCodes), and the products' own patterns packed
// the same way with signed saturation keep each sign in bit 7 (a negative pattern saturates to
// 0x80, a non-negative one to 0..0x7F), added as 8 where set. Codes <= 15, so w | w >> 4 on u16
// lanes puts each pair's byte in the low half, and one byte permute puts the 32 bytes in element
// order. NaN: a NaN product's magnitude is a quiet NaN (>= 0x7FC00000, h >= 1022) and a finite one
// has h <= 1019, so the largest h (u16 maximum) finds it instead of a maximum per vector. A group
// with a lane near a boundary runs QuantizeVecRcp per vector and PackFields, as does a last
// partial group. (c1 - c0) % 16 == 0; es, rcp: the chunk's effective scales and reciprocals.
// AVX3 has no byte permute across 128-bit lanes (VBMI): the codes come from two in-lane lookups
// (`vpshufb`, indices 0..15 and 16..21, merged by a mask), and the order from one 16-bit permute
// (`vpermw`: each output u16 takes the u16 whose low byte it needs) and a truncation to bytes
// (`vpmovwb`). AVX2: QuantizeNibblesAvx2 below.
struct E2m1PackTables {
  std::uint8_t quarter[64];  // magnitude code by quarter-binade index (0..21 used)
  std::uint8_t order[64];    // element order of the packed bytes (the first 32 used)
  std::uint16_t order16[32]; // the same order as u16 lanes (AVX3: vpermw, then vpmovwb)
  std::uint8_t low[64];      // quarter[0..15] in each 128-bit lane (AVX3)
  std::uint8_t high[64];     // quarter[16..31] in each 128-bit lane (AVX3)
};
constexpr E2m1PackTables MakeE2m1PackTables() {
  E2m1PackTables t{};
  constexpr QuarterCodes q = E2m1QuarterCodes();
  for (int i = 0; i < 64; ++i) t.quarter[i] = static_cast<std::uint8_t>(q.code[i < 21 ? i : 21]);
  // Output byte 8k + 2j + h packs elements 16k + 4j + 2h and + 1 (vector k, 128-bit lane j),
  // whose u16 lane sits at byte 16j + 4k + 2h of the packed vector.
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 4; ++j) {
      for (int h = 0; h < 2; ++h) {
        t.order[8 * k + 2 * j + h] = static_cast<std::uint8_t>(16 * j + 4 * k + 2 * h);
        t.order[32 + 8 * k + 2 * j + h] = 0;
        t.order16[8 * k + 2 * j + h] = static_cast<std::uint16_t>(8 * j + 2 * k + h);
      }
    }
  }
  for (int i = 0; i < 64; ++i) {
    t.low[i] = t.quarter[i % 16];
    t.high[i] = t.quarter[16 + i % 16];
  }
  return t;
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
template <class VI>
HWY_INLINE void QuantizeE2m1Packed(const float* HWY_RESTRICT xr, std::size_t c0, std::size_t c1,
                                   const float* HWY_RESTRICT es, const float* HWY_RESTRICT rcp, std::size_t last,
                                   std::uint8_t* HWY_RESTRICT out, VI& nan_acc) {
  static constexpr E2m1PackTables kTables = MakeE2m1PackTables();
  const hn::Full512<float> d;
  const hn::Full512<std::int32_t> di;
  constexpr std::size_t kLanes = 16;
  const __m512i abs_mask = Hidden(hn::Set(di, 0x7FFFFFFF)).raw;
  const __m512i offset = Hidden(hn::Set(di, 499 * 0x10001)).raw;
  const __m512i max_index = Hidden(hn::Set(di, 21 * 0x01010101)).raw;
  const __m512i eight = Hidden(hn::Set(di, 0x08080808)).raw;
#if HWY_TARGET == HWY_AVX3_DL
  const __m512i quarter = Hidden(hn::LoadU(di, reinterpret_cast<const std::int32_t*>(kTables.quarter))).raw;
  const __m512i order = Hidden(hn::LoadU(di, reinterpret_cast<const std::int32_t*>(kTables.order))).raw;
#else
  const __m512i low = Hidden(hn::LoadU(di, reinterpret_cast<const std::int32_t*>(kTables.low))).raw;
  const __m512i high = Hidden(hn::LoadU(di, reinterpret_cast<const std::int32_t*>(kTables.high))).raw;
  const __m512i sixteen = Hidden(hn::Set(di, 0x10101010)).raw;
  const __m512i order = Hidden(hn::LoadU(di, reinterpret_cast<const std::int32_t*>(kTables.order16))).raw;
#endif
  // Vectors [i, i + 16 m) one at a time (QuantizeVecRcp, then PackFields), m <= 4.
  auto per_vector = [&](std::size_t i, std::size_t m) HWY_ATTR {
    alignas(64) std::uint8_t f[4 * kLanes];
    const std::size_t k0 = (i - c0) / kLanes;
    for (std::size_t k = 0; k < m; ++k) {
      QuantizeVecRcp<Value::e2m1, true>(d, xr + i + k * kLanes, es[k0 + k], hn::Set(d, rcp[k0 + k]), nullptr,
                                        f + k * kLanes, nan_acc);
    }
    PackFields(f, m * kLanes, 2, out + (i - c0) / 2);
  };
  __m512i hmax = _mm512_setzero_si512();
  const std::size_t far_end = FarEnd(last);
  std::size_t i = c0;
  for (; i + 4 * kLanes <= c1; i += 4 * kLanes) {
    const std::size_t k0 = (i - c0) / kLanes;
    const float* HWY_RESTRICT pf = xr + std::min(i + kPrefetch, last + 1 - 4 * kLanes);
    __m512i bits[4], h[4];
    __mmask16 near = 0;
#pragma GCC unroll 4
    for (std::size_t k = 0; k < 4; ++k) {
      hwy::Prefetch(pf + k * kLanes);
      PrefetchFar(xr, i + k * kLanes, far_end);
      bits[k] = _mm512_castps_si512(_mm512_mul_ps(_mm512_loadu_ps(xr + i + k * kLanes), _mm512_set1_ps(rcp[k0 + k])));
      const __m512i a = _mm512_and_si512(bits[k], abs_mask);
      near |= NearBoundary<Value::e2m1>(a);
      h[k] = _mm512_srli_epi32(a, 21);
    }
    if (HWY_UNLIKELY(near != 0)) {
      per_vector(i, 4);
      continue;
    }
    const __m512i h01 = _mm512_packus_epi32(h[0], h[1]), h23 = _mm512_packus_epi32(h[2], h[3]);
    hmax = _mm512_max_epu16(hmax, _mm512_max_epu16(h01, h23));
    const __m512i idx = _mm512_min_epu8(
        _mm512_packus_epi16(_mm512_subs_epu16(h01, offset), _mm512_subs_epu16(h23, offset)), max_index);
    const __m512i sign = _mm512_packs_epi16(_mm512_packs_epi32(bits[0], bits[1]), _mm512_packs_epi32(bits[2], bits[3]));
#if HWY_TARGET == HWY_AVX3_DL
    __m512i code = _mm512_permutexvar_epi8(idx, quarter);
#else
    // idx <= 21: vpshufb reads its low 4 bits (bit 7 is clear), the mask picks the high table.
    __m512i code = _mm512_mask_shuffle_epi8(_mm512_shuffle_epi8(low, idx), _mm512_cmpge_epu8_mask(idx, sixteen), high, idx);
#endif
    code = _mm512_mask_add_epi8(code, _mm512_movepi8_mask(sign), code, eight);
    const __m512i pairs = _mm512_or_si512(code, _mm512_srli_epi16(code, 4));
#if HWY_TARGET == HWY_AVX3_DL
    const __m256i packed = _mm512_castsi512_si256(_mm512_permutexvar_epi8(order, pairs));
#else
    const __m256i packed = _mm512_cvtepi16_epi8(_mm512_permutexvar_epi16(order, pairs));
#endif
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (i - c0) / 2), packed);
  }
  if (i < c1) per_vector(i, (c1 - i) / kLanes);  // fewer than four blocks left (prefetched above)
  // h >= 1021 only for NaN (the largest finite magnitude has h = 1019, +Inf 1020).
  if (_mm512_cmpgt_epu16_mask(hmax, _mm512_set1_epi16(1020)) != 0) nan_acc = hn::Max(nan_acc, hn::Set(di, 0x7FC00000));
}
#else  // AVX2
// Where QuantizeNibblesAvx2's packed bytes go: a group's 16 bytes (Group), or the fields of m
// vectors, one per byte, to pack (Bytes). NibblesToMemory stores them at out[(i - c0) / 2];
// NibblesToStream hands them to a VectorStream in order (whole groups only: m == 4).
struct NibblesToMemory {
  std::uint8_t* HWY_RESTRICT out;
  std::size_t c0;
  HWY_INLINE void Group(std::size_t i, __m128i packed) const {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (i - c0) / 2), packed);
  }
  HWY_INLINE void Bytes(std::size_t i, const std::uint8_t* HWY_RESTRICT f, std::size_t count) const {
    PackFields(f, count, 2, out + (i - c0) / 2);
  }
};
struct NibblesToStream {
  VectorStream& vs;
  HWY_INLINE void Group(std::size_t, __m128i packed) const { vs.PutHalf(packed); }
  HWY_INLINE void Bytes(std::size_t, const std::uint8_t* HWY_RESTRICT f, std::size_t count) const {
    alignas(16) std::uint8_t b[16];
    PackFields(f, count, 2, b);  // count == 32
    vs.PutHalf(_mm_load_si128(reinterpret_cast<const __m128i*>(b)));
  }
};

// QuantizeE2m1Packed on AVX2, and the same for 4-bit integers (q4s, q4f): 32 elements (four
// vectors) at a time to their 16 bytes, blocks of a power of two of at least 16 elements (block of
// element c: (c >> shift) - j0 in es and rcp), or one block for the whole row (shift 63). A group's
// codes come as bytes in the order of two levels of packs (128-bit half j holds elements
// 4j..4j+3 of each vector), vpmaddubsw packs each pair (c0 + 16 c1), and the pairs' low bytes,
// taken by one vpackuswb, are put in element order by interleaving the two halves' u16 lanes (the
// bytes of vector k are half 0's pairs 2k, 2k + 1, then half 1's). A group whose check fails, and
// the last vectors of a chunk short of a group, run QuantizeVecRcp per vector and PackFields.
// (c1 - c0) % 8 == 0.
//   e2m1: the quarter-binade indices are clamped to 21 and looked up with two in-lane vpshufb
// merged by a byte blend (indices 16 up take the high table), and the sign put in by a byte blend
// on the signed packs of the products; the check is AnyNear's, NaN found by the largest h.
//   Integers: IntGroupCodes's codes, masked to their nibbles.
template <Value V, class VI, class Sink>
HWY_INLINE void QuantizeNibblesAvx2(const float* HWY_RESTRICT xr, std::size_t c0, std::size_t c1, int shift,
                                    std::size_t j0, const float* HWY_RESTRICT es, const float* HWY_RESTRICT rcp,
                                    std::size_t last, Sink&& sink, VI& nan_acc) {
  static_assert(V == Value::e2m1 || (!Fmt<V>::kMini && Fmt<V>::kBits == 4));
  static constexpr E2m1PackTables kTables = MakeE2m1PackTables();
  const hn::Full256<float> d;
  const hn::Full256<std::int32_t> di;
  constexpr std::size_t kLanes = 8;
  const __m256i pair = Konst(di, 0x10011001).raw;  // bytes 1, 16: c0 + 16 c1 per u16
  // (Captured by value: by reference, GCC reloaded shift and j0 through their addresses in every
  // group.)
  auto block = [shift, j0](std::size_t c) { return (c >> shift) - j0; };
  // Vectors [i, i + 8 m) one at a time (QuantizeVecRcp, then PackFields), m <= 4.
  auto per_vector = [&, block](std::size_t i, std::size_t m) HWY_ATTR {
    alignas(32) std::uint8_t f[4 * kLanes];
    for (std::size_t k = 0; k < m; ++k) {
      const std::size_t c = i + k * kLanes;
      QuantizeVecRcp<V, true>(d, xr + c, es[block(c)], hn::Set(d, rcp[block(c)]), nullptr, f + k * kLanes, nan_acc);
    }
    sink.Bytes(i, f, m * kLanes);
  };
  __m256i hmax = _mm256_setzero_si256();
  // The e2m1 constants, made once before the loop: those used only after the group's check had
  // been rebuilt in every group (a move and a broadcast each, on the shuffle port).
  [[maybe_unused]] const __m256i abs_mask = Konst(di, 0x7FFFFFFF).raw, offset = Konst(di, 499 * 0x10001).raw,
                                 idx_max = Konst(di, 21 * 0x01010101).raw, high_idx = Konst(di, 15 * 0x01010101).raw,
                                 sign_bit = Konst(di, 0x08080808).raw;
  [[maybe_unused]] const __m256i low = Hidden(hn::LoadU(di, reinterpret_cast<const std::int32_t*>(kTables.low))).raw;
  [[maybe_unused]] const __m256i high = Hidden(hn::LoadU(di, reinterpret_cast<const std::int32_t*>(kTables.high))).raw;
  const std::size_t far_end = FarEnd(last);
  // The group of elements [i, i + 32) to the sink, or false (nothing done) when its check fails.
  auto group = [&, far_end](std::size_t i) HWY_ATTR __attribute__((always_inline)) -> bool {
    const float* HWY_RESTRICT pf = xr + std::min(i + kPrefetch, last + 1 - 4 * kLanes);
    hwy::Prefetch(pf);
    hwy::Prefetch(pf + 2 * kLanes);
    PrefetchFar(xr, i, far_end);
    PrefetchFar(xr, i + 2 * kLanes, far_end);
    const __m256 r0 = _mm256_broadcast_ss(rcp + block(i)), r1 = _mm256_broadcast_ss(rcp + block(i + 2 * kLanes));
    const float* HWY_RESTRICT x = xr + i;
    __m256i code;
    if constexpr (V == Value::e2m1) {
      // Each pair of vectors is packed as soon as it is computed (magnitude patterns' h unsigned to
      // u16, products signed to i16 for their signs): fewer live registers.
      __m256i hp[2], sp[2];
      __m256i spread = _mm256_setzero_si256();
#pragma GCC unroll 2
      for (std::size_t p = 0; p < 2; ++p) {
        const __m256 rv = p == 0 ? r0 : r1;
        const __m256i b0 = _mm256_castps_si256(_mm256_mul_ps(_mm256_loadu_ps(x + 2 * p * kLanes), rv));
        const __m256i b1 = _mm256_castps_si256(_mm256_mul_ps(_mm256_loadu_ps(x + (2 * p + 1) * kLanes), rv));
        const __m256i a0 = _mm256_and_si256(b0, abs_mask), a1 = _mm256_and_si256(b1, abs_mask);
        spread = NearSpread<Value::e2m1>(NearSpread<Value::e2m1>(spread, a0), a1);
        hp[p] = _mm256_packus_epi32(_mm256_srli_epi32(a0, 21), _mm256_srli_epi32(a1, 21));
        sp[p] = _mm256_packs_epi32(b0, b1);
      }
      if (HWY_UNLIKELY(AnyNear<Value::e2m1>(spread))) return false;
      const __m256i h01 = hp[0], h23 = hp[1];
      hmax = _mm256_max_epu16(hmax, _mm256_max_epu16(h01, h23));
      // h - 499 <= 524: the signed pack saturates it to 127, the minimum clamps it to 21.
      const __m256i idx = _mm256_min_epu8(_mm256_packs_epi16(_mm256_subs_epu16(h01, offset), _mm256_subs_epu16(h23, offset)), idx_max);
      code = _mm256_blendv_epi8(_mm256_shuffle_epi8(low, idx), _mm256_shuffle_epi8(high, idx), _mm256_cmpgt_epi8(idx, high_idx));
      const __m256i sign = _mm256_packs_epi16(sp[0], sp[1]);
      code = _mm256_blendv_epi8(code, _mm256_or_si256(code, sign_bit), sign);
    } else {
      if (HWY_UNLIKELY(!IntGroupCodes<V>(x, r0, r0, r1, r1, code))) return false;
    }
    const __m256i pairs = _mm256_maddubs_epi16(code, pair);  // <= 255
    const __m256i bytes = _mm256_packus_epi16(pairs, pairs);
    sink.Group(i, _mm_unpacklo_epi16(_mm256_castsi256_si128(bytes), _mm256_extracti128_si256(bytes, 1)));
    return true;
  };
  // The groups' loop holds no call (GCC does not inline per_vector), so that hmax stays in a
  // register: with the call in the loop it lived on the stack, a store and a reload every group. A
  // group that fails its check leaves the loop, runs per_vector, and the loop resumes after it.
  // Session 20 (Zen 3, interleaved A/B, with the constants above): quantize nvfp4 0.92 in time at
  // 16 KiB, 0.89 at 512 KiB, 0.96 at 256 MiB; q4s two-level 0.97 at 16 KiB.
  std::size_t i = c0;
  while (i + 4 * kLanes <= c1) {
    for (; i + 4 * kLanes <= c1; i += 4 * kLanes) {
      if (HWY_UNLIKELY(!group(i))) break;
    }
    if (i + 4 * kLanes > c1) break;
    per_vector(i, 4);
    i += 4 * kLanes;
  }
  if (i < c1) per_vector(i, (c1 - i) / kLanes);  // fewer than four vectors left (prefetched above)
  if constexpr (V == Value::e2m1) {
    // h >= 1021 only for NaN (the largest finite magnitude has h = 1019, +Inf 1020); h <= 1023.
    const __m256i nan = _mm256_cmpgt_epi16(hmax, _mm256_set1_epi16(1020));
    if (_mm256_testz_si256(nan, nan) == 0) nan_acc = hn::Max(nan_acc, hn::Set(di, 0x7FC00000));
  }
}
#endif
#endif  // QCONFORM_GROUP_KERNELS

#if HWY_TARGET != HWY_SCALAR
// The fields of whole vectors by the grid of QuantizeVecRcp's kCalibrated form, four vectors at a
// time (defined below, with the argument).
template <Value V, int kShift, bool kClamp = false, unsigned kPerByte = 1, class VU, class Sink>
HWY_INLINE void GridCodes(const float* HWY_RESTRICT x, std::size_t nv, const float* HWY_RESTRICT eff,
                          const float* HWY_RESTRICT rcp, std::uint8_t* HWY_RESTRICT fields, VU& nan_acc,
                          NextChunkPrefetch pf, Sink&& sink, std::size_t far_vectors = 0);
#endif

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Elements [c0, c1) of a row, whole vectors (whole groups of four when packed), blocks of 2^shift
// vectors (62: one), nb of them from the chunk's first, scales eff: their fields at out, one per
// byte or two (per_byte), by GridCodes' clamped form.
template <Value V, class VU>
HWY_INLINE void QuantizeGridChunk(const float* HWY_RESTRICT xr, std::size_t c0, std::size_t c1, int shift, std::size_t nb,
                                  const float* HWY_RESTRICT eff, std::size_t last, unsigned per_byte,
                                  std::uint8_t* HWY_RESTRICT out, VU& nan_acc);
#endif

// Whether a kernel's `nan_acc` (the largest |x| bits it saw, or a NaN mark) holds no NaN.
template <class VI>
HWY_INLINE bool NoNanRecorded(VI nan_acc) {
  const hn::DFromV<VI> di;
  return hn::AllFalse(di, hn::Gt(nan_acc, hn::Set(di, 0x7F800000)));
}

template <Value V, bool kBytes>
bool QuantizeRowsT(const QuantizeJob& job) {
  const RowGeometry& g = job.geo;
  const float* const x_end = job.x + g.rows * g.n;
  const hn::ScalableTag<std::int32_t> di;
  auto nan_acc = hn::Zero(di);  // max |x| bits
  alignas(64) std::uint8_t fieldbuf[kChunk];
  alignas(64) float effrow[kChunk];
  alignas(64) float effchunk[kChunk + 1];  // a chunk's scales (a block may straddle each end)
  const bool stream = kBytes && g.rows * job.pack.row_bytes >= kStreamBytes;
#if HWY_TARGET == HWY_AVX2
  // One-byte fields of group-kernel values in rows of whole groups, blocks of whole groups or one
  // to the row: QuantizeGroupsStreamed.
  // And 4-bit fields packed two to a byte in rows of whole pairs of groups without padding, blocks
  // as QuantizeNibblesAvx2 takes them: QuantizeNibblesAvx2 with NibblesToStream.
  constexpr bool kNibbleValue = V == Value::e2m1 || (!Fmt<V>::kMini && Fmt<V>::kBits == 4);
  const int nibble_shift = g.b >= 16 && std::has_single_bit(g.b) ? std::countr_zero(g.b) : g.b >= g.n ? 63 : -1;
  const bool direct_bytes = kBytes && kGroupValue<V> && stream && VectorStream::Supported(job.storage) &&
                            job.pack.per_byte == 1 && job.pack.row_bytes == g.n && g.n % 32 == 0 &&
                            (g.b % 32 == 0 || g.b >= g.n);
  const bool direct_nibbles = kBytes && kNibbleValue && stream && VectorStream::Supported(job.storage) &&
                              job.pack.per_byte == 2 && job.pack.row_bytes * 2 == g.n && g.n % 64 == 0 && nibble_shift >= 0;
  const bool direct = direct_bytes || direct_nibbles;
  std::optional<VectorStream> vs;
  if (direct) vs.emplace(job.storage);
#else
  constexpr bool direct = false;
#endif
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // Integer fields one per byte, or 4-bit ones two per byte, in blocks of 1, 2, 4 or 8
  // vectors or one block per row: GridCodes' clamped form (grid_shift: the block's vectors as a
  // shift, 62 for one block, -1 for none of these).
  [[maybe_unused]] int grid_shift = -1;
  if constexpr (kBytes && !Fmt<V>::kMini) {
    const int per_block = VectorsPerBlockLog2(g.b, 16);
    if (job.pack.per_byte == 1 || (job.pack.per_byte == 2 && Fmt<V>::kBits == 4)) {
      grid_shift = per_block >= 0 && per_block <= 3 ? per_block : g.b >= g.n ? 62 : -1;
    }
  }
#endif
  StorageStream out(job.storage, stream && !direct);
  RowWalker walker(g);
  for (std::size_t r = 0; r < g.rows; ++r, walker.next()) {
    const float* xr = job.x + r * g.n;
    const std::size_t last = static_cast<std::size_t>(x_end - xr) - 1;  // rows are nonempty here
    std::int32_t* codes = nullptr;
    if constexpr (!kBytes) codes = job.codes + r * g.n;
    for (std::size_t c0 = 0; c0 < g.n; c0 += kChunk) {
      const std::size_t c1 = std::min(g.n, c0 + kChunk);
      std::uint8_t* fields = nullptr;
      if constexpr (kBytes) fields = job.pack.per_byte == 1 ? out.Next() : fieldbuf;
      const std::size_t j0 = c0 / g.b;
      const float* eff = ChunkScales(job.eff, job.scale_src, walker.base(), j0, (c1 - 1) / g.b + 1, effchunk);
      if (eff == nullptr) return false;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
      if constexpr (kBytes && V == Value::e2m1) {
        if (job.pack.per_byte == 2 && g.b == 16 && c0 % 16 == 0 && (c1 - c0) % 16 == 0) {
          const std::size_t nb = (c1 - c0) / 16;
          alignas(64) float rcp[kChunk / 16];
          if (Reciprocals(eff, nb, rcp)) {
            QuantizeE2m1Packed(xr, c0, c1, eff, rcp, last, out.Next(), nan_acc);
            out.Commit((c1 - c0) / 2);
          } else {
            QuantizeChunk<V, kBytes>(xr, c0, c1, g.b, eff, j0, codes, fields, effrow, last, nan_acc, rcp, false);
            CommitFields(out, fieldbuf, c1 - c0, job.pack);
          }
          continue;
        }
      }
      if constexpr (kBytes && !Fmt<V>::kMini) {
        if (grid_shift >= 0 && (c1 - c0) % (job.pack.per_byte == 1 ? 16 : 64) == 0) {
          QuantizeGridChunk<V>(xr, c0, c1, grid_shift, (c1 - 1) / g.b - j0 + 1, eff, last, job.pack.per_byte, out.Next(), nan_acc);
          out.Commit(PayloadBytes(c1 - c0, job.pack));
          continue;
        }
      }
#elif HWY_TARGET == HWY_AVX2
      if constexpr (kBytes && kGroupValue<V>) {
        if (direct_bytes) {
          QuantizeGroupsStreamed<V>(xr, c0, c1, g.b, eff, j0, last, *vs, nan_acc);
          continue;
        }
      }
      if constexpr (kBytes && kNibbleValue) {
        // Blocks of a power of two of at least 16 elements (c / b == c >> shift), or one per row.
        const int shift = nibble_shift;
        if (job.pack.per_byte == 2 && shift >= 0 && (c1 - c0) % 8 == 0) {
          const std::size_t nb = ((c1 - 1) >> shift) - j0 + 1;  // j0 == c0 >> shift
          alignas(32) float rcp[kChunk / 16];
          const bool every = Reciprocals(eff, nb, rcp);
          if (direct_nibbles) {
            if (every) {
              QuantizeNibblesAvx2<V>(xr, c0, c1, shift, j0, eff, rcp, last, NibblesToStream{*vs}, nan_acc);
            } else {  // (c1 - c0) / 2 is a multiple of 32
              QuantizeChunk<V, kBytes>(xr, c0, c1, g.b, eff, j0, codes, fieldbuf, effrow, last, nan_acc);
              alignas(32) std::uint8_t packed[kChunk / 2];
              PackFields(fieldbuf, c1 - c0, 2, packed);
              const hn::Full256<std::uint8_t> d8;
              for (std::size_t k = 0; k < (c1 - c0) / 2; k += 32) vs->Put(hn::Load(d8, packed + k));
            }
            continue;
          }
          if (every) {
            QuantizeNibblesAvx2<V>(xr, c0, c1, shift, j0, eff, rcp, last, NibblesToMemory{out.Next(), c0}, nan_acc);
            out.Commit((c1 - c0) / 2);
            continue;
          }
        }
      }
#endif
      QuantizeChunk<V, kBytes>(xr, c0, c1, g.b, eff, j0, codes, fields, effrow, last, nan_acc);
      if constexpr (kBytes) CommitFields(out, fieldbuf, c1 - c0, job.pack);
    }
    if constexpr (kBytes) CommitPadding(out, g.n, job.pack);
  }
#if HWY_TARGET == HWY_AVX2
  if (direct) vs->Finish();
#endif
  out.Finish();
  return NoNanRecorded(nan_acc);
}

// Max of |x| bits over [x, x + len): NaN > Inf > every finite value.
HWY_INLINE std::uint32_t AbsMaxSpan(const float* HWY_RESTRICT x, std::size_t len) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const std::size_t lanes = hn::Lanes(d);
  std::uint32_t m = 0;
  std::size_t i = 0;
  if (len >= lanes) {
    const auto abs_mask = hn::Set(di, 0x7FFFFFFF);
    auto acc = hn::Zero(di);
    for (; i + lanes <= len; i += lanes) acc = hn::Max(acc, hn::And(hn::BitCast(di, hn::LoadU(d, x + i)), abs_mask));
    m = static_cast<std::uint32_t>(hn::GetLane(hn::MaxOfLanes(di, acc)));
  }
  for (; i < len; ++i) m = std::max(m, std::bit_cast<std::uint32_t>(x[i]) & 0x7FFFFFFFu);
  return m;
}

#if HWY_TARGET != HWY_SCALAR
// Pairs the even and odd lanes of partial-maxima vectors (one per block, kN of them) for
// log2(kN) levels, until lane k of m[0] holds block k's maximum: each block's partials stay
// contiguous and aligned, about three operations per block instead of a horizontal reduction each.
template <std::size_t kN, class DI>
HWY_INLINE hn::Vec<DI> ReduceBlockMaxima(DI di, hn::Vec<DI>* HWY_RESTRICT m) {
#if HWY_TARGET == HWY_AVX2
  if constexpr (kN == 8) {
    // The same pairing within each 128-bit half (vshufps: no lane crossing) for two levels, which
    // leaves blocks 0-3 of the first half's four lanes in s[0] and 4-7 in s[1], each 128-bit half
    // holding half of every block's elements; the halves then meet in two vperm2i128 and one
    // maximum. 21 operations for 8 blocks where ConcatEven and ConcatOdd (vshufps and vpermq
    // each) take 35.
    auto pair = [](__m256i a, __m256i b) HWY_ATTR {
      const __m256 fa = _mm256_castsi256_ps(a), fb = _mm256_castsi256_ps(b);
      return _mm256_max_epi32(_mm256_castps_si256(_mm256_shuffle_ps(fa, fb, 0x88)),
                              _mm256_castps_si256(_mm256_shuffle_ps(fa, fb, 0xDD)));
    };
    const __m256i r01 = pair(m[0].raw, m[1].raw), r23 = pair(m[2].raw, m[3].raw);
    const __m256i r45 = pair(m[4].raw, m[5].raw), r67 = pair(m[6].raw, m[7].raw);
    const __m256i s0 = pair(r01, r23), s1 = pair(r45, r67);
    (void)di;
    return hn::Vec<DI>{_mm256_max_epi32(_mm256_permute2x128_si256(s0, s1, 0x20), _mm256_permute2x128_si256(s0, s1, 0x31))};
  }
#endif
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (kN == 16) {
    // Each level pairs vectors a and b as max(blend(a, b), shuffle(a, b)): one two-source shuffle
    // per pair, in-lane (vshufps) where it can be, where ConcatEven and ConcatOdd take two
    // vpermt2d (each as costly as vshufi32x4 and half again vshufps on the Zen 4 of session 23).
    // Level 1: dwords 0, 1 of each 128-bit lane against 2, 3 (block 2k in 0, 1, block 2k + 1 in 2,
    // 3); level 2: the dword pairs meet (block 4k + p in dword p); levels 3 and 4 do the same
    // with 128-bit lanes, which leaves block 4L + p in dword p of lane L: lane order.
    (void)di;
    __m512i c[8], g[4];
#pragma GCC unroll 8
    for (std::size_t k = 0; k < 8; ++k) {
      const __m512i a = m[2 * k].raw, b = m[2 * k + 1].raw;
      const __m512i p = _mm512_mask_blend_epi32(0xCCCC, a, b);
      const __m512i q = _mm512_castps_si512(_mm512_shuffle_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b), 0x4E));
      c[k] = _mm512_max_epi32(p, q);
    }
#pragma GCC unroll 4
    for (std::size_t k = 0; k < 4; ++k) {
      const __m512 a = _mm512_castsi512_ps(c[2 * k]), b = _mm512_castsi512_ps(c[2 * k + 1]);
      g[k] = _mm512_max_epi32(_mm512_castps_si512(_mm512_shuffle_ps(a, b, 0x88)), _mm512_castps_si512(_mm512_shuffle_ps(a, b, 0xDD)));
    }
    const __m512i h0 = _mm512_max_epi32(_mm512_mask_blend_epi32(0xFF00, g[0], g[1]), _mm512_shuffle_i32x4(g[0], g[1], 0x4E));
    const __m512i h1 = _mm512_max_epi32(_mm512_mask_blend_epi32(0xFF00, g[2], g[3]), _mm512_shuffle_i32x4(g[2], g[3], 0x4E));
    return hn::Vec<DI>{_mm512_max_epi32(_mm512_shuffle_i32x4(h0, h1, 0x88), _mm512_shuffle_i32x4(h0, h1, 0xDD))};
  }
#endif
#pragma GCC unroll 4
  for (std::size_t n = kN; n > 1; n /= 2) {
#if HWY_TARGET != HWY_EMU128  // g++ 12 at -O0 ignores this annotation on EMU128 and says so (-Werror)
#pragma GCC unroll 8
#endif
    for (std::size_t k = 0; k < n / 2; ++k) {
      m[k] = hn::Max(hn::ConcatEven(di, m[2 * k + 1], m[2 * k]), hn::ConcatOdd(di, m[2 * k + 1], m[2 * k]));
    }
  }
  return m[0];
}

// The block maxima of groups of Lanes blocks of b elements from x, a whole number of vectors
// each: 2^kShift of them, or with kShift = -1 any number (b / Lanes). Whole groups only, from
// block j on; each group's maxima (|x| bits, one block per lane) go to sink(j, vector) while
// still in a register. With kShift >= 0 every load and prefetch offset is a compile-time constant
// from the group's start. The prefetches (kPf) run kPrefetch ahead of the group, moved back near the end
// so that the whole group's prefetch range ends at element `last` (no pointer past the tensor;
// the group itself lies within it, so the range never starts before it).
// kAligned (AVX-512, kShift >= 1): x lies o floats (1 to 15) past a 64-byte boundary, and every
// load is of the aligned vectors instead: a block then spans lanes o to 15 of aligned vector 0,
// vectors 1 to per - 1 whole, and lanes 0 to o - 1 of vector per (the next block's vector 0).
// The caller guarantees that those vectors lie within the tensor: o floats before the group and
// 16 - o past its end.
template <int kShift, bool kPf, bool kAligned = false, class Sink>
HWY_INLINE void AbsMaxGroups(const float* HWY_RESTRICT x, std::size_t b, std::size_t blocks, std::size_t last,
                             Sink&& sink, std::size_t& j, [[maybe_unused]] std::size_t o = 0) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::RebindToUnsigned<decltype(d)> du;
  constexpr std::size_t kLanes = hn::MaxLanes(d);  // == Lanes(d) on every x86 target
  const std::size_t per = kShift >= 0 ? std::size_t{1} << std::max(kShift, 0) : b / kLanes;
  const std::size_t width = per * kLanes;
  const auto abs_mask = hn::Set(di, 0x7FFFFFFF);
  for (; j + kLanes <= blocks; j += kLanes) {
    const float* HWY_RESTRICT g = x + j * width;
    [[maybe_unused]] const float* HWY_RESTRICT pf = x + std::min(j * width + kPrefetch, last + 1 - kLanes * width);
    hn::Vec<decltype(di)> m[kLanes];
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    // The group's first aligned vector, in a register of its own: GCC 12 otherwise kept a pointer
    // per block (16 registers, some spilled) where one base with constant offsets does.
    [[maybe_unused]] const float* HWY_RESTRICT ga = g;
    if constexpr (kAligned) {
      ga = g - o;
      asm("" : "+r"(ga));
    }
#endif
#pragma GCC unroll 16
    for (std::size_t k = 0; k < kLanes; ++k) {
      if constexpr (kPf) hwy::Prefetch(pf + k * width);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
      if constexpr (kAligned) {
        static_assert(kShift >= 1, "blocks of two vectors or more");
        // Lanes o to 15 of vector 0 with vector 1 (lanes below o keep vector 1's own bits: the
        // merge), vectors 2 to per - 1, then lanes below o with vector per's. Both vrangeps with
        // a merge mask read and write one register: no copies.
        const float* HWY_RESTRICT a = ga + k * width;
        const __mmask16 hi = static_cast<__mmask16>(0xFFFFu << o), lo = static_cast<__mmask16>((1u << o) - 1);
        const __m512 v1 = _mm512_load_ps(a + kLanes);
        __m512 acc = _mm512_mask_range_ps(v1, hi, v1, _mm512_load_ps(a), 0x0B);
        if constexpr (kPf) hwy::Prefetch(pf + k * width + kLanes);
#pragma GCC unroll 8
        for (std::size_t u = 2; u < per; ++u) {
          if constexpr (kPf) hwy::Prefetch(pf + k * width + u * kLanes);
          acc = _mm512_range_ps(acc, _mm512_load_ps(a + u * kLanes), 0x0B);
        }
        acc = _mm512_mask_range_ps(acc, lo, acc, _mm512_load_ps(a + per * kLanes), 0x0B);
        m[k] = hn::BitCast(di, hn::Vec<decltype(d)>{acc});
        continue;
      }
      if (per >= 2) {
        // vrangeps (imm 0b1011: the larger magnitude, sign cleared): |a| max |b| in one operation
        // where the bit form takes two ands and a maximum. It returns the other operand for a
        // quiet NaN (IEEE maxNum), so a block's maximum can miss its NaN: see CalibrateBlocks.
        // Exact on every other input (a choice between the operands), denormals included: the
        // entry points clear DAZ (fp_guard.h).
        __m512 acc = _mm512_range_ps(hn::LoadU(d, g + k * width).raw, hn::LoadU(d, g + k * width + kLanes).raw, 0x0B);
        if constexpr (kPf) hwy::Prefetch(pf + k * width + kLanes);
#pragma GCC unroll 8
        for (std::size_t u = 2; u < per; ++u) {
          if constexpr (kPf) hwy::Prefetch(pf + k * width + u * kLanes);
          acc = _mm512_range_ps(acc, hn::LoadU(d, g + k * width + u * kLanes).raw, 0x0B);
        }
        m[k] = hn::BitCast(di, hn::Vec<decltype(d)>{acc});
        continue;
      }
#endif
      auto acc = hn::And(hn::BitCast(di, hn::LoadU(d, g + k * width)), abs_mask);
#pragma GCC unroll 8
      for (std::size_t u = 1; u < per; ++u) {
        if constexpr (kPf) hwy::Prefetch(pf + k * width + u * kLanes);
        acc = hn::Max(acc, hn::And(hn::BitCast(di, hn::LoadU(d, g + k * width + u * kLanes)), abs_mask));
      }
      m[k] = acc;
    }
    sink(j, hn::BitCast(du, ReduceBlockMaxima<kLanes>(di, m)));
  }
}

// AbsMaxGroups with aligned loads (kAligned) for the groups whose aligned vectors lie within the
// tensor (`before` elements of it precede x; `last` is its last element), with unaligned loads
// for the others: the tensor's first group when it starts off a 64-byte boundary, and the groups
// whose last aligned vector would reach past its end.
template <int kShift, bool kPf, class Sink>
HWY_INLINE void AbsMaxGroupsAligned(const float* HWY_RESTRICT x, std::size_t b, std::size_t blocks, std::size_t last,
                                    std::size_t before, std::size_t o, Sink&& sink, std::size_t& j) {
  constexpr std::size_t kLanes = hn::MaxLanes(hn::ScalableTag<float>());
  if (before < o) AbsMaxGroups<kShift, kPf>(x, b, std::min(blocks, j + kLanes), last, sink, j);
  // Group [j, j + Lanes) reads up to element (j + Lanes) b + Lanes - o - 1 <= last.
  const std::size_t end = last + 1 + o >= kLanes ? (last + 1 + o - kLanes) / b : 0;
  AbsMaxGroups<kShift, kPf, true>(x, b, std::min(blocks, end), last, sink, j, o);
  AbsMaxGroups<kShift, kPf>(x, b, blocks, last, sink, j);
}

// AbsMaxGroups for any block of whole vectors: 1, 2, 4 or 8 vectors with constant offsets. On
// AVX-512, input off a 64-byte boundary takes aligned loads (AbsMaxGroupsAligned, `before` the
// number of the tensor's elements before x) unless `before` is SIZE_MAX.
template <bool kPf, class Sink>
HWY_INLINE void AbsMaxGroupsAnyShift(const float* HWY_RESTRICT x, std::size_t b, std::size_t blocks, std::size_t last,
                                     [[maybe_unused]] std::size_t before, Sink&& sink, std::size_t& j) {
  const int shift = VectorsPerBlockLog2(b, hn::Lanes(hn::ScalableTag<float>()));
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(x);
  const std::size_t o = (addr / sizeof(float)) % 16;
  if (before != SIZE_MAX && shift >= 1 && o != 0 && addr % sizeof(float) == 0) {
    switch (shift) {
      case 1: return AbsMaxGroupsAligned<1, kPf>(x, b, blocks, last, before, o, sink, j);
      case 2: return AbsMaxGroupsAligned<2, kPf>(x, b, blocks, last, before, o, sink, j);
      default: return AbsMaxGroupsAligned<3, kPf>(x, b, blocks, last, before, o, sink, j);
    }
  }
#endif
  switch (shift) {
    case 0: return AbsMaxGroups<0, kPf>(x, b, blocks, last, sink, j);
    case 1: return AbsMaxGroups<1, kPf>(x, b, blocks, last, sink, j);
    case 2: return AbsMaxGroups<2, kPf>(x, b, blocks, last, sink, j);
    case 3: return AbsMaxGroups<3, kPf>(x, b, blocks, last, sink, j);
    default: return AbsMaxGroups<-1, kPf>(x, b, blocks, last, sink, j);
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

// SPEC §2 round-up of scales s >= 0 (not NaN) onto a dtype's grid, lane-wise, the same
// operations as detail::round_up: saturate, fixed-spacing subnormal range, else bit round-up.
// kSub false: the caller knows that no lane lies in the subnormal range (below kSubnormal<DT>).
// `over`, when given, is the lanes with s > kScaleMax<DT> (which saturate), as the caller has
// them already: calibration flags the same lanes as saturated.
template <ScaleDtype DT>
inline constexpr float kSubnormal = DT == ScaleDtype::f16 ? 0x1p-14f : DT == ScaleDtype::ue4m3 ? 0x1p-6f : 0.0f;
template <ScaleDtype DT>
inline constexpr float kScaleMax = DT == ScaleDtype::f16 ? 65504.0f : DT == ScaleDtype::bf16 ? 0x1.fep127f : 448.0f;

// The bit round-up alone (normal, unsaturated lanes of a dtype narrower than f32): clear the
// mantissa bits the dtype lacks, rounding up.
template <ScaleDtype DT, class D>
HWY_INLINE hn::Vec<D> RoundUpNormalVec(D d, hn::Vec<D> s) {
  const hn::RebindToUnsigned<D> du;
  constexpr std::uint32_t kStep = DT == ScaleDtype::f16 ? (1u << 13) : DT == ScaleDtype::bf16 ? (1u << 16) : (1u << 20);
  return hn::BitCast(d, hn::And(hn::Add(hn::BitCast(du, s), hn::Set(du, kStep - 1)), hn::Set(du, ~(kStep - 1))));
}

template <ScaleDtype DT, bool kSub = true, class D>
HWY_INLINE hn::Vec<D> RoundUpVec(D d, hn::Vec<D> s, hn::Mask<D> over) {
  if constexpr (DT == ScaleDtype::f32 || DT == ScaleDtype::ue8m0) {
    (void)over;
    return s;
  } else {
    auto up = RoundUpNormalVec<DT>(d, s);
    if constexpr (DT != ScaleDtype::bf16 && kSub) {
      constexpr float kQ = DT == ScaleDtype::f16 ? 0x1p24f : 0x1p9f;  // below kSubnormal: fixed spacing
      // Exact (powers of 2). Abs: Highway 1.0.3's scalar Ceil(+0) returns -0; s >= 0 here.
      const auto sub = hn::Mul(hn::Abs(hn::Ceil(hn::Mul(s, hn::Set(d, kQ)))), hn::Set(d, 1.0f / kQ));
      up = hn::IfThenElse(hn::Lt(s, hn::Set(d, kSubnormal<DT>)), sub, up);
    }
    // (s == kScaleMax is on the grid: up is kScaleMax there too.)
    return hn::IfThenElse(over, hn::Set(d, kScaleMax<DT>), up);
  }
}

template <ScaleDtype DT, bool kSub = true, class D>
HWY_INLINE hn::Vec<D> RoundUpVec(D d, hn::Vec<D> s) {
  if constexpr (DT == ScaleDtype::f32 || DT == ScaleDtype::ue8m0) {
    return s;
  } else {
    return RoundUpVec<DT, kSub>(d, s, hn::Gt(s, hn::Set(d, kScaleMax<DT>)));
  }
}

// The stored-scale pattern (SPEC §7) of values already on the dtype grid, as encode_scale gives
// (kSub false: as RoundUpVec).
template <ScaleDtype DT, bool kSub = true, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> EncodeScaleVec(D d, hn::Vec<D> st) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto b = hn::BitCast(du, st);
  if constexpr (DT == ScaleDtype::f32 || DT == ScaleDtype::ue8m0) {
    return b;
  } else if constexpr (DT == ScaleDtype::bf16) {
    return hn::ShiftRight<16>(b);
  } else {
    constexpr int kMbits = DT == ScaleDtype::f16 ? 10 : 3;
    constexpr int kBias = DT == ScaleDtype::f16 ? 15 : 7;
    constexpr float kQ = DT == ScaleDtype::f16 ? 0x1p24f : 0x1p9f;
    const auto normal = hn::Sub(hn::ShiftRight<23 - kMbits>(b), hn::Set(du, static_cast<std::uint32_t>(127 - kBias) << kMbits));
    if constexpr (!kSub) {
      (void)di;
      return normal;
    } else {
      // Subnormal patterns count quanta; the product is an exact small integer there (and large
      // lanes, converted with saturation, are not selected).
      const auto sub = hn::BitCast(du, hn::ConvertTo(di, hn::Mul(st, hn::Set(d, kQ))));
      return hn::IfThenElse(hn::RebindMask(du, hn::Lt(st, hn::Set(d, kSubnormal<DT>))), sub, normal);
    }
  }
}

// The first r (<= Lanes) stored-scale patterns of `enc` to little-endian bytes of the dtype's
// width (SPEC §7), whole vectors with one store (x86 is little-endian).
template <ScaleDtype DT, class DU>
HWY_INLINE void StorePatterns(DU du, hn::Vec<DU> enc, std::size_t r, std::uint8_t* HWY_RESTRICT out) {
  constexpr std::size_t w = DT == ScaleDtype::f32 ? 4 : (DT == ScaleDtype::f16 || DT == ScaleDtype::bf16) ? 2 : 1;
  if (r == hn::Lanes(du) && HWY_TARGET != HWY_SCALAR) {
    if constexpr (w == 4) {
      hn::StoreU(enc, du, reinterpret_cast<std::uint32_t*>(out));
    } else if constexpr (w == 2) {
      const hn::Rebind<std::uint16_t, DU> d16;
      hn::StoreU(hn::DemoteTo(d16, hn::BitCast(hn::RebindToSigned<DU>(), enc)), d16, reinterpret_cast<std::uint16_t*>(out));
    } else {
      hn::StoreU(LowBytes(du, enc), hn::Rebind<std::uint8_t, DU>(), out);
    }
  } else {
    constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
    alignas(HWY_MAX_BYTES) std::uint32_t cb[kMax] = {};  // (GCC cannot tell that r <= Lanes)
    hn::Store(enc, du, cb);
    for (std::size_t k = 0; k < r; ++k) detail::store_le(out + k * w, cb[k], w);
  }
}

// The first r (<= Lanes) little-endian stored-scale patterns at `in`, one per u32 lane.
template <ScaleDtype DT, class DU>
HWY_INLINE hn::Vec<DU> LoadPatterns(DU du, const std::uint8_t* HWY_RESTRICT in, std::size_t r) {
  constexpr std::size_t w = DT == ScaleDtype::f32 ? 4 : (DT == ScaleDtype::f16 || DT == ScaleDtype::bf16) ? 2 : 1;
  if (r == hn::Lanes(du) && HWY_TARGET != HWY_SCALAR) {
    if constexpr (w == 4) {
      return hn::LoadU(du, reinterpret_cast<const std::uint32_t*>(in));
    } else if constexpr (w == 2) {
      const hn::Rebind<std::uint16_t, DU> d16;
      return hn::PromoteTo(du, hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(in)));
    } else {
      return hn::PromoteTo(du, hn::LoadU(hn::Rebind<std::uint8_t, DU>(), in));
    }
  }
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
  alignas(HWY_MAX_BYTES) std::uint32_t pat[kMax] = {};
  for (std::size_t k = 0; k < r; ++k) {
    for (std::size_t b = 0; b < w; ++b) pat[k] |= static_cast<std::uint32_t>(in[k * w + b]) << (8 * b);
  }
  return hn::Load(du, pat);
}

// The largest range / 2 of any value type (e5m2's, 57344): CalibratedScaleVec's usual case relies
// on alpha >= 2^127 giving a quotient above every kScaleMax.
inline constexpr float kMaxHalfRange = 57344.0f;
static_assert([] {
  for (const ValueInfo& vi : kValues) {
    if ((vi.hi - vi.lo) / 2.0f > kMaxHalfRange) return false;
  }
  return 0x1p127f / kMaxHalfRange > 65504.0f;
}());

// Calibrated scales of one vector of blocks from their max |x| bits `a` (SPEC §8: fl(fl(2 * alpha) /
// range)), stored (round-up, SPEC §2) into `stored` and encoded into `enc`; returns the effective
// scales (0 becomes 0.1, SPEC §5). `half` is range / 2 (exact: a power-of-2 scaling of a normal float):
// below 2^127, 2 * alpha is exact, so fl(2 * alpha / range) = fl(alpha / half), one division of
// the same real number. Lanes whose maximum is NaN or ±Inf (bits from 0x7F800000), or whose
// 2 * alpha overflows (alpha from 2^127, bits from 0x7F000000), are added to `bad`, and their
// results are meaningless: the caller discards the chunk (no conversion sees them: the common path
// has only integer operations on their bits, and the subnormal one zeroes them first). Lanes whose
// stored scale is below its quotient (saturated at the dtype's maximum: quotient > kScaleMax) go
// to `saturated`. The common path (no quotient below kSubnormal) keeps no test for a zero scale
// where the dtype has subnormals: its stored scales are then at least kSubnormal.
template <ScaleDtype DT, class D>
HWY_INLINE hn::Vec<D> CalibratedScaleVec(D d, hn::Vec<hn::RebindToUnsigned<D>> a, hn::Vec<D> half,
                                         hn::Vec<D>& stored, hn::Vec<hn::RebindToUnsigned<D>>& enc,
                                         hn::Mask<D>& bad, hn::Mask<D>& saturated) {
  const hn::RebindToSigned<D> di;
  const auto quotient = hn::Div(hn::BitCast(d, a), half);
  if constexpr (kSubnormal<DT> > 0.0f) {
    // The usual case, with one test for the vector: every quotient within [kSubnormal,
    // kScaleMax], by one unsigned compare of its bits less kSubnormal's (non-negative floats order
    // as their bits; +0, NaN and ±Inf fall outside). Then no lane is invalid (a NaN or infinite
    // alpha gives a NaN or infinite quotient, and alpha from 2^127 one of at least 2^127 / 57344,
    // far above kScaleMax: kMaxHalfRange), none saturates (the round-up of a quotient up to
    // kScaleMax, which is on the grid, is at most kScaleMax), none is subnormal or zero: the
    // stored scale is the bit round-up, the effective scale the stored one. 1 to 1.5 % of
    // calibrate+quantize q8s b32 f16 in L1 and L2 on the Emerald Rapids Xeon of session 40 (four
    // operations fewer per vector than the general form below).
    static_assert(std::bit_cast<std::uint32_t>(kSubnormal<DT>) < std::bit_cast<std::uint32_t>(kScaleMax<DT>));
    const hn::RebindToUnsigned<D> du;
    constexpr std::uint32_t kLo = std::bit_cast<std::uint32_t>(kSubnormal<DT>);
    constexpr std::uint32_t kSpan = std::bit_cast<std::uint32_t>(kScaleMax<DT>) - kLo;
    const auto off = hn::Sub(hn::BitCast(du, quotient), hn::Set(du, kLo));
    if (HWY_LIKELY(hn::AllFalse(du, hn::Gt(off, hn::Set(du, kSpan))))) {
      stored = RoundUpNormalVec<DT>(d, quotient);
      enc = EncodeScaleVec<DT, false>(d, stored);
      return stored;
    }
  }
  // a <= 0x7FFFFFFF (sign cleared): a signed compare.
  const auto invalid = hn::RebindMask(d, hn::Gt(hn::BitCast(di, a), hn::Set(di, 0x7EFFFFFF)));
  bad = hn::Or(bad, invalid);
  if (kSubnormal<DT> > 0.0f && !hn::AllFalse(d, hn::Lt(quotient, hn::Set(d, kSubnormal<DT>)))) {
    const auto q = hn::IfThenZeroElse(invalid, quotient);  // no NaN reaches EncodeScaleVec's conversion
    const auto over = hn::Gt(q, hn::Set(d, kScaleMax<DT>));
    saturated = hn::Or(saturated, over);
    stored = RoundUpVec<DT>(d, q, over);
    enc = EncodeScaleVec<DT>(d, stored);
    return hn::IfThenElse(hn::Eq(stored, hn::Zero(d)), hn::Set(d, 0.1f), stored);  // burn's valid_scale
  }
  // No scale in the dtype's subnormal range (it is stored >= quotient): for f16 and ue4m3 a vector
  // with an invalid or saturated lane, for bf16 and f32 the common case.
  if constexpr (DT == ScaleDtype::f32) {
    stored = quotient;  // never saturated
  } else {
    const auto over = hn::Gt(quotient, hn::Set(d, kScaleMax<DT>));
    saturated = hn::Or(saturated, over);
    stored = RoundUpVec<DT, false>(d, quotient, over);
  }
  enc = EncodeScaleVec<DT, false>(d, stored);
  if constexpr (kSubnormal<DT> > 0.0f) {
    return stored;  // >= kSubnormal > 0 on every valid lane
  } else {
    return hn::IfThenElse(hn::Eq(stored, hn::Zero(d)), hn::Set(d, 0.1f), stored);  // burn's valid_scale
  }
}

// What CalibrateBlocks found in a chunk, as bits of one integer: GCC 12 returned three bools in
// three bytes of a register, which the caller stored one byte at a time and read back as a word,
// a store-forwarding stall of about 5 % of a 512-element call on the Zen 4 of session 22.
struct ChunkFacts {
  static constexpr unsigned kBad = 1;        // a NaN or ±Inf maximum, or 2 * alpha overflowing (the unfused path reports it)
  static constexpr unsigned kSaturated = 2;  // some block's stored scale is below its quotient
  static constexpr unsigned kEvery = 4;      // every block takes the reciprocal path
  unsigned bits = kEvery;
  [[nodiscard]] bool bad() const { return (bits & kBad) != 0; }
  [[nodiscard]] bool saturated() const { return (bits & kSaturated) != 0; }
  [[nodiscard]] bool every() const { return (bits & kEvery) != 0; }
};

// One-level minmax calibration of `blocks` consecutive blocks of b elements at x: eff[k] the
// effective scale of block k, rcp[k] = fl(1 / eff[k]) when that is on the reciprocal path (else
// `none`: the mark QuantizeChunk expects), and the stored scales encoded to `out`. Groups of Lanes
// blocks of whole vectors go from their maxima, still in registers, straight on to their scales
// and reciprocals (AbsMaxGroups), so a group's divisions overlap the next group's loads; the rest
// take one staged vector of maxima at a time. With `prefetch` (inputs of kFarPrefetchBytes and
// more) the input is prefetched into L1 kPrefetch ahead, up to element `last` of x; below, it is
// in a cache, the hardware prefetcher keeps up, and one prefetch per vector only takes load slots
// (on the Zen 4 of session 23: 0.97 in time at 16 KiB and 512 KiB without). `before`: the number
// of the tensor's elements before x, for aligned loads of input off a 64-byte boundary, or
// SIZE_MAX for none (AbsMaxGroupsAnyShift). The two lambdas are
// forced inline: with both forms of AbsMaxGroups in here GCC 12 stopped inlining them, and the
// masks they update went through memory (1.04 and 1.09 in time). Not inlined itself: one copy
// per target and dtype serves every value type.
// A block's maximum is NaN or ±Inf (ChunkFacts::kBad) when it holds ±Inf or a signaling NaN, or
// only NaN; a quiet NaN among other values may be missed on AVX-512 (AbsMaxGroups), and is found
// by the codes pass instead (CalibrateQuantizeRowsT's nan_acc).
template <ScaleDtype DT>
HWY_NOINLINE ChunkFacts CalibrateBlocks(const float* HWY_RESTRICT x, std::size_t b, std::size_t blocks,
                                        [[maybe_unused]] std::size_t last, [[maybe_unused]] std::size_t before,
                                        [[maybe_unused]] bool prefetch, float range, float none, float* HWY_RESTRICT eff,
                                        float* HWY_RESTRICT rcp, std::uint8_t* HWY_RESTRICT out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  constexpr std::size_t kLanes = hn::MaxLanes(d);  // == Lanes(d) on every x86 target
  constexpr std::size_t w = DT == ScaleDtype::f32 ? 4 : (DT == ScaleDtype::f16 || DT == ScaleDtype::bf16) ? 2 : 1;
  auto bad = hn::FirstN(d, 0);
  auto saturated = bad;
  auto off_path = bad;
  const auto half = hn::Set(d, range * 0.5f);  // exact (CalibratedScaleVec)
  // Every f16 and ue4m3 effective scale (a stored scale from 2^-24 or 2^-9 to 65504 or 448, or
  // 0.1) lies within [kRcpMinEff, kRcpMaxEff]: no test.
  constexpr bool kAlwaysOnPath = DT == ScaleDtype::f16 || DT == ScaleDtype::ue4m3;
  // The first r lanes of a vector of maxima, blocks j to j + r.
  auto scales = [&](std::size_t j, hn::Vec<decltype(du)> a, std::size_t r) HWY_ATTR __attribute__((always_inline)) {
    auto enc = hn::Zero(du);
    auto stored = hn::Zero(d);
    const auto e = CalibratedScaleVec<DT>(d, a, half, stored, enc, bad, saturated);
    hn::Vec<decltype(d)> rc;
    if constexpr (kAlwaysOnPath) {
      rc = hn::Div(hn::Set(d, 1.0f), e);
    } else {
      const auto ok = hn::And(hn::Ge(e, hn::Set(d, kRcpMinEff)), hn::Le(e, hn::Set(d, kRcpMaxEff)));
      rc = hn::IfThenElse(ok, hn::Div(hn::Set(d, 1.0f), e), hn::Set(d, none));
      off_path = hn::Or(off_path, r == kLanes ? hn::Not(ok) : hn::AndNot(ok, hn::FirstN(d, r)));
    }
    if (r == kLanes) {
      hn::StoreU(e, d, eff + j);
      hn::StoreU(rc, d, rcp + j);
    } else {
      alignas(HWY_MAX_BYTES) float eb[kLanes], rb[kLanes];
      hn::Store(e, d, eb);
      hn::Store(rc, d, rb);
      std::copy(eb, eb + r, eff + j);
      std::copy(rb, rb + r, rcp + j);
    }
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || (HWY_TARGET == HWY_AVX2 && !defined(HWY_DISABLE_F16C))
    if constexpr (DT == ScaleDtype::f16) {
      if (r == kLanes) {
        // The stored scales are f16 values (its grid, subnormals included, up to 65504; invalid
        // lanes are discarded), so vcvtps2ph is exact, with the rounding of its immediate (never
        // MXCSR's): two operations where EncodeScaleVec and the narrowing store take four. 1 % of
        // calibrate+quantize q8s b32 f16 at 16 KiB on the Emerald Rapids Xeon of session 40; on
        // AVX2 (F16C, part of Highway's AVX2 target) 0.5 % in L1 and L2 on the same Xeon (session 41).
#if HWY_TARGET == HWY_AVX2
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j * w),
                         _mm256_cvtps_ph(stored.raw, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j * w),
                            _mm512_cvtps_ph(stored.raw, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
        return;
      }
    }
#endif
    StorePatterns<DT>(du, enc, r, out + j * w);
  };
  std::size_t j = 0;
#if HWY_TARGET != HWY_SCALAR
  if (b % kLanes == 0) {
    // One group behind: a group's scales come after the next group's maxima in program order.
    std::size_t pending = SIZE_MAX;
    auto pending_max = hn::Zero(du);
    auto full = [&](std::size_t k, hn::Vec<decltype(du)> a) HWY_ATTR __attribute__((always_inline)) {
      if (pending != SIZE_MAX) scales(pending, pending_max, kLanes);
      pending = k;
      pending_max = a;
    };
    if (prefetch) {
      AbsMaxGroupsAnyShift<true>(x, b, blocks, last, before, full, j);
    } else {
      AbsMaxGroupsAnyShift<false>(x, b, blocks, last, before, full, j);
    }
    if (pending != SIZE_MAX) scales(pending, pending_max, kLanes);
  }
#endif
  for (; j < blocks; j += kLanes) {
    const std::size_t r = std::min(kLanes, blocks - j);
    // Built in a register (padding lanes: maximum 0, harmless): a vector load of scalar stores
    // waits for them to reach L1 (no store forwarding), a quarter of a one-block call's time here.
    auto a = hn::Zero(du);
    for (std::size_t k = 0; k < r; ++k) {
      const auto lane = hn::Eq(hn::Iota(du, 0), hn::Set(du, static_cast<std::uint32_t>(k)));
      a = hn::IfThenElse(lane, hn::Set(du, AbsMaxSpan(x + (j + k) * b, b)), a);
    }
    scales(j, a, r);
  }
  return {(hn::AllFalse(d, bad) ? 0u : ChunkFacts::kBad) | (hn::AllFalse(d, saturated) ? 0u : ChunkFacts::kSaturated) |
          (hn::AllFalse(d, off_path) ? ChunkFacts::kEvery : 0u)};
}

HWY_INLINE ChunkFacts CalibrateChunk(ScaleDtype dt, const float* x, std::size_t b, std::size_t blocks, std::size_t last,
                                     std::size_t before, bool prefetch, float range, float none, float* eff, float* rcp,
                                     std::uint8_t* out) {
  switch (dt) {
    case ScaleDtype::f32: return CalibrateBlocks<ScaleDtype::f32>(x, b, blocks, last, before, prefetch, range, none, eff, rcp, out);
    case ScaleDtype::f16: return CalibrateBlocks<ScaleDtype::f16>(x, b, blocks, last, before, prefetch, range, none, eff, rcp, out);
    case ScaleDtype::bf16: return CalibrateBlocks<ScaleDtype::bf16>(x, b, blocks, last, before, prefetch, range, none, eff, rcp, out);
    case ScaleDtype::ue4m3: return CalibrateBlocks<ScaleDtype::ue4m3>(x, b, blocks, last, before, prefetch, range, none, eff, rcp, out);
    case ScaleDtype::ue8m0: break;  // rejected by validate_scheme
  }
  return {ChunkFacts::kBad};
}

// Decode of stored-scale patterns (u32 lanes holding w-byte patterns) to floats, exact, and
// whether each pattern is one serialize writes (no sign bit, not NaN or infinite).
template <ScaleDtype DT, class D>
HWY_INLINE hn::Vec<D> DecodeScaleVec(D d, hn::Vec<hn::RebindToUnsigned<D>> e, hn::Mask<D>& ok) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  if constexpr (DT == ScaleDtype::f32 || DT == ScaleDtype::ue8m0) {
    const auto v = hn::BitCast(d, e);
    ok = hn::And(hn::RebindMask(d, hn::Eq(hn::ShiftRight<31>(e), hn::Zero(du))), hn::IsFinite(v));
    return v;
  } else if constexpr (DT == ScaleDtype::bf16) {
    const auto v = hn::BitCast(d, hn::ShiftLeft<16>(e));
    ok = hn::And(hn::RebindMask(d, hn::Eq(hn::ShiftRight<15>(e), hn::Zero(du))), hn::IsFinite(v));
    return v;
  } else {
    constexpr int kMbits = DT == ScaleDtype::f16 ? 10 : 3;
    constexpr int kBias = DT == ScaleDtype::f16 ? 15 : 7;
    constexpr int kWidth = DT == ScaleDtype::f16 ? 15 : 7;
    constexpr std::uint32_t kBad = DT == ScaleDtype::f16 ? 0x7C00u : 0x7Fu;  // first Inf/NaN magnitude
    constexpr float kQuantum = DT == ScaleDtype::f16 ? 0x1p-24f : 0x1p-9f;
    ok = hn::RebindMask(d, hn::Lt(hn::BitCast(di, e), hn::Set(di, static_cast<std::int32_t>(kBad))));  // sign clear too
    const auto normal = hn::BitCast(d, hn::Add(hn::ShiftLeft<23 - kMbits>(e), hn::Set(du, static_cast<std::uint32_t>(127 - kBias) << 23)));
    const auto sub = hn::Mul(hn::ConvertTo(d, hn::BitCast(di, e)), hn::Set(d, kQuantum));
    (void)kWidth;
    return hn::IfThenElse(hn::RebindMask(d, hn::Lt(hn::BitCast(di, e), hn::Set(di, 1 << kMbits))), sub, normal);
  }
}

// Dequantize's scales: the effective scales of `count` stored patterns, nothing else kept (no
// stored values, no encodings). Whether every pattern is one serialize writes is one maximum of
// the patterns (a sign bit, or a magnitude from the dtype's first Inf or NaN pattern up, lies at
// or above kBad), and whether no product with the global overflows one maximum of the effective
// scales' patterns (SPEC §3.5, §7): a call with either is handed to the reference. On AVX2, f16
// and ue4m3 patterns are converted by vcvtph2ps (exact); a ue4m3 pattern shifted into an f16 one
// is its value times 2^-8, and the 2^8 goes into the global (exact when finite: a global above
// FLT_MAX / 256 takes the arithmetic decode).
template <ScaleDtype DT>
HWY_INLINE bool EffOfPatterns(const std::uint8_t* HWY_RESTRICT encoded, std::size_t count, bool has_global, float global,
                              float* HWY_RESTRICT eff_out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const std::size_t lanes = hn::Lanes(d);
  constexpr std::size_t w = DT == ScaleDtype::f32 ? 4 : (DT == ScaleDtype::f16 || DT == ScaleDtype::bf16) ? 2 : 1;
  constexpr std::uint32_t kBad = DT == ScaleDtype::f32 ? 0x7F800000u
                                 : DT == ScaleDtype::bf16 ? 0x7F80u
                                 : DT == ScaleDtype::f16  ? 0x7C00u
                                                          : 0x7Fu;
  auto pmax = hn::Zero(du);  // the largest pattern
  auto emax = hn::Zero(du);  // the largest effective scale's pattern
  const auto tenth = Konst(d, 0.1f);
  auto finish = [&](hn::Vec<decltype(d)> eff, float* HWY_RESTRICT out) {
    emax = hn::Max(emax, hn::BitCast(du, eff));
    hn::StoreU(hn::IfThenElse(hn::Eq(eff, hn::Zero(d)), tenth, eff), d, out);  // burn's valid_scale
  };
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
  alignas(HWY_MAX_BYTES) std::uint8_t tail_in[kMax * 4] = {};
  alignas(HWY_MAX_BYTES) float tail_out[kMax];
  const std::size_t whole = count - count % lanes;
  const std::size_t r = count - whole;
  std::copy(encoded + whole * w, encoded + count * w, tail_in);
  // one(patterns, out) on every whole vector in place, then on the tail's zero-padded copy.
  auto each_vector = [&](auto&& one) {
    for (std::size_t i = 0; i < whole; i += lanes) one(encoded + i * w, eff_out + i);
    if (r > 0) {
      one(tail_in, tail_out);
      std::copy(tail_out, tail_out + r, eff_out + whole);
    }
  };
#if HWY_TARGET == HWY_AVX2
  constexpr float kUnscale = DT == ScaleDtype::ue4m3 ? 256.0f : 1.0f;
  if constexpr (DT == ScaleDtype::f16 || DT == ScaleDtype::ue4m3) {
    if (!(has_global && global > std::numeric_limits<float>::max() / kUnscale)) {
      const auto g = Konst(d, has_global ? global * kUnscale : kUnscale);
      __m128i pmax16 = _mm_setzero_si128();
      auto one = [&](const std::uint8_t* in, float* HWY_RESTRICT out) {
        __m128i p;
        if constexpr (DT == ScaleDtype::f16) {
          p = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
        } else {
          p = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in)));
        }
        pmax16 = _mm_max_epu16(pmax16, p);
        if constexpr (DT == ScaleDtype::ue4m3) p = _mm_slli_epi16(p, 7);
        finish(hn::Mul(g, hn::Vec<decltype(d)>{_mm256_cvtph_ps(p)}), out);
      };
      each_vector(one);
      const __m128i over = _mm_subs_epu16(pmax16, _mm_set1_epi16(static_cast<short>(kBad - 1)));  // 0 unless above
      return _mm_testz_si128(over, over) && hn::AllFalse(du, hn::Gt(emax, hn::Set(du, 0x7F7FFFFFu)));
    }
  }
#endif
  const auto g = Konst(d, global);
  auto one = [&](const std::uint8_t* in, float* HWY_RESTRICT out) {
    const auto e = LoadPatterns<DT>(du, in, lanes);
    pmax = hn::Max(pmax, e);
    hn::Mask<decltype(d)> ok;
    const auto stored = DecodeScaleVec<DT>(d, e, ok);
    finish(has_global ? hn::Mul(g, stored) : stored, out);
  };
  each_vector(one);
  return hn::AllFalse(du, hn::Gt(pmax, hn::Set(du, kBad - 1))) && hn::AllFalse(du, hn::Gt(emax, hn::Set(du, 0x7F7FFFFFu)));
}

// Scales [begin, begin + count) of `job`: their effective scales to eff_out[0..count), the stored
// ones to stored_out[0..count) when it is given, the encoded ones to the job's out_encoded (at
// their own index) when it has one. The job's fields are read once, into locals: the stores below
// may alias it for all the compiler knows.
template <ScaleDtype DT>
bool ScalesT(const detail::ScaleJob& job, std::size_t begin, std::size_t count, float* HWY_RESTRICT eff_out,
             float* HWY_RESTRICT stored_out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::RebindToSigned<decltype(d)> di;
  const std::size_t lanes = hn::Lanes(d);
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
  constexpr std::size_t w = DT == ScaleDtype::f32 ? 4 : (DT == ScaleDtype::f16 || DT == ScaleDtype::bf16) ? 2 : 1;
  // Raw scales whose pattern is below this one, but not 0, take the dtype's subnormal round-up and
  // encoding (none for f32 and bf16).
  constexpr std::uint32_t kSubBits = std::bit_cast<std::uint32_t>(kSubnormal<DT>);
  const float* HWY_RESTRICT raw = job.raw != nullptr ? job.raw + begin : nullptr;
  const std::uint8_t* HWY_RESTRICT encoded = job.encoded != nullptr ? job.encoded + begin * w : nullptr;
  if (raw == nullptr && stored_out == nullptr && job.out_encoded == nullptr) {
    return EffOfPatterns<DT>(encoded, count, job.has_global, job.global, eff_out);
  }
  std::uint8_t* HWY_RESTRICT out_encoded = job.out_encoded != nullptr ? job.out_encoded + begin * w : nullptr;
  const bool has_global = job.has_global;
  const auto g = hn::Set(d, job.global);
  auto bad = hn::Zero(du);
  // Raw scales: the largest pattern of the scales (-0 made +0) and of their effective scales.
  // The patterns above the largest finite float's are exactly those of NaN, ±Inf and negative
  // nonzero values (SPEC §3.5's invalid scales), and of effective scales that overflow to +Inf (the
  // global scale is finite and not negative, so a valid scale never gives NaN): one maximum per
  // vector instead of a mask each. A call with one is handed to the reference, so no other lane's
  // result matters then.
  auto worst = hn::Zero(du);
  alignas(HWY_MAX_BYTES) float buf[kMax] = {};
  for (std::size_t i = 0; i < count; i += lanes) {
    const std::size_t r = std::min(lanes, count - i);
    const bool full = r == lanes;  // whole vectors load and store in place; a tail is staged
    hn::Vec<decltype(d)> stored;
    auto enc = hn::Zero(du);
    if (raw != nullptr) {
      if (!full) std::copy(raw + i, raw + i + r, buf);  // (only the last vector; the rest stays 0)
      auto v = full ? hn::LoadU(d, raw + i) : hn::Load(d, buf);
      v = hn::IfThenZeroElse(hn::Eq(v, hn::Zero(d)), v);  // -0.0 is +0.0
      const auto bits = hn::BitCast(du, v);
      worst = hn::Max(worst, bits);
      bool sub = false;
      if constexpr (kSubBits != 0) sub = !hn::AllFalse(du, hn::Lt(hn::Sub(bits, hn::Set(du, 1u)), hn::Set(du, kSubBits - 1u)));
      if (sub) {
        stored = RoundUpVec<DT>(d, v);  // a lane in (0, kSubnormal): the full forms
        if (out_encoded != nullptr) enc = EncodeScaleVec<DT>(d, stored);
      } else {
        // No lane in the subnormal range (the common case): the normal-range round-up, exact for 0
        // too, and the normal-range encoding, whose pattern for 0 is negative as a signed integer
        // (the maximum with 0 makes it 0; every other stored scale is normal, its pattern positive).
        stored = RoundUpVec<DT, false>(d, v);
        if (out_encoded != nullptr) {
          enc = EncodeScaleVec<DT, false>(d, stored);
          if constexpr (kSubBits != 0) enc = hn::BitCast(du, hn::Max(hn::BitCast(di, enc), hn::Zero(di)));
        }
      }
    } else {
      hn::Mask<decltype(d)> ok;
      stored = DecodeScaleVec<DT>(d, LoadPatterns<DT>(du, encoded + i * w, r), ok);
      bad = hn::Or(bad, hn::VecFromMask(du, hn::RebindMask(du, hn::Not(ok))));
      stored = hn::IfThenElseZero(ok, stored);
      if (out_encoded != nullptr) enc = EncodeScaleVec<DT>(d, stored);
    }
    auto eff = stored;
    if (has_global) {
      eff = hn::Mul(g, stored);
      if (raw != nullptr) {
        worst = hn::Max(worst, hn::BitCast(du, eff));
      } else {
        bad = hn::Or(bad, hn::VecFromMask(du, hn::RebindMask(du, hn::IsInf(eff))));
      }
    }
    eff = hn::IfThenElse(hn::Eq(eff, hn::Zero(d)), hn::Set(d, 0.1f), eff);  // burn's valid_scale
    if (full) {
      hn::StoreU(eff, d, eff_out + i);
      if (stored_out != nullptr) hn::StoreU(stored, d, stored_out + i);
    } else {
      alignas(HWY_MAX_BYTES) float ob[kMax];
      hn::Store(eff, d, ob);
      std::copy(ob, ob + r, eff_out + i);
      if (stored_out != nullptr) {
        hn::Store(stored, d, ob);
        std::copy(ob, ob + r, stored_out + i);
      }
    }
    if (out_encoded != nullptr) StorePatterns<DT>(du, enc, r, out_encoded + i * w);
  }
  bad = hn::Or(bad, hn::VecFromMask(du, hn::Gt(worst, hn::Set(du, 0x7F7FFFFFu))));
  return hn::AllFalse(du, hn::Ne(bad, hn::Zero(du)));
}

bool ScalesRange(const detail::ScaleJob& job, std::size_t begin, std::size_t count, float* eff, float* stored) {
  switch (job.dtype) {
    case ScaleDtype::f32: return ScalesT<ScaleDtype::f32>(job, begin, count, eff, stored);
    case ScaleDtype::f16: return ScalesT<ScaleDtype::f16>(job, begin, count, eff, stored);
    case ScaleDtype::bf16: return ScalesT<ScaleDtype::bf16>(job, begin, count, eff, stored);
    case ScaleDtype::ue4m3: return ScalesT<ScaleDtype::ue4m3>(job, begin, count, eff, stored);
    case ScaleDtype::ue8m0: break;  // rejected by validate_scheme
  }
  return false;
}

bool Scales(const detail::ScaleJob& job) { return ScalesRange(job, 0, job.count, job.eff, job.stored); }

#if HWY_TARGET != HWY_SCALAR
// Whether any lane of the four sums fails the tie half of QuantizeVecRcp's kCalibrated check
// ((t & kGridFrac) == 0). Its NaN half (kGridNaN) is GridCodes' OR of the sums.
template <class DU>
HWY_INLINE bool AnyNearTie(DU du, hn::Vec<DU> t0, hn::Vec<DU> t1, hn::Vec<DU> t2, hn::Vec<DU> t3, hn::Vec<DU> frac) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // The lanes that pass, as a chain of masked vptestmd (each keeps the lanes that passed so
  // far), and one kortest for "all 16 pass": no mask arithmetic on port 0, where the shifts and
  // this loop's other mask operations run.
  (void)du;
  __mmask16 pass = _mm512_test_epi32_mask(t0.raw, frac.raw);
  pass = _mm512_mask_test_epi32_mask(pass, t1.raw, frac.raw);
  pass = _mm512_mask_test_epi32_mask(pass, t2.raw, frac.raw);
  pass = _mm512_mask_test_epi32_mask(pass, t3.raw, frac.raw);
  return _kortestc_mask16_u8(pass, pass) == 0;
#elif HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
  // The least (t & frac) of the four is 0 exactly in the lanes where one fails: three unsigned
  // minima and one compare instead of four compares and three ors.
  const auto m = hn::Min(hn::Min(hn::And(t0, frac), hn::And(t1, frac)), hn::Min(hn::And(t2, frac), hn::And(t3, frac)));
  return !hn::AllFalse(du, hn::Eq(m, hn::Zero(du)));
#else
  const auto z = hn::Zero(du);
  const auto m01 = hn::Or(hn::Eq(hn::And(t0, frac), z), hn::Eq(hn::And(t1, frac), z));
  const auto m23 = hn::Or(hn::Eq(hn::And(t2, frac), z), hn::Eq(hn::And(t3, frac), z));
  return !hn::AllFalse(du, hn::Or(m01, m23));
#endif
}

// IfVecThenElse for a selector whose bytes are each all ones or all zeros: one byte blend on the
// targets that have one and no ternary logic (AVX2, SSE4), where IfVecThenElse is three operations.
// On AVX-512 the ternary logic overwrites its first operand: Highway's IfVecThenElse puts the
// selector there, a constant, which GCC 12 then copies every time (one register move per select
// in GridCodes' loop); here `no` goes first (sel ? yes : no is truth table 0xD8 with the
// operands no, yes, sel), a value that dies in the select.
template <class V>
HWY_INLINE V ByteSelect(V sel, V yes, V no) {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_SSE4
  return hn::IfThenElse(hn::MaskFromVec(sel), yes, no);
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return V{_mm512_ternarylogic_epi32(no.raw, yes.raw, sel.raw, 0xD8)};
#else
  return hn::IfVecThenElse(sel, yes, no);
#endif
}

// Byte u of u32 lane i of `w` is lane i's field of vector u (u < 4): the four vectors' fields in
// memory order, vector 0's lanes first. (AVX3_DL gathers with vpmultishiftqb instead and never
// calls this: GridCodes.)
template <class DU>
HWY_INLINE hn::Vec<hn::Repartition<std::uint8_t, DU>> FourVectorFields(DU du, hn::Vec<DU> w) {
  const hn::Repartition<std::uint8_t, DU> d8;
  // A 4x4 byte transpose in each 16-byte block: u32 lane u of block B then holds lanes 4B to
  // 4B + 3 of vector u. Then that lane, 4B + u, moves to (Lanes / 4) u + B.
  alignas(16) static constexpr std::uint8_t kT[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
  auto t = hn::TableLookupBytes(hn::BitCast(d8, w), hn::LoadDup128(d8, kT));
  constexpr std::size_t kLanes = hn::MaxLanes(du);
  if constexpr (kLanes == 8) {
    alignas(32) static constexpr std::int32_t kL[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    t = hn::BitCast(d8, hn::TableLookupLanes(hn::BitCast(du, t), hn::SetTableIndices(du, kL)));
  } else if constexpr (kLanes == 16) {
    alignas(64) static constexpr std::int32_t kL[16] = {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15};
    t = hn::BitCast(d8, hn::TableLookupLanes(hn::BitCast(du, t), hn::SetTableIndices(du, kL)));
  } else {
    static_assert(kLanes == 4, "one 16-byte block: the transpose is all");
  }
  return t;
}

// The fields of nv whole vectors at x, in blocks of 2^kShift vectors of calibrated, unsaturated
// integer scales (QuantizeVecRcp's kCalibrated form, whose argument covers every lane here):
// block k has effective scale eff[k] and reciprocal rcp[k] (NaN: the division). Four vectors at a
// time: when every lane of the four passes the tie check (AnyNearTie), their fields (bits 14 to 21
// of each sum t) are gathered into one vector in memory order and handed to the sink, where
// vector by vector took a shift, a gather and a store each; otherwise the four go through
// QuantizeVecRcp one by one (the division for the lanes that need it). The gather: shifts to
// bytes 0 to 3 of one u32 vector, three bitwise selects and one byte permute (FourVectorFields;
// 17 vector operations for four vectors on AVX3_DL until session 37, where vector by vector took
// 20). On AVX3_DL since session 37, four vpmultishiftqb instead, each copying the fields of one
// vector (bits 14 to 21 of the two u32 lanes of every qword) into its own two bytes of each
// qword, the last three under a byte mask that keeps the others, then one vpermb: 14 operations,
// and 3.5 to 4 % less time for calibrate+quantize of 4096 elements on the Emerald Rapids Xeon of
// session 37, where shifts run on port 0 only and vpmultishiftqb, vpermb and vptestmd on port 5
// only (nine port-5 operations per four vectors then, against seven on either port). Since
// session 39 vector 0 takes a shift instead (port 0): its fields to byte 0 of each u32 lane, the
// other three by vpmultishiftqb into bytes 1 to 3 (byte 4i + u of the gather is the field of
// lane i of vector u, as in FourVectorFields), then one vpermb: eight operations on port 5, two
// on port 0, six on either, and 3 to 4 % less time for calibrate+quantize in L1 and L2 on the
// same Xeon. Fields go to fields[0, nv * Lanes).
// Line i < pf.lines of pf.at (64 bytes each) is prefetched along the way (into L1 or L2 as pf.l1
// says), four vectors' worth of lines per four vectors.
//
// kClamp (AVX-512, since session 47; CalibratedCodes until then): the same for given scales, which
// bound nothing (quantize_into with integer values: QuantizeRowsT). Each sum is clamped to
// [kGridLo, kGridHi] = M + [lo - 1/4, hi + 1/4] (M = kGridM; both on the grid of [512, 1024),
// so exact), a minimum and a maximum per vector, NaN kept (vminps and vmaxps return their second
// operand when either is NaN, and the sum is that operand). The argument (p = x * rcp exactly,
// rcp = fl(1 / eff) normal so |p - x / eff| <= |x / eff| 2^-24, y = fl(x / eff), t = fl(p + M),
// one rounding: AVX-512 fuses the multiply-add):
// - t > kGridHi: p + M > kGridHi - 2^-15 (t rounds to the grid, or to a coarser one from 1024 up),
//   so p > hi + 1/4 - 2^-15 and x / eff > p (1 - 2^-23) > hi - 1/2, and y too (hi - 1/2 is a
//   float and rounding is monotonic): y rounds to hi or more, and the code clamps to hi. The
//   clamped t is kGridHi: frac 3/4 + 2^-14 passes, K = hi. So does t == kGridHi.
// - t < kGridLo: likewise y < lo + 1/2, code lo; kGridLo has frac 1/4 + 2^-14 and K = lo.
// - t within: |p| <= 128.25 + 2^-15, so |x / eff| < 128.5, |p - x / eff| < 2^-17 and
//   |x / eff - y| <= 2^-17 (half an ulp, from 128 up): e = |t - (y + M)| < 2^-15 + 2^-16, the
//   bound of QuantizeVecRcp's kCalibrated argument, which then holds as it stands (it needs
//   nothing else of the scale): a passing lane has y strictly inside (K - 1/2, K + 1/2), and K is
//   in [lo, hi] since t is, so its code is K.
// ±Inf x, and products that overflow, clamp like any large value. A block off the reciprocal
// path has rcp NaN (Reciprocals' `none`), whose NaN sums fail every lane; the four vectors then
// take QuantizeVecRcp's plain form (two-sided check, then the division), as do groups with a tie.
// kPerByte 2 (4-bit values packed two per byte): the gather's pairs (lanes 2m and 2m + 1 of
// vector u: bytes u and 4 + u of qword m) meet in byte u by a 64-bit shift of 28 and a bitwise
// select of the low nibbles, and one vpermb (AVX3: a vpshufb and a vpermw) takes the 32 bytes in
// memory order; the sink gets a 256-bit vector. The fallback packs its four vectors' fields
// (PackFields).
// far_vectors: the groups that start below it also prefetch their far lines (PrefetchFarAt; up to
// three vectors past FarEnd, which kFarFloats leaves room for many times over).
template <Value V, int kShift, bool kClamp, unsigned kPerByte, class VU, class Sink>
HWY_INLINE void GridCodes(const float* HWY_RESTRICT x, std::size_t nv, const float* HWY_RESTRICT eff,
                          const float* HWY_RESTRICT rcp, std::uint8_t* HWY_RESTRICT fields, VU& nan_acc,
                          [[maybe_unused]] NextChunkPrefetch pf, Sink&& sink, std::size_t far_vectors) {
  static_assert(!kClamp || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL, "the clamped form is AVX-512's");
  static_assert(kPerByte == 1 || (kPerByte == 2 && kClamp && Fmt<V>::kBits == 4), "bytes, or 4-bit fields in pairs");
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::Repartition<std::uint8_t, decltype(du)> d8;
  constexpr std::size_t kLanes = hn::MaxLanes(d);  // == Lanes(d) on every x86 target
  // The block of vector v + u, v a multiple of 4: (v >> kShift) + kOff[u].
  constexpr std::size_t kOff[4] = {0, kShift == 0 ? 1u : 0u, kShift == 0 ? 2u : kShift == 1 ? 1u : 0u,
                                   kShift == 0 ? 3u : kShift == 1 ? 1u : 0u};
  const auto m = Konst(d, kGridM);
  const auto frac = Konst(du, kGridFrac);
#if HWY_TARGET == HWY_AVX3_DL
  // Control bytes 14 (0x0E) in bytes 1 to 3 of each qword and 46 (0x2E) in bytes 5 to 7: each
  // takes the field of the qword's low or high u32 lane. Vector u's multishift writes bytes u and
  // 4 + u of each qword (mask 0x22, 0x44, 0x88 per qword); bytes 0 and 4 are vector 0's, from its
  // shift. After the four, byte 4i + u of w is the field of lane i of vector u; kMsIdx moves it
  // to byte 16u + i.
  const auto ms_ctl = Konst(hn::Repartition<std::uint64_t, decltype(du)>(), 0x2E2E2E000E0E0E00ull);
  alignas(64) static constexpr std::uint8_t kMsIdx[64] = {
      0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61,
      2, 6, 10, 14, 18, 22, 26, 30, 34, 38, 42, 46, 50, 54, 58, 62, 3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47, 51, 55, 59, 63};
  const auto ms_idx = Hidden(hn::Load(d8, kMsIdx));
  // kPerByte 2: output byte 8u + m is byte u of qword m of the selected pairs.
  alignas(64) static constexpr std::uint8_t kNibIdx[64] = {
      0, 8, 16, 24, 32, 40, 48, 56, 1, 9, 17, 25, 33, 41, 49, 57, 2, 10, 18, 26, 34, 42, 50, 58, 3, 11, 19, 27, 35, 43, 51, 59};
  [[maybe_unused]] const auto nib_idx = Hidden(hn::Load(d8, kNibIdx));
#else
  const auto sel1 = Konst(du, 0x0000FF00u), sel2 = Konst(du, 0x00FF0000u), sel3 = Konst(du, 0xFF000000u);
#endif
#if HWY_TARGET == HWY_AVX3
  // kPerByte 2: the order of the pairs (the gather below).
  alignas(16) static constexpr std::uint8_t kPairShuf[16] = {0, 8, 1, 9, 2, 10, 3, 11, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
  alignas(64) static constexpr std::uint16_t kPairWords[32] = {0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27};
  [[maybe_unused]] const auto pair_shuf = Hidden(hn::LoadDup128(d8, kPairShuf));
  [[maybe_unused]] const auto pair_words = Hidden(hn::Load(hn::Repartition<std::uint16_t, decltype(du)>(), kPairWords));
#endif
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  [[maybe_unused]] const auto nibble_lo = Konst(du, 0x0F0F0F0Fu);
  [[maybe_unused]] const auto grid_lo = Konst(d, kGridM + (Fmt<V>::kLo - 0.25f));
  [[maybe_unused]] const auto grid_hi = Konst(d, kGridM + (Fmt<V>::kHi + 0.25f));
#endif
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // The OR of the sums of every group that passed AnyNearTie: kGridNaN set when one was NaN (a
  // quiet NaN x whose payload sets bits 2 to 13 passes the tie check). Only AVX-512 needs it: its
  // block maxima (vrangeps) can miss a quiet NaN; elsewhere they find every NaN first.
  __m512i sums = _mm512_setzero_si512();
#endif
  std::size_t v = 0;
  for (; v + 4 <= nv; v += 4) {
    const float* HWY_RESTRICT p = x + v * kLanes;
    const std::size_t k = v >> kShift;
    // Four vectors' worth of pf's lines (4, 2 or 1), none at or past line pf.lines, into L1 or L2
    // (the next chunk's maxima pass prefetches them again into L1, kPrefetch ahead). Without far
    // prefetches (pf.at null, inputs below kFarPrefetchBytes) a predicted branch skips the range's
    // bounds arithmetic, scalar operations that take turns on the vector ports: 1 to 2 % of
    // calibrate+quantize q8s at 16 KiB and 512 KiB on the Emerald Rapids Xeon of session 38.
    if (pf.at != nullptr) {
      const std::size_t from = v * kLanes * sizeof(float), bytes = 4 * kLanes * sizeof(float);
      if (pf.l1) {
        PrefetchBytes<false>(pf.at, from, bytes, pf.at + pf.lines * 16);
      } else {
        PrefetchBytes<true>(pf.at, from, bytes, pf.at + pf.lines * 16);
      }
    }
    if (kClamp && v < far_vectors) {
#pragma GCC unroll 4
      for (std::size_t u = 0; u < 4; ++u) PrefetchFarAt(p, u * kLanes);
    }
    hn::Vec<decltype(du)> t[4];
#pragma GCC unroll 4
    for (std::size_t u = 0; u < 4; ++u) {
      // The load folds into the multiply-add, which GCC 12 then has overwrite a copy of the
      // broadcast reciprocal (a register move, eliminated at rename). From session 26 to 37 x was
      // loaded into a register of its own (Hidden) for the multiply-add to overwrite, 1.5 % faster
      // at 16 KiB on the Zen 4 of session 26; on the Emerald Rapids Xeon of session 38 GCC 12 then
      // loaded every vector into one register and copied it out, and the folded form is 2 % faster
      // (36 instructions per four vectors against 39).
      const auto sum = hn::MulAdd(hn::LoadU(d, p + u * kLanes), hn::Set(d, rcp[k + kOff[u]]), m);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
      if constexpr (kClamp) {
        t[u] = hn::BitCast(du, hn::Vec512<float>{_mm512_max_ps(grid_lo.raw, _mm512_min_ps(grid_hi.raw, sum.raw))});
      } else {
        t[u] = hn::BitCast(du, sum);
      }
#else
      t[u] = hn::BitCast(du, sum);
#endif
    }
    if (HWY_UNLIKELY(AnyNearTie(du, t[0], t[1], t[2], t[3], frac))) {
      alignas(HWY_MAX_BYTES) std::uint8_t four[4 * kLanes];
      for (std::size_t u = 0; u < 4; ++u) {
        QuantizeVecRcp<V, true, !kClamp>(d, p + u * kLanes, eff[k + kOff[u]], hn::Set(d, rcp[k + kOff[u]]), nullptr,
                                         four + u * kLanes, nan_acc);
      }
      if constexpr (kPerByte == 2) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
        alignas(32) std::uint8_t packed[2 * kLanes];
        PackFields(four, 4 * kLanes, 2, packed);
        sink(v, _mm256_load_si256(reinterpret_cast<const __m256i*>(packed)));
#endif
      } else {
        sink(v, hn::Load(d8, four));
      }
      continue;
    }
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    sums = _mm512_ternarylogic_epi32(sums, t[0].raw, t[1].raw, 0xFE);  // a | b | c
    sums = _mm512_ternarylogic_epi32(sums, t[2].raw, t[3].raw, 0xFE);
#endif
#if HWY_TARGET == HWY_AVX3_DL
    // (Bits 8 to 17 of the shift, t[0]'s exponent, are overwritten by the three multishifts.)
    __m512i w = _mm512_srli_epi32(t[0].raw, 14);
    w = _mm512_mask_multishift_epi64_epi8(w, 0x2222222222222222ull, ms_ctl.raw, t[1].raw);
    w = _mm512_mask_multishift_epi64_epi8(w, 0x4444444444444444ull, ms_ctl.raw, t[2].raw);
    w = _mm512_mask_multishift_epi64_epi8(w, 0x8888888888888888ull, ms_ctl.raw, t[3].raw);
    if constexpr (kPerByte == 2) {
      // Byte u of qword m: the low nibble of byte u (lane 2m) and that of byte 4 + u (lane 2m + 1).
      const __m512i pairs = ByteSelect(nibble_lo, hn::Vec512<std::uint32_t>{w},
                                       hn::Vec512<std::uint32_t>{_mm512_srli_epi64(w, 28)}).raw;
      sink(v, _mm512_castsi512_si256(_mm512_permutexvar_epi8(nib_idx.raw, pairs)));
    } else {
      if constexpr (Fmt<V>::kBits < 8) w = _mm512_and_si512(w, Konst(du, Fmt<V>::kMask * 0x01010101u).raw);
      sink(v, hn::Vec512<std::uint8_t>{_mm512_permutexvar_epi8(ms_idx.raw, w)});
    }
#else
    auto w = ByteSelect(sel1, hn::ShiftRight<6>(t[1]), hn::ShiftRight<14>(t[0]));
    w = ByteSelect(sel2, hn::ShiftLeft<2>(t[2]), w);
    w = ByteSelect(sel3, hn::ShiftLeft<10>(t[3]), w);
#if HWY_TARGET == HWY_AVX3
    if constexpr (kPerByte == 2) {
      // As AVX3_DL's (byte 4i + u of w is lane i of vector u here too), then the order without
      // vpermb: 128-bit lane L holds pairs m = 2L + j of vector u at byte 8j + u; vpshufb puts
      // them at byte 2u + j (u16 u of the lane), vpermw u16 8L + u at 4u + L, byte 8u + m.
      const __m512i pairs = ByteSelect(nibble_lo, w, hn::Vec512<std::uint32_t>{_mm512_srli_epi64(w.raw, 28)}).raw;
      const __m512i lanes = _mm512_shuffle_epi8(pairs, pair_shuf.raw);
      sink(v, _mm512_castsi512_si256(_mm512_permutexvar_epi16(pair_words.raw, lanes)));
    } else
#endif
    {
      if constexpr (Fmt<V>::kBits < 8) w = hn::And(w, Konst(du, Fmt<V>::kMask * 0x01010101u));
      sink(v, FourVectorFields(du, w));
    }
#endif
  }
  // (Never with a sink that keeps no fields, nor with kPerByte 2: nv is then a multiple of 4.)
  for (; kPerByte == 1 && v < nv; ++v) {
    QuantizeVecRcp<V, true, !kClamp>(d, x + v * kLanes, eff[v >> kShift], hn::Set(d, rcp[v >> kShift]), nullptr,
                                     fields + v * kLanes, nan_acc);
  }
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if (HWY_UNLIKELY(_mm512_test_epi32_mask(sums, Konst(du, kGridNaN).raw) != 0)) {
    nan_acc = hn::Set(hn::DFromV<VU>(), 0x7FFFFFFF);  // the |bits| of a NaN
  }
#endif
}
#endif  // HWY_TARGET != HWY_SCALAR

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
template <Value V, class VU>
HWY_INLINE void QuantizeGridChunk(const float* HWY_RESTRICT xr, std::size_t c0, std::size_t c1, int shift, std::size_t nb,
                                  const float* HWY_RESTRICT eff, std::size_t last, unsigned per_byte,
                                  std::uint8_t* HWY_RESTRICT out, VU& nan_acc) {
  constexpr std::size_t kLanes = 16;
  alignas(64) float rcp[kChunk / kLanes];
  (void)Reciprocals(eff, nb, rcp, std::numeric_limits<float>::quiet_NaN());  // NaN: the division
  const std::size_t nv = (c1 - c0) / kLanes;
  // The lines kPrefetch ahead of each group, within the tensor (as PrefetchAhead's), into L1.
  NextChunkPrefetch pf;
  const std::size_t ahead = c0 + kPrefetch;
  pf.lines = ahead <= last ? std::min(nv, (last - ahead + 1) / kLineFloats) : 0;
  pf.at = pf.lines > 0 ? xr + ahead : nullptr;
  pf.l1 = true;
  const std::size_t far_end = FarEnd(last);
  const std::size_t far_vectors = far_end > c0 ? (far_end - c0 + kLanes - 1) / kLanes : 0;
  const float* HWY_RESTRICT x = xr + c0;
  auto run = [&](auto per_byte_c, auto sink) HWY_ATTR {
    constexpr unsigned kPerByte = decltype(per_byte_c)::value;
    switch (shift) {
      case 0: return GridCodes<V, 0, true, kPerByte>(x, nv, eff, rcp, out, nan_acc, pf, sink, far_vectors);
      case 1: return GridCodes<V, 1, true, kPerByte>(x, nv, eff, rcp, out, nan_acc, pf, sink, far_vectors);
      case 2: return GridCodes<V, 2, true, kPerByte>(x, nv, eff, rcp, out, nan_acc, pf, sink, far_vectors);
      case 3: return GridCodes<V, 3, true, kPerByte>(x, nv, eff, rcp, out, nan_acc, pf, sink, far_vectors);
      default: return GridCodes<V, 62, true, kPerByte>(x, nv, eff, rcp, out, nan_acc, pf, sink, far_vectors);
    }
  };
  if constexpr (Fmt<V>::kBits == 4) {
    if (per_byte == 2) {
      return run(std::integral_constant<unsigned, 2>(), [out](std::size_t v, __m256i packed) HWY_ATTR {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + v * (kLanes / 2)), packed);
      });
    }
  }
  run(std::integral_constant<unsigned, 1>(), [out](std::size_t v, hn::Vec512<std::uint8_t> bytes) HWY_ATTR {
    hn::StoreU(bytes, hn::Full512<std::uint8_t>(), out + v * kLanes);
  });
}
#endif

// The codes of elements [c0, c1) of a row whose blocks have calibrated, unsaturated integer scales
// (kCalibrated; eff, rcp and `every` as QuantizeChunk takes them): four vectors at a time when a
// block is 1, 2, 4 or 8 vectors (GridCodes), else QuantizeChunk's loops.
template <Value V, class VU>
HWY_INLINE void CalibratedChunk(const float* HWY_RESTRICT xr, std::size_t c0, std::size_t c1, std::size_t b, std::size_t j0,
                                const float* HWY_RESTRICT eff, const float* HWY_RESTRICT rcp, bool every,
                                std::uint8_t* HWY_RESTRICT fields, float* HWY_RESTRICT effrow, std::size_t last, VU& nan_acc,
                                [[maybe_unused]] NextChunkPrefetch pf) {
  static_assert(!Fmt<V>::kMini, "calibrated codes are integers");
#if HWY_TARGET != HWY_SCALAR
  const std::size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  if (b % lanes == 0 && c0 % b == 0 && (c1 - c0) % b == 0) {
    const std::size_t nv = (c1 - c0) / lanes;
    const float* HWY_RESTRICT es = eff + (c0 / b - j0);
    const float* HWY_RESTRICT rs = rcp + (c0 / b - j0);
    const hn::Repartition<std::uint8_t, hn::ScalableTag<float>> d8;
    auto store = [fields, lanes, d8](std::size_t v, hn::Vec<decltype(d8)> bytes) HWY_ATTR {
      hn::StoreU(bytes, d8, fields + v * lanes);
    };
    switch (VectorsPerBlockLog2(b, lanes)) {
      case 0: return GridCodes<V, 0>(xr + c0, nv, es, rs, fields, nan_acc, pf, store);
      case 1: return GridCodes<V, 1>(xr + c0, nv, es, rs, fields, nan_acc, pf, store);
      case 2: return GridCodes<V, 2>(xr + c0, nv, es, rs, fields, nan_acc, pf, store);
      case 3: return GridCodes<V, 3>(xr + c0, nv, es, rs, fields, nan_acc, pf, store);
      default: break;
    }
  }
#endif
  QuantizeChunk<V, true, true>(xr, c0, c1, b, eff, j0, nullptr, fields, effrow, last, nan_acc, rcp, every);
}

// One-level per-block minmax calibration and quantize in one pass (SPEC §8 then §5): per chunk,
// the block maxima, each block's scale exactly as calibrate and quantize compute it and its
// reciprocal (CalibrateBlocks), then the codes while the chunk is still in L1. Returns false,
// having written garbage, when the data holds NaN or ±Inf or a block's 2 * alpha overflows: the
// caller then takes the unfused path, which reports the reference's error.
template <Value V>
bool CalibrateQuantizeRowsT(const CalibrateQuantizeJob& job) {
  using F = Fmt<V>;
  const RowGeometry& g = job.geo;
  const float* const x_end = job.x + g.rows * g.n;
  const hn::ScalableTag<std::int32_t> di;
  // NaN lanes of the codes pass: every one fails QuantizeVecRcp's check and takes the division
  // path, which records it here, or is found in the OR of GridCodes' sums, which sets it
  // here. The block maxima may miss a quiet NaN (AbsMaxGroups' vrangeps).
  auto nan_acc = hn::Zero(di);
  alignas(64) std::uint8_t fieldbuf[kFusedChunk];
  alignas(64) float effrow[kFusedChunk];
  alignas(64) float eff[kFusedChunk];
  alignas(64) float rcp[kFusedChunk];
  const std::size_t b = g.b;
  const std::size_t chunk = (g.rows * g.n * sizeof(float) > kFusedSmallBytes ? kChunk : kFusedChunk) / b * b;
  const std::size_t w = scale_bytes(job.dtype);
  const float range = F::kHi - F::kLo;
  // The division path's mark in rcp: NaN fails every integer check (calibrated or not, see
  // QuantizeVecRcp), 0 is what the minifloat loops test for.
  const float none = F::kMini ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  const bool stream = g.rows * job.pack.row_bytes >= kStreamBytes;
  // The codes pass prefetches the next chunk into L1 or L2, the maxima pass its own input into L1
  // (far); in L2 or L3 (near) the codes pass prefetches into L1 on the CPUs that take L1 from DRAM.
  const std::size_t in_bytes = g.rows * g.n * sizeof(float);
  const bool far = in_bytes >= kFarPrefetchBytes;
  const bool pf_l1 = (far || in_bytes >= kNearChunkPrefetchBytes) && detail::ChunkPrefetchL1(HWY_TARGET);
  const bool near = !far && pf_l1;
  // The maxima pass loads aligned vectors from input that is not (AbsMaxGroupsAnyShift), in the
  // caches: with far prefetches (from DRAM) it keeps the unaligned form measured before.
  const bool aligned = in_bytes > kAlignedMaximaBytes && !far;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
  // Streamed one-byte codes of calibrated blocks of 1, 2, 4 or 8 whole vectors, in rows of whole
  // groups of four vectors: GridCodes hands each group's fields (one byte vector) to a
  // VectorStream (QuantizeChunk's, where a chunk saturates, go through fieldbuf).
  const std::size_t group = 4 * hn::Lanes(di);
  const int shift = VectorsPerBlockLog2(b, hn::Lanes(di));
  const bool direct = !F::kMini && stream && job.pack.per_byte == 1 && job.pack.row_bytes == g.n && g.n % group == 0 &&
                      chunk % group == 0 && g.b % hn::Lanes(di) == 0 && shift >= 0 && shift <= 3 &&
                      VectorStream::Supported(job.storage);
  std::optional<VectorStream> vs;  // built only when used: its splice tables cost a small call
  if (direct) vs.emplace(job.storage);
  const hn::Repartition<std::uint8_t, decltype(di)> d8;
  auto put = [&vs](std::size_t, hn::Vec<decltype(d8)> bytes) HWY_ATTR { vs->Put(bytes); };
#else
  constexpr bool direct = false;
#endif
  StorageStream out(job.storage, stream && !direct);
  RowWalker walker(g);
  for (std::size_t r = 0; r < g.rows; ++r, walker.next()) {
    const float* xr = job.x + r * g.n;
    const std::size_t last = static_cast<std::size_t>(x_end - xr) - 1;  // rows are nonempty here
    for (std::size_t c0 = 0; c0 < g.n; c0 += chunk) {
      const std::size_t c1 = std::min(g.n, c0 + chunk);
      const std::size_t j0 = c0 / b;
      const std::size_t blocks = (c1 - c0) / b;
      const ChunkFacts f =
          CalibrateChunk(job.dtype, xr + c0, b, blocks, last - c0, aligned ? static_cast<std::size_t>(xr + c0 - job.x) : SIZE_MAX,
                         far, range, none, eff, rcp, job.scales + (walker.base() + j0) * w);
      if (f.bad()) return false;
      // From kFarPrefetchBytes of input on, the codes pass also prefetches the next
      // chunk's input lines, kPrefetch ahead, every one of them: without them memory idles while
      // the codes are computed. (Session 12's one line per four vectors was enough on the Xeon;
      // on the EPYC of session 13, paired with the ceiling at 256 MiB, it gave 0.70 of it and
      // every line 1.0.) Until session 14 only streamed outputs (inputs of 64 MiB and more)
      // prefetched, which left 16 to 64 MiB without (see optimized/README.md). Into L1 or L2 as
      // ChunkPrefetchL1 says, read once above: L2 on most CPUs (on the Zen 4 of session 14, into
      // L1 they held its miss buffers and ran at 0.65 of the ceiling), L1 on the AVX-512 targets
      // of the Zen 5 of session 45 (optimized.h, set_chunk_prefetch).
      // Below kFarPrefetchBytes, from kNearChunkPrefetchBytes on and where ChunkPrefetchL1 says
      // L1, the whole next chunk from its first line (the maxima pass prefetches nothing there).
      const std::size_t ahead = c1 + (far ? kPrefetch : 0);
      NextChunkPrefetch pf;
      pf.lines = (far || near) && ahead <= last ? std::min((c1 - c0) / 16, (last - ahead + 1) / 16) : 0;
      pf.at = pf.lines > 0 ? xr + ahead : nullptr;
      pf.l1 = pf_l1;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
      if constexpr (!F::kMini) {
        if (direct) {
          if (!f.saturated()) {
            const std::size_t nv = (c1 - c0) / hn::Lanes(di);
            switch (shift) {
              case 0: GridCodes<V, 0>(xr + c0, nv, eff, rcp, nullptr, nan_acc, pf, put); break;
              case 1: GridCodes<V, 1>(xr + c0, nv, eff, rcp, nullptr, nan_acc, pf, put); break;
              case 2: GridCodes<V, 2>(xr + c0, nv, eff, rcp, nullptr, nan_acc, pf, put); break;
              default: GridCodes<V, 3>(xr + c0, nv, eff, rcp, nullptr, nan_acc, pf, put); break;
            }
          } else {
            QuantizeChunk<V, true>(xr, c0, c1, b, eff, j0, nullptr, fieldbuf, effrow, last, nan_acc, rcp, f.every());
            for (std::size_t i = 0; i < c1 - c0; i += hn::Lanes(d8)) vs->Put(hn::Load(d8, fieldbuf + i));
          }
          continue;
        }
      }
#endif
      std::uint8_t* fields = job.pack.per_byte == 1 ? out.Next() : fieldbuf;
      bool calibrated = false;  // the kCalibrated codes (QuantizeVecRcp) apply
      if constexpr (!F::kMini) {
        calibrated = !f.saturated();
        if (calibrated) CalibratedChunk<V>(xr, c0, c1, b, j0, eff, rcp, f.every(), fields, effrow, last, nan_acc, pf);
      }
      if (!calibrated) QuantizeChunk<V, true>(xr, c0, c1, b, eff, j0, nullptr, fields, effrow, last, nan_acc, rcp, f.every());
      CommitFields(out, fieldbuf, c1 - c0, job.pack);
    }
    if (!direct) CommitPadding(out, g.n, job.pack);
  }
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
  if (direct) vs->Finish();
#endif
  out.Finish();
  return NoNanRecorded(nan_acc);
}

// Per-block max of |x| bits for calibration (blocks of any shape, via the row walker).
void AbsMaxRowsImpl(const AbsMaxJob& job) {
  const RowGeometry& g = job.geo;
  RowWalker walker(g);
  for (std::size_t r = 0; r < g.rows; ++r, walker.next()) {
    const float* xr = job.x + r * g.n;
    std::uint32_t* amax = job.amax + walker.base();
    std::size_t j = 0;
    for (std::size_t c = 0; c < g.n; ++j) {
      const std::size_t e = std::min(c + g.b, g.n);
      amax[j] = std::max(amax[j], AbsMaxSpan(xr + c, e - c));
      c = e;
    }
  }
}

// ------------------------------------------------------------------ dequantize

// 8-bit minifloat fields (e4m3, e5m2), which AVX2 decodes through f16 (DequantizeValue).
template <Value V, bool kBytes>
constexpr bool F16Decode() {
  return kBytes && Fmt<V>::kMini && Fmt<V>::kBits == 8;
}

#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// The f16 decode's bit rule (F16Decode: e4m3, e5m2), for 16-bit lanes of any width holding the
// sign-extended fields: the field shifted into an f16 pattern whose value is the code's times
// 2^(bias - 15), exactly for every code (the minifloat's subnormals become f16 subnormals; e5m2 is
// the upper half of f16 already, e4m3's copy of the sign in bit 14 is cleared). vcvtph2ps of the
// result is exact.
template <Value V, class V16>
HWY_INLINE V16 F16Patterns(V16 widened) {
  using F = Fmt<V>;
  static_assert(F16Decode<V, true>());
  V16 h = hn::ShiftLeft<10 - F::kMbits>(widened);
  if constexpr (10 - F::kMbits < 8) h = hn::And(h, hn::Set(hn::DFromV<V16>(), static_cast<std::int16_t>(0xBFFF)));
  return h;
}
#endif

// Running bounds of the codes a dequantize call has read. Every code is canonical (SPEC §7) when,
// at the end, each lane of `lo` is at least the least allowed code and each lane of `hi` (and, for
// minifloats, of `mag`) at most the greatest: a minimum or maximum per vector instead of
// comparisons and mask arithmetic. Zero to start with: code 0 is canonical for every value.
// `value_lo` (AVX-512's packed 4-bit integers, which look the code's value up: DequantizeValue):
// the least decoded value, at least the least allowed code when every code is canonical.
template <class DI>
struct CodeBounds {
  explicit CodeBounds(DI di)
      : lo(hn::Zero(di)), hi(hn::Zero(di)), mag(hn::Zero(di)), value_lo(hn::Zero(hn::RebindToFloat<DI>())) {}
  hn::Vec<DI> lo, hi, mag;
  hn::Vec<hn::RebindToFloat<DI>> value_lo;
};

template <Value V, bool kBytes, class DI>
HWY_INLINE bool CodesCanonical(DI di, const CodeBounds<DI>& b) {
  using F = Fmt<V>;
  auto bound = [&](std::int64_t v) { return hn::Set(di, static_cast<std::int32_t>(v)); };
  if constexpr (!F::kMini) {
    // lo: the codes; hi: the fields (they may hold bits above the value's width) or the codes.
    constexpr auto kLoCode = static_cast<std::int64_t>(F::kLo), kHiCode = static_cast<std::int64_t>(F::kHi);
    const hn::RebindToFloat<DI> df;
    return hn::AllFalse(di, hn::Lt(b.lo, bound(kLoCode))) && hn::AllFalse(di, hn::Gt(b.hi, bound(kBytes ? F::kMask : kHiCode))) &&
           hn::AllFalse(df, hn::Lt(b.value_lo, hn::Set(df, F::kLo)));
  } else {
    // lo, hi: the codes (sign and magnitude fields); mag: their magnitudes.
    bool mag_ok = hn::AllFalse(di, hn::Gt(b.mag, bound(F::kMaxCode)));
#if HWY_TARGET == HWY_AVX2
    // The 8-bit minifloat decode (DequantizeValue) keeps a maximum per 16-bit lane.
    if constexpr (F16Decode<V, kBytes>()) {
      const hn::Repartition<std::int16_t, DI> d16;
      mag_ok = hn::AllFalse(d16, hn::Gt(hn::BitCast(d16, b.mag), hn::Set(d16, static_cast<std::int16_t>(F::kMaxCode))));
    }
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    // The 8-bit minifloat decode (DequantizeValue) keeps a maximum per byte (each below 0x80).
    if constexpr (F16Decode<V, kBytes>()) {
      const hn::Repartition<std::int8_t, DI> d8;
      mag_ok = hn::AllFalse(d8, hn::Gt(hn::BitCast(d8, b.mag), hn::Set(d8, static_cast<std::int8_t>(F::kMaxCode))));
    }
#endif
    return mag_ok && hn::AllFalse(di, hn::Lt(b.lo, hn::Zero(di))) && hn::AllFalse(di, hn::Gt(b.hi, bound(2 * F::kMagMask + 1)));
  }
}

#if HWY_TARGET == HWY_AVX2
// Lane k: the 32-bit word at `fields` shifted down by 4k, its k-th nibble in the low 4 bits.
template <class DI>
HWY_INLINE __m256i NibbleLanes(DI di, const std::uint8_t* HWY_RESTRICT fields) {
  alignas(32) static constexpr std::int32_t kShifts[8] = {0, 4, 8, 12, 16, 20, 24, 28};
  std::int32_t word;
  std::memcpy(&word, fields, sizeof(word));
  return _mm256_srlv_epi32(_mm256_set1_epi32(word), Hidden(hn::Load(di, kShifts)).raw);
}
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Lane k: the k-th nibble of the 8 bytes at `fields` in its low 4 bits, other bits anything.
// AVX3_DL: one vpmultishiftqb of the broadcast qword (a vpbroadcastq from memory, a load), byte 0
// of lane k taken from bit 4k; AVX3: lane k gets dword k / 8 (vpermd), shifted down by 4 (k % 8)
// (vpsrlvd).
HWY_INLINE __m512i NibbleLanes(const std::uint8_t* HWY_RESTRICT fields) {
  std::int64_t qword;
  std::memcpy(&qword, fields, sizeof(qword));
#if HWY_TARGET == HWY_AVX3_DL
  // Qword j: control byte 0 is 8j (lane 2j), byte 4 is 8j + 4 (lane 2j + 1); the others, 0, make
  // bits the lookup ignores.
  const hn::Full512<std::uint64_t> d64;
  alignas(64) static constexpr std::uint64_t kCtl[8] = {
      0x0000000400000000ull, 0x0000000C00000008ull, 0x0000001400000010ull, 0x0000001C00000018ull,
      0x0000002400000020ull, 0x0000002C00000028ull, 0x0000003400000030ull, 0x0000003C00000038ull};
  return _mm512_multishift_epi64_epi8(Hidden(hn::Load(d64, kCtl)).raw, _mm512_set1_epi64(qword));
#else
  const hn::Full512<std::int32_t> d32;
  alignas(64) static constexpr std::int32_t kHalf[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  alignas(64) static constexpr std::int32_t kShifts[16] = {0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28};
  const __m512i both = _mm512_zextsi128_si512(_mm_cvtsi64_si128(qword));
  return _mm512_srlv_epi32(_mm512_permutexvar_epi32(Hidden(hn::Load(d32, kHalf)).raw, both), Hidden(hn::Load(d32, kShifts)).raw);
#endif
}
#endif

// One vector of dequantize: eff * decode(q), the codes taken into `bounds`. kNibbles (AVX2 and
// AVX-512, 4-bit fields packed two per byte: e2m1, q4f, q4s): `fields` points at the vector's
// packed bytes (4 on AVX2, 8 on AVX-512), and each lane takes its nibble of the broadcast word
// (NibbleLanes). No UnpackFields pass. AVX2: e2m1 (every nibble canonical: no NaN or Inf) looks
// its magnitude up with one vpermps, the nibble's top bit the sign: 5 operations where the
// arithmetic decode below takes 9; an integer nibble is sign-extended by two shifts, and only q4s
// has a code (-8) to reject. AVX-512 (since session 48): one vpermps looks the nibble's value up
// among all 16, for integers too (the code as a float, exact as ConvertTo is); q4s keeps the least
// value (`value_lo`, one vminps) to reject -8. 3 or 4 operations on AVX3_DL, 4 or 5 on AVX3, where
// the unpacked fields took an UnpackFields pass and then 5 (integers) or 3 per vector.
template <Value V, bool kBytes, bool kNibbles = false, bool kF16 = false, class D, class DI>
HWY_INLINE hn::Vec<D> DequantizeValue(D d, const std::uint8_t* HWY_RESTRICT fields, const std::int32_t* HWY_RESTRICT codes,
                                      hn::Vec<D> eff, CodeBounds<DI>& bounds) {
  using F = Fmt<V>;
  const DI di;
  const hn::RebindToUnsigned<D> du;
#if HWY_TARGET == HWY_AVX2
  if constexpr (kNibbles && !F::kMini) {
    static_assert(F::kBits == 4 && kBytes);
    const __m256i nib = NibbleLanes(di, fields);
    const hn::Vec<DI> code{_mm256_srai_epi32(_mm256_slli_epi32(nib, 28), 28)};
    if constexpr (F::kLo > -8) bounds.lo = hn::Min(bounds.lo, code);
    return hn::Mul(eff, hn::ConvertTo(d, code));
  } else if constexpr (kNibbles) {
    static_assert(V == Value::e2m1 && kBytes);
    const __m256i nib = NibbleLanes(di, fields);
    // The magnitudes: the first 8 of kE2m1Values (vpermps reads the low 3 bits of each index).
    const __m256 mag = _mm256_permutevar8x32_ps(Hidden(hn::Load(d, detail::kE2m1Values.data())).raw, nib);
    const __m256i sign = _mm256_and_si256(_mm256_slli_epi32(nib, 28), Konst(di, std::numeric_limits<std::int32_t>::min()).raw);
    return hn::Mul(eff, hn::Vec256<float>{_mm256_or_ps(mag, _mm256_castsi256_ps(sign))});
  }
  if constexpr (kF16) {
    static_assert(F16Decode<V, kBytes>());
    // e4m3, e5m2: the sign-extended field shifted into an f16 pattern (F16Patterns) and
    // vcvtph2ps (exact). `eff` comes multiplied by 2^(15 - bias) (DequantizeRowsT: exact, the
    // chunk's scales checked), so the one product is fl(eff * decode) as in the arithmetic decode
    // below: 6 operations where that takes 12. The magnitudes' maximum is kept per 16-bit lane
    // (CodesCanonical).
    const __m128i w = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(fields)));
    const __m128i mag = _mm_and_si128(w, _mm_set1_epi16(static_cast<short>(F::kMagMask)));
    bounds.mag = hn::Vec256<std::int32_t>{_mm256_max_epu16(bounds.mag.raw, _mm256_zextsi128_si256(mag))};
    const __m128i h = F16Patterns<V>(hn::Vec128<std::int16_t>{w}).raw;
    return hn::Mul(eff, hn::Vec<D>{_mm256_cvtph_ps(h)});
  }
#elif HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  if constexpr (kNibbles) {
    static_assert(F::kBits == 4 && kBytes && !kF16);
    // The value of each nibble (vpermps reads the low 4 bits of each index).
    const float* table = F::kMini ? detail::kE2m1Values.data() : detail::kInt4Values.data();
    const hn::Vec<D> value{_mm512_permutexvar_ps(NibbleLanes(fields), hn::Load(d, table).raw)};
    if constexpr (!F::kMini && F::kLo > -8) bounds.value_lo = hn::Min(bounds.value_lo, value);
    return hn::Mul(eff, value);
  }
  if constexpr (kF16) {
    static_assert(F16Decode<V, kBytes>());
    // As on AVX2 (above): 16 bytes sign-extended to 16-bit lanes, made f16 patterns
    // (F16Patterns) and converted exactly. The magnitudes' maximum is kept per byte, in the low
    // 128 bits of `mag`, before the widening (CodesCanonical).
    const __m128i f = _mm_loadu_si128(reinterpret_cast<const __m128i*>(fields));
    const __m128i mag = _mm_and_si128(f, _mm_set1_epi8(static_cast<char>(F::kMagMask)));
    bounds.mag = hn::Vec<DI>{_mm512_zextsi128_si512(_mm_max_epu8(_mm512_castsi512_si128(bounds.mag.raw), mag))};
    const __m256i h = F16Patterns<V>(hn::Vec256<std::int16_t>{_mm256_cvtepi8_epi16(f)}).raw;
    return hn::Mul(eff, hn::Vec<D>{_mm512_cvtph_ps(h)});
  }
#else
  static_assert(!kNibbles && !kF16);
#endif
  hn::Vec<DI> code;
  if constexpr (kBytes) {
    if constexpr (!F::kMini && F::kBits == 8) {
      // A byte is the whole field: one sign-extending load, and only q8s has a code to reject.
      const hn::Rebind<std::int8_t, D> d8s;
      code = hn::PromoteTo(di, hn::LoadU(d8s, reinterpret_cast<const std::int8_t*>(fields)));
      if constexpr (F::kLo > -128) bounds.lo = hn::Min(bounds.lo, code);
    } else {
      const auto f = hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(hn::Rebind<std::uint8_t, D>(), fields)));
      if constexpr (!F::kMini) {
        const auto sign = hn::Set(di, static_cast<std::int32_t>(1u << (F::kBits - 1)));
        code = hn::Sub(hn::Xor(f, sign), sign);  // sign-extend the field
        bounds.hi = hn::Max(bounds.hi, f);       // bits above the value's width
        bounds.lo = hn::Min(bounds.lo, code);
      } else {
        code = f;
        if constexpr (F::kBits < 8) bounds.hi = hn::Max(bounds.hi, code);  // (a byte is never negative)
      }
    }
  } else {
    code = hn::LoadU(di, codes);
    bounds.lo = hn::Min(bounds.lo, code);
    bounds.hi = hn::Max(bounds.hi, code);
  }
  hn::Vec<D> value;
  if constexpr (!F::kMini) {
    value = hn::ConvertTo(d, code);
  } else {
    const auto mag = hn::And(code, hn::Set(di, static_cast<std::int32_t>(F::kMagMask)));
    if constexpr (F::kMaxCode < F::kMagMask) bounds.mag = hn::Max(bounds.mag, mag);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    if constexpr (F::kBits == 4) {
      // All 16 codes of a 4-bit minifloat in one vector (kE2m1Values).
      static_assert(F::kMbits == 1 && F::kBias == 1);
      value = hn::TableLookupLanes(hn::Load(d, detail::kE2m1Values.data()), hn::IndicesFromVec(d, hn::And(code, hn::Set(di, 15))));
      return hn::Mul(eff, value);
    }
#endif
    const auto normal = hn::BitCast(d, hn::Add(hn::ShiftLeft<23 - F::kMbits>(mag), hn::Set(di, (127 - F::kBias) << 23)));
    const auto sub = hn::Mul(hn::ConvertTo(d, mag), hn::Set(d, std::ldexp(1.0f, 1 - F::kBias - F::kMbits)));
    value = hn::IfThenElse(hn::RebindMask(d, hn::Lt(mag, hn::Set(di, 1 << F::kMbits))), sub, normal);
    // value | (sign bit of the code moved to bit 31)
    value = hn::BitCast(d, hn::OrAnd(hn::BitCast(di, value), hn::ShiftLeft<31 - F::kWidth>(code),
                                     hn::Set(di, std::numeric_limits<std::int32_t>::min())));
  }
  return hn::Mul(eff, value);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// DequantizeValue's f16 decode (kF16: e4m3, e5m2) of two vectors, the 32 bytes at `fields`, with
// scales s0 and s1 (multiplied by 2^(15 - bias)) into a and b, without bounds (the direct path's
// FieldBytes checks the bytes): the same operations on the same bytes, the widening, shift and
// `and` made once for both on 512-bit lanes (one `vextracti64x4` for the upper half), where a vector
// at a time takes them on 256-bit lanes for each.
template <Value V>
HWY_INLINE void DequantizeF16Pair(const std::uint8_t* HWY_RESTRICT fields, hn::Vec512<float> s0, hn::Vec512<float> s1,
                                  hn::Vec512<float>& a, hn::Vec512<float>& b) {
  static_assert(F16Decode<V, true>());
  const __m256i f = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(fields));
  const __m512i h = F16Patterns<V>(hn::Vec512<std::int16_t>{_mm512_cvtepi8_epi16(f)}).raw;
  a = hn::Mul(s0, hn::Vec512<float>{_mm512_cvtph_ps(_mm512_castsi512_si256(h))});
  b = hn::Mul(s1, hn::Vec512<float>{_mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1))});
}
#endif

template <Value V, bool kBytes, bool kNibbles, bool kF16, class D, class DI>
HWY_INLINE void DequantizeVec(D d, const std::uint8_t* HWY_RESTRICT fields, const std::int32_t* HWY_RESTRICT codes,
                              hn::Vec<D> eff, float* HWY_RESTRICT out, CodeBounds<DI>& bounds) {
  hn::StoreU(DequantizeValue<V, kBytes, kNibbles, kF16>(d, fields, codes, eff, bounds), d, out);
}

// dst[0..count) = the first count lanes of v, with plain stores.
template <class D>
HWY_INLINE void StoreFirstLanes(D d, hn::Vec<D> v, std::size_t count, float* HWY_RESTRICT dst) {
  alignas(HWY_MAX_BYTES) float buf[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(v, d, buf);
  std::copy(buf, buf + count, dst);
}

// The last r < Lanes(d) elements, through zero-padded copies (code 0 is canonical everywhere).
// (kNibbles: r fields packed two per byte from `fields`; a last odd field's byte is copied whole,
// its other field decoded and dropped.)
template <Value V, bool kBytes, bool kNibbles, bool kF16, class D, class DI>
HWY_INLINE void DequantizeTail(D d, const std::uint8_t* HWY_RESTRICT fields, const std::int32_t* HWY_RESTRICT codes,
                               const float* HWY_RESTRICT effp, float eff, std::size_t r, float* HWY_RESTRICT out,
                               CodeBounds<DI>& bounds) {
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
  alignas(HWY_MAX_BYTES) std::uint8_t fb[kMax] = {};
  alignas(HWY_MAX_BYTES) std::int32_t cb[kMax] = {};
  alignas(HWY_MAX_BYTES) float eb[kMax];
  if constexpr (kNibbles) {
    std::copy(fields, fields + (r + 1) / 2, fb);
  } else if constexpr (kBytes) {
    std::copy(fields, fields + r, fb);
  } else {
    std::copy(codes, codes + r, cb);
  }
  std::fill(eb, eb + kMax, 1.0f);
  if (effp != nullptr) std::copy(effp, effp + r, eb);
  const auto ev = effp != nullptr ? hn::Load(d, eb) : hn::Set(d, eff);
  StoreFirstLanes(d, DequantizeValue<V, kBytes, kNibbles, kF16>(d, fb, cb, ev, bounds), r, out);
}

// The checks of one-byte fields (per_byte 1, or unpacked into a chunk buffer) that the direct path
// of DequantizeRowsT makes on whole vectors of bytes, the fields of four float vectors at a time,
// where DequantizeValue's CodeBounds take a minimum or maximum per float vector: `hi`, the
// fields' unsigned maximum (kBits < 8: no bits above the value's width); `lo`, the integer
// codes' signed minimum (q8s, q4s, q2s, whose least code is excluded); `mag`, the minifloat
// magnitudes' unsigned maximum (e4m3, e5m2: no NaN or Inf code). The same verdict as
// CodesCanonical's on the same fields. The float vectors are then decoded without bounds (those
// of DequantizeValue left unused, so compiled away): 2 to 4 fewer operations per vector, and at
// 256 MiB on the Zen 5 of session 46 every operation per vector cost about 2 % of the ceiling
// (bench/README.md).
template <Value V>
struct FieldBytes {
  using F = Fmt<V>;
  using D8 = hn::ScalableTag<std::uint8_t>;
  using DS8 = hn::ScalableTag<std::int8_t>;
  static constexpr bool kHi = F::kBits < 8;
  static constexpr bool kLo = !F::kMini && F::kLo > -static_cast<float>(1u << (F::kBits - 1));
  static constexpr bool kMag = F::kMini && F::kMaxCode < F::kMagMask;
  // Zero to start with, as CodeBounds: code 0 is canonical. (A constructor of its own: an
  // implicit one is compiled without the target's attributes.)
  FieldBytes() : hi(hn::Zero(D8())), mag(hn::Zero(D8())), lo(hn::Zero(DS8())) {}
  hn::Vec<D8> hi, mag;
  hn::Vec<DS8> lo;

  // The kCount fields at p, a whole number of byte vectors.
  template <std::size_t kCount>
  HWY_INLINE void Add(const std::uint8_t* HWY_RESTRICT p) {
    const D8 d8;
    const DS8 ds8;
    static_assert(kCount % hn::MaxLanes(D8()) == 0);
    for (std::size_t k = 0; k < kCount; k += hn::MaxLanes(d8)) {
      const auto f = hn::LoadU(d8, p + k);
      if constexpr (kHi) hi = hn::Max(hi, f);
      if constexpr (kMag) mag = hn::Max(mag, hn::And(f, hn::Set(d8, static_cast<std::uint8_t>(F::kMagMask))));
      if constexpr (kLo) {
        auto code = hn::BitCast(ds8, f);
        if constexpr (F::kBits < 8) {
          const auto sign = hn::Set(ds8, static_cast<std::int8_t>(1 << (F::kBits - 1)));
          code = hn::Sub(hn::Xor(code, sign), sign);  // sign-extend the field (wraps only when hi fails)
        }
        lo = hn::Min(lo, code);
      }
    }
  }
  [[nodiscard]] bool Ok() const {
    constexpr std::size_t kMax = HWY_MAX_BYTES;
    alignas(HWY_MAX_BYTES) std::uint8_t h[kMax], m[kMax];
    alignas(HWY_MAX_BYTES) std::int8_t l[kMax];
    hn::Store(hi, D8(), h);
    hn::Store(mag, D8(), m);
    hn::Store(lo, DS8(), l);
    bool ok = true;
    for (std::size_t k = 0; k < hn::Lanes(D8()); ++k) {
      ok = ok && (!kHi || h[k] <= F::kMask) && (!kMag || m[k] <= F::kMaxCode) &&
           (!kLo || static_cast<float>(l[k]) >= F::kLo);
    }
    return ok;
  }
};

// FieldBytes' place where the fields are not checked a vector of bytes at a time (codes, or
// AVX2's nibbles): nothing.
struct NoFieldBytes {
  template <std::size_t kCount>
  HWY_INLINE void Add(const std::uint8_t* HWY_RESTRICT) {}
  [[nodiscard]] static bool Ok() { return true; }
};

// The direct path of DequantizeRowsT: a chunk's whole vectors v, ..., nv - 1, each made by
// `at(v, bounds)` (or, four at a time from a multiple of 4, by `at4(v, bounds, c)` after
// `check(field_bytes, v)`) and merged into the aligned vector it completes, which goes to
// dst + (v - 1) * lanes by a streaming store, made as DequantizeRowsT's `out_mode` (kMode) says,
// with its `rot` and `low`. `held`, the vector not yet stored (rotated in mode 2), comes in and
// goes out, as do `bounds` and `field_bytes`.
// Four vectors are decoded before their four stores go out back to back: 2 to 7 % less time than
// a store after each decode at 256 MiB on the Zen 5 of session 43, 0.01 to 0.04 closer to the
// ceiling on average in session 44 (bench/README.md). This is a function of its own, and its
// callables forced inline, capturing by value and copied here, so that the paths that do not
// stream keep their code: written inside DequantizeRowsT's lambdas the burst changed what GCC
// inlined there (e4m3 per-tensor three times slower in L1), and captures or states reached
// through references were reloaded after every store (a store of vectors may alias anything).
template <int kMode, class D, class At, class At4, class Check, class B, class FB, class Idx, class M>
HWY_NOINLINE void StreamChunk(D d, const At& at_ref, const At4& at4_ref, const Check& check_ref, B& bounds, FB& field_bytes,
                              std::size_t v, std::size_t nv, float* HWY_RESTRICT dst, hn::Vec<D>& held, Idx rot, M low) {
  const std::size_t lanes = hn::Lanes(d);
  // Locals, kept in registers.
  const At at = at_ref;
  const At4 at4 = at4_ref;
  const Check check = check_ref;
  auto last = held;
  B b = bounds;
  FB f = field_bytes;
  const auto rotation = Hidden(rot);
  // (Not std::exchange: its instantiation is compiled without this target's attributes, and at
  // -O0, where it stays a call, a vector returned from it takes the other calling convention.)
  auto aligned = [&](hn::Vec<D> cur) QCONFORM_INLINE_LAMBDA {
    const auto before = last;
    if constexpr (kMode == 0) {
      last = cur;
      return before;
#if HWY_TARGET != HWY_SCALAR
    } else if constexpr (kMode == 1) {
      last = cur;
      return hn::ConcatLowerUpper(d, cur, before);
#endif
    } else {
      last = hn::TableLookupLanes(cur, rotation);
      return hn::IfThenElse(low, before, last);
    }
  };
  // Groups from a multiple of 4 (the tensor's first chunk starts at v = 1), so that a group of
  // blocks of 4 or more vectors lies in one block.
  for (; v % 4 != 0 && v < nv; ++v) hn::Stream(aligned(at(v, b)), d, dst + v * lanes - lanes);
  for (; v + 4 <= nv; v += 4) {
    check(f, v);
    hn::Vec<D> c[4];
    at4(v, b, c);
    const auto a0 = aligned(c[0]), a1 = aligned(c[1]), a2 = aligned(c[2]), a3 = aligned(c[3]);
    float* HWY_RESTRICT p = dst + v * lanes - lanes;
    hn::Stream(a0, d, p);
    hn::Stream(a1, d, p + lanes);
    hn::Stream(a2, d, p + 2 * lanes);
    hn::Stream(a3, d, p + 3 * lanes);
  }
  for (; v < nv; ++v) hn::Stream(aligned(at(v, b)), d, dst + v * lanes - lanes);
  held = last;
  bounds = b;
  field_bytes = f;
}

template <Value V, bool kBytes, bool kNibbles = false>
bool DequantizeRowsT(const DequantizeJob& job) {
  const RowGeometry& g = job.geo;
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // 4-bit fields packed two per byte, every vector and tail starting on a byte (DequantizeValue).
  if constexpr (Fmt<V>::kBits == 4 && kBytes && !kNibbles) {
    if (job.pack.per_byte == 2 && (g.b % 2 == 0 || g.b >= g.n)) return DequantizeRowsT<V, true, true>(job);
  }
#endif
  using D = hn::ScalableTag<float>;
  const D d;
  const std::size_t lanes = hn::Lanes(d);
  using DI = hn::RebindToSigned<hn::ScalableTag<float>>;
  const DI di;
  CodeBounds<DI> bad(di);
  // One-byte fields checked a vector of bytes at a time (the direct path's whole groups).
  using FB = std::conditional_t<kBytes && !kNibbles, FieldBytes<V>, NoFieldBytes>;
  FB field_bytes;
  bool padding_ok = true;
  alignas(64) std::uint8_t fieldbuf[kChunk];
  alignas(64) float effrow[kChunk];
  alignas(64) float effchunk[kChunk + 1];  // a chunk's scales (a block may straddle each end)
  // Outputs beyond the caches are written with streaming stores: no line is read for ownership
  // before it is overwritten, which more than halves the traffic (4 + 4 bytes per element).
  const bool stream = g.rows * g.n * sizeof(float) >= kStreamBytes;
  alignas(HWY_MAX_BYTES) float outbuf[kChunk];
  const std::uint8_t* storage_end = nullptr;  // rows are contiguous: prefetches stop here
  if constexpr (kBytes) storage_end = job.storage + g.rows * job.pack.row_bytes;
  const int shift = VectorsPerBlockLog2(g.b, lanes);
  // AVX2 and AVX-512, e4m3 and e5m2 fields: decoded through f16 (DequantizeValue), the scales multiplied by
  // kF16Factor, in each chunk whose scales allow it exactly.
  constexpr bool kF16 = (HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL) &&
                        F16Decode<V, kBytes>();
  constexpr float kF16Factor = kF16 ? static_cast<float>(1 << (15 - Fmt<V>::kBias)) : 1.0f;
  // Streamed tensors whose chunks all run as whole vectors go straight from the registers to
  // memory. The rows are contiguous and their length a whole number of vectors, so they all start
  // h lanes short of a vector-aligned address: each computed vector is rotated down by h lanes and
  // merged with the one before (across rows too), so that every aligned vector is stored once,
  // whole (a streaming store), as soon as both are known. The h lanes before the first aligned
  // address and the lanes - h after the last are plain stores. A copy through L1 per chunk, as
  // other tensors take, leaves memory idle while the chunk is computed, and a plain store at each
  // row's ends waits for the line to be read.
  const std::ptrdiff_t head = stream ? StreamHead(job.out, lanes) : -1;
  const bool direct = head >= 0 && g.n % lanes == 0 && (shift >= 0 || g.b >= g.n);
  const std::size_t h = direct ? static_cast<std::size_t>(head) : 0;
  const auto rot = hn::IndicesFromVec(d, hn::And(hn::Add(hn::Iota(di, 0), hn::Set(di, static_cast<std::int32_t>(h))),
                                                 hn::Set(di, static_cast<std::int32_t>(lanes - 1))));
  const auto low = hn::FirstN(d, lanes - h);
  // How each aligned vector is made: 0, the output is vector-aligned (h == 0) and each vector is
  // stored as it is, one behind; 1, it is half a vector off (an allocation 16 bytes past a 32-byte
  // boundary, on AVX2), and the aligned vector is the upper half of one and the lower half of the
  // next (one ConcatLowerUpper); 2, any other h: rotated down by h lanes, then merged with the
  // one before (two operations). `prev`, the vector not yet stored, is held rotated in mode 2.
  const int out_mode = h == 0 ? 0 : (HWY_TARGET != HWY_SCALAR && 2 * h == lanes) ? 1 : 2;
  auto prev = hn::Zero(d);
  RowWalker walker(g);
  for (std::size_t r = 0; r < g.rows; ++r, walker.next()) {
    float* out = job.out + r * g.n;
    const std::int32_t* codes = nullptr;
    const std::uint8_t* row = nullptr;
    if constexpr (kBytes) {
      row = job.storage + r * job.pack.row_bytes;
      padding_ok = padding_ok && PaddingIsZero(row, g.n, job.pack);
    } else {
      codes = job.codes + r * g.n;
    }
    for (std::size_t c0 = 0; c0 < g.n; c0 += kChunk) {
      const std::size_t c1 = std::min(g.n, c0 + kChunk);
      const std::uint8_t* fields = nullptr;
      if constexpr (kBytes) {
        PrefetchBytes(row, (c0 + kChunk) / job.pack.per_byte, kChunk / job.pack.per_byte, storage_end);
        if (job.pack.per_byte == 1) {
          fields = row + c0;
        } else if (kNibbles) {
          fields = row + c0 / 2;
        } else {
          UnpackFields(row + c0 / job.pack.per_byte, c1 - c0, job.pack.per_byte, fieldbuf);
          fields = fieldbuf;
        }
      }
      // By value: `at` below takes copies into StreamChunk, and a reference there would make every
      // loop here reload `fields` and `c0` after each store (a store of vectors may alias anything).
      auto fields_at = [fields, c0](std::size_t i) { return Offset<kBytes>(fields, kNibbles ? (i - c0) / 2 : i - c0); };
      auto codes_at = [codes](std::size_t i) { return Offset<!kBytes>(codes, i); };
      // Block j's scale is eff[j - j0].
      const std::size_t j0 = c0 / g.b;
      const float* eff = ChunkScales(job.eff, job.scale_src, walker.base(), j0, (c1 - 1) / g.b + 1, effchunk);
      if (eff == nullptr) {
        if (stream) hwy::FlushStream();
        return false;
      }
      // The chunk's vectors (kF: the f16 decode of DequantizeValue, on scales multiplied by
      // 2^(15 - bias), which is exact unless it overflows).
      auto chunk = [&](auto f16) {
        constexpr bool kF = decltype(f16)::value;
        auto scaled = [](float v) { return kF ? v * kF16Factor : v; };
        if (direct) {
          // Whole vectors: blocks of whole vectors from c0, vector v's scale that of block
          // v >> shift, or one block for all of the row (v >> 62 is 0). kF: the scales multiplied
          // first, each once (effrow is free on this path).
          const int sh = shift >= 0 ? shift : 62;
          const float* es = eff;
          if constexpr (kF) {
            const std::size_t nb = (((c1 - c0) / lanes - 1) >> sh) + 1;
            for (std::size_t k = 0; k < nb; ++k) effrow[k] = scaled(eff[k]);
            es = effrow;
          }
          auto at = [d, fields_at, codes_at, es, sh, lanes, c0](std::size_t v, CodeBounds<DI>& bounds)
                        QCONFORM_INLINE_LAMBDA {
            const std::size_t i = c0 + v * lanes;
            return DequantizeValue<V, kBytes, kNibbles, kF>(d, fields_at(i), codes_at(i), hn::Set(d, es[v >> sh]), bounds);
          };
          // Groups of four vectors from a multiple of 4: one-byte fields checked as bytes
          // (FieldBytes), then decoded without bounds, a scale broadcast once per block; other
          // codes as `at`.
          constexpr bool kFieldBytes = kBytes && !kNibbles;
          // (By value, implicitly: each form uses some of d, at, fields, es, sh and lanes.)
          auto at4 = [=](std::size_t v, CodeBounds<DI>& bounds, hn::Vec<D>(&c)[4]) QCONFORM_INLINE_LAMBDA {
            if constexpr (kFieldBytes) {
              CodeBounds<DI> unused{DI()};
              const std::uint8_t* HWY_RESTRICT f = fields + v * lanes;
              // Vectors k and k + 1, with scales s0 and s1 (AVX-512's f16 decode: both from one
              // widening, DequantizeF16Pair).
              auto decode2 = [&](std::size_t k, hn::Vec<D> s0, hn::Vec<D> s1) QCONFORM_INLINE_LAMBDA {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
                if constexpr (kF) {
                  DequantizeF16Pair<V>(f + k * lanes, s0, s1, c[k], c[k + 1]);
                } else
#endif
                {
                  c[k] = DequantizeValue<V, true, false, kF>(d, f + k * lanes, nullptr, s0, unused);
                  c[k + 1] = DequantizeValue<V, true, false, kF>(d, f + (k + 1) * lanes, nullptr, s1, unused);
                }
              };
              // (Written out: GCC keeps a loop of four rolled, with c in memory.)
              if (sh >= 2) {
                const auto s = hn::Set(d, es[v >> sh]);
                decode2(0, s, s);
                decode2(2, s, s);
              } else if (sh == 1) {
                const auto s0 = hn::Set(d, es[v >> 1]), s1 = hn::Set(d, es[(v >> 1) + 1]);
                decode2(0, s0, s0);
                decode2(2, s1, s1);
              } else {
                decode2(0, hn::Set(d, es[v]), hn::Set(d, es[v + 1]));
                decode2(2, hn::Set(d, es[v + 2]), hn::Set(d, es[v + 3]));
              }
            } else {
              c[0] = at(v, bounds);
              c[1] = at(v + 1, bounds);
              c[2] = at(v + 2, bounds);
              c[3] = at(v + 3, bounds);
            }
          };
          auto check = [fields, lanes](FB& f, std::size_t v) QCONFORM_INLINE_LAMBDA {
            f.template Add<4 * hn::MaxLanes(D())>(Offset<kFieldBytes>(fields, v * lanes));
          };
          std::size_t v = 0;
          if (r == 0 && c0 == 0) {
            const auto first = at(v++, bad);
            StoreFirstLanes(d, first, h, out);
            prev = out_mode == 2 ? hn::TableLookupLanes(first, rot) : first;
          }
          // (The aligned vector that vector v completes starts lanes - h lanes before it: v >= 1
          // on the tensor's first chunk, so never before the output.)
          const std::size_t nv = (c1 - c0) / lanes;
          if (out_mode == 0) {
            StreamChunk<0>(d, at, at4, check, bad, field_bytes, v, nv, out + c0 + h, prev, rot, low);
#if HWY_TARGET != HWY_SCALAR
          } else if (out_mode == 1) {
            StreamChunk<1>(d, at, at4, check, bad, field_bytes, v, nv, out + c0 + h, prev, rot, low);
#endif
          } else {
            StreamChunk<2>(d, at, at4, check, bad, field_bytes, v, nv, out + c0 + h, prev, rot, low);
          }
          return;
        }
        // Other streamed rows are written to L1 first, chunk by chunk (streaming stores want
        // aligned whole vectors).
        float* const oc = stream ? outbuf : out + c0;
        auto out_at = [&](std::size_t i) { return oc + (i - c0); };
        if (shift >= 0 && c0 % g.b == 0 && (c1 - c0) % lanes == 0) {
          // One loop over the chunk's vectors, each broadcasting its block's scale.
          for (std::size_t v = 0; v < (c1 - c0) / lanes; ++v) {
            const std::size_t i = c0 + v * lanes;
            DequantizeVec<V, kBytes, kNibbles, kF>(d, fields_at(i), codes_at(i), hn::Set(d, scaled(eff[v >> shift])), out_at(i), bad);
          }
        } else if (g.b >= lanes) {
          std::size_t j = c0 / g.b;
          for (std::size_t c = c0; c < c1; ++j) {
            const std::size_t e = std::min((j + 1) * g.b, c1);
            const float s = scaled(eff[j - j0]);
            const auto ev = hn::Set(d, s);
            std::size_t i = c;
            for (; i + lanes <= e; i += lanes) DequantizeVec<V, kBytes, kNibbles, kF>(d, fields_at(i), codes_at(i), ev, out_at(i), bad);
            if (i < e) DequantizeTail<V, kBytes, kNibbles, kF>(d, fields_at(i), codes_at(i), nullptr, s, e - i, out_at(i), bad);
            c = e;
          }
        } else {
          std::size_t j = c0 / g.b;
          for (std::size_t c = c0; c < c1; ++j) {
            const std::size_t e = std::min((j + 1) * g.b, c1);
            std::fill(effrow + (c - c0), effrow + (e - c0), scaled(eff[j - j0]));
            c = e;
          }
          std::size_t i = c0;
          for (; i + lanes <= c1; i += lanes) {
            DequantizeVec<V, kBytes, kNibbles, kF>(d, fields_at(i), codes_at(i), hn::LoadU(d, effrow + (i - c0)), out_at(i), bad);
          }
          if (i < c1) DequantizeTail<V, kBytes, kNibbles, kF>(d, fields_at(i), codes_at(i), effrow + (i - c0), 0.0f, c1 - i, out_at(i), bad);
        }
        if (stream) StreamFloats(outbuf, out + c0, c1 - c0);
      };
      if constexpr (kF16) {
        const std::size_t nb = (c1 - 1) / g.b + 1 - j0;
        if (AbsMaxSpan(eff, nb) <= std::bit_cast<std::uint32_t>(std::numeric_limits<float>::max() / kF16Factor)) {
          chunk(std::true_type{});
          continue;
        }
      }
      chunk(std::false_type{});
    }
  }
  if (direct && g.rows * g.n > 0) {
    StoreFirstLanes(d, out_mode == 2 ? prev : hn::TableLookupLanes(prev, rot), lanes - h, job.out + (g.rows * g.n - (lanes - h)));
  }
  if (stream) hwy::FlushStream();
  return padding_ok && CodesCanonical<V, kBytes>(di, bad) && field_bytes.Ok();
}

// ------------------------------------------------------------------ lookup mode (SPEC §5)

// Entries of a table of 2^kBits values of T: in one register (a lane permutation, a few cycles)
// when they fit in a vector, else a gather from memory (the same entries, so the same result).
template <int kBits, class D>
struct LookupTable {
  using T = hn::TFromD<D>;
  static constexpr bool kInRegister = (std::size_t{1} << kBits) <= hn::MaxLanes(D());  // == Lanes on x86
  const T* mem;
  hn::Vec<D> reg;
  LookupTable(D d, const T* entries) : mem(entries), reg(hn::Zero(d)) {
    if constexpr (kInRegister) {
      if (entries == nullptr) return;  // the direction that does not use it
      alignas(HWY_MAX_BYTES) T padded[HWY_MAX_BYTES / sizeof(T)] = {};  // lanes past the table: never picked
      std::copy(entries, entries + (std::size_t{1} << kBits), padded);
      reg = hn::Load(d, padded);
    }
  }
  // Entry i of each lane, 0 <= i < 2^kBits.
  HWY_INLINE hn::Vec<D> Pick(D d, hn::Vec<hn::RebindToSigned<D>> i) const {
    if constexpr (kInRegister) {
      return hn::TableLookupLanes(reg, hn::IndicesFromVec(d, i));
    } else {
      return hn::GatherIndex(d, mem, i);
    }
  }
};

// The thresholds of a LookupJob (2^kBits - 1, ascending, +Inf padded) for a branch-free binary
// search. Its first kR steps only read entries s - 1, 2s - 1, ... (s = 2^(kBits - kR)); those
// "coarse" entries sit in one register, kR being as many bits as a vector has lanes for (4 on
// AVX-512, 3 on AVX2, 2 on 128-bit targets, 0 on scalar), and the remaining steps gather.
template <int kBits, class D>
struct LookupSearch {
  using VI = hn::Vec<hn::RebindToSigned<D>>;
  static constexpr int kR = std::min(kBits, static_cast<int>(hwy::FloorLog2(hn::MaxLanes(D()))));
  static constexpr std::int32_t kSeg = std::int32_t{1} << (kBits - kR);
  const float* thresholds;
  hn::Vec<D> coarse;
  LookupSearch(D d, const float* t) : thresholds(t), coarse(hn::Zero(d)) {
    if constexpr (kR > 0) {
      if (t == nullptr) return;  // dequantize
      alignas(HWY_MAX_BYTES) float c[HWY_MAX_BYTES / sizeof(float)];
      std::fill(c, c + HWY_MAX_BYTES / sizeof(float), std::numeric_limits<float>::infinity());
      for (std::int32_t j = 0; j + 1 < (std::int32_t{1} << kR); ++j) c[j] = t[(j + 1) * kSeg - 1];
      coarse = hn::Load(d, c);
    }
  }
  // The number of thresholds <= y in each lane of N vectors (t <= y is false for a NaN y, and the
  // +Inf padding is never <= a finite y). N vectors step by step: each step's lookups are
  // independent, where one vector's steps form a chain of gather latencies.
  template <std::size_t N>
  HWY_INLINE void Count(D d, const hn::Vec<D> (&y)[N], VI (&count)[N]) const {
    const hn::RebindToSigned<D> di;
    for (std::size_t u = 0; u < N; ++u) count[u] = hn::Zero(di);
    if constexpr (kR > 0) {
      for (std::int32_t step = std::int32_t{1} << (kR - 1); step > 0; step >>= 1) {
        for (std::size_t u = 0; u < N; ++u) {
          const auto t = hn::TableLookupLanes(coarse, hn::IndicesFromVec(d, hn::Add(count[u], hn::Set(di, step - 1))));
          count[u] = hn::IfThenElse(hn::RebindMask(di, hn::Le(t, y[u])), hn::Add(count[u], hn::Set(di, step)), count[u]);
        }
      }
      for (std::size_t u = 0; u < N; ++u) count[u] = hn::ShiftLeft<kBits - kR>(count[u]);
    }
    for (std::int32_t step = kSeg >> 1; step > 0; step >>= 1) {
      for (std::size_t u = 0; u < N; ++u) {
        const auto t = hn::GatherIndex(d, thresholds, hn::Add(count[u], hn::Set(di, step - 1)));
        count[u] = hn::IfThenElse(hn::RebindMask(di, hn::Le(t, y[u])), hn::Add(count[u], hn::Set(di, step)), count[u]);
      }
    }
  }
};

// Quantize and dequantize of one table size: the job's thresholds and index (or its table) held
// as LookupSearch and LookupTable for the whole call.
template <int kBits, class D>
struct LookupOps {
  using DI = hn::RebindToSigned<D>;
  LookupSearch<kBits, D> search;
  LookupTable<kBits, DI> index;
  LookupTable<kBits, D> table;
  explicit LookupOps(const LookupJob& job)
      : search(D(), job.thresholds), index(DI(), job.index), table(D(), job.table) {}

  // Codes of N vectors at x (scales at e) to `codes`: y = fl(x / eff), a true division as
  // everywhere; the count of thresholds <= y through `index` (or itself, when the index is the
  // identity); ±Inf y get their own codes. NaN x is
  // recorded in `nan_acc` (the caller hands the call to the reference, which reports it).
  template <std::size_t N>
  HWY_INLINE void Codes(D d, const float* HWY_RESTRICT x, const float* HWY_RESTRICT e, std::int32_t* HWY_RESTRICT codes,
                        const LookupJob& job, hn::Vec<D>& nan_acc) const {
    const DI di;
    const auto inf = hn::Set(d, std::numeric_limits<float>::infinity());
    hn::Vec<D> y[N];
    for (std::size_t u = 0; u < N; ++u) {
      const auto xv = hn::LoadU(d, x + u * hn::Lanes(d));
      nan_acc = hn::Or(nan_acc, hn::VecFromMask(d, hn::IsNaN(xv)));
      y[u] = hn::Div(xv, hn::LoadU(d, e + u * hn::Lanes(d)));
    }
    hn::Vec<DI> count[N];
    search.Count(d, y, count);
    for (std::size_t u = 0; u < N; ++u) {
      // A table of distinct finite values in ascending order (NF4's, most tables) needs no index.
      auto code = job.index_is_identity ? count[u] : index.Pick(di, count[u]);
      code = hn::IfThenElse(hn::RebindMask(di, hn::Eq(y[u], inf)), hn::Set(di, job.pos_inf), code);
      code = hn::IfThenElse(hn::RebindMask(di, hn::Eq(y[u], hn::Neg(inf))), hn::Set(di, job.neg_inf), code);
      hn::StoreU(code, di, codes + u * hn::Lanes(d));
    }
  }

  // eff * table[code] for one vector; a code outside [0, 2^kBits) is recorded in `bad` (and read as
  // its low bits, so that no lookup leaves the table).
  HWY_INLINE hn::Vec<D> Values(D d, hn::Vec<DI> code, hn::Vec<D> eff, hn::Vec<DI>& bad) const {
    const DI di;
    const auto mask = hn::Set(di, (std::int32_t{1} << kBits) - 1);
    bad = hn::Or(bad, hn::AndNot(mask, code));
    return hn::Mul(eff, table.Pick(d, hn::And(code, mask)));
  }
};

// Both directions walk the rows chunk by chunk, with each element's effective scale written out
// for the chunk first (blocks of any width, no per-lane block arithmetic); the last partial vector
// of a chunk runs through zero-padded copies (scale 1), as QuantizeTail.
template <bool kQuantize, int kBits>
bool LookupRowsT(const LookupJob& job) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const std::size_t lanes = hn::Lanes(d);
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
  const RowGeometry& g = job.geo;
  // Vector stores fill a block's scales, the last one running up to kMax - 1 past the block (the
  // next block's fill, or nothing, comes after it).
  alignas(HWY_MAX_BYTES) float eff[kChunk + kMax];
  auto nan_acc = hn::Zero(d);
  auto bad = hn::Zero(di);
  const LookupOps<kBits, decltype(d)> ops(job);
  using In = std::conditional_t<kQuantize, float, std::int32_t>;
  using Out = std::conditional_t<kQuantize, std::int32_t, float>;
  // N vectors from x or codes at `in`, effective scales at `e`, to codes or floats at `out`.
  auto some = [&]<std::size_t N>(const In* HWY_RESTRICT in, const float* HWY_RESTRICT e, Out* HWY_RESTRICT out) HWY_ATTR {
    if constexpr (kQuantize) {
      ops.template Codes<N>(d, in, e, out, job, nan_acc);
    } else {
      for (std::size_t u = 0; u < N; ++u) {
        hn::StoreU(ops.Values(d, hn::LoadU(di, in + u * lanes), hn::LoadU(d, e + u * lanes), bad), d, out + u * lanes);
      }
    }
  };
  const In* src;
  Out* dst;
  if constexpr (kQuantize) {
    src = job.x;
    dst = job.codes;
  } else {
    src = job.codes;
    dst = job.out;
  }
  RowWalker walker(g);
  for (std::size_t r = 0; r < g.rows; ++r, walker.next()) {
    const In* const in = src + r * g.n;
    Out* const out = dst + r * g.n;
    for (std::size_t c0 = 0; c0 < g.n; c0 += kChunk) {
      const std::size_t c1 = std::min(g.n, c0 + kChunk);
      for (std::size_t c = c0, k = c0 / g.b; c < c1; ++k) {  // one division a chunk
        const std::size_t e = std::min(c1, (k + 1) * g.b);
        const auto v = hn::Set(d, job.eff[walker.base() + k]);
        for (std::size_t i = c; i < e; i += lanes) hn::StoreU(v, d, eff + (i - c0));
        c = e;
      }
      std::size_t c = c0;
      for (; c + 4 * lanes <= c1; c += 4 * lanes) some.template operator()<4>(in + c, eff + (c - c0), out + c);
      for (; c + lanes <= c1; c += lanes) some.template operator()<1>(in + c, eff + (c - c0), out + c);
      if (const std::size_t rest = c1 - c; rest != 0) {
        alignas(HWY_MAX_BYTES) In ib[kMax] = {};
        alignas(HWY_MAX_BYTES) float eb[kMax];
        alignas(HWY_MAX_BYTES) Out ob[kMax];
        std::fill(eb, eb + kMax, 1.0f);
        std::copy(eff + (c - c0), eff + (c1 - c0), eb);
        std::copy(in + c, in + c1, ib);
        some.template operator()<1>(ib, eb, ob);
        std::copy(ob, ob + rest, out + c);
      }
    }
  }
  if constexpr (kQuantize) {
    return hn::AllFalse(d, hn::MaskFromVec(nan_acc));
  } else {
    return hn::AllFalse(di, hn::Ne(bad, hn::Zero(di)));
  }
}

// ------------------------------------------------------------------ pack / unpack codes

// Canonical-code rule (SPEC §7) as ranges: clo <= code <= chi and (code & magmask) <= maxmag;
// fields are code & mask, read back with `sign` extension (0 for unsigned kinds).
struct CodeRule {
  std::int32_t clo, chi, magmask, maxmag, mask, sign;
};

inline CodeRule RuleOf(detail::CodeKind kind, Value v) {
  const ValueInfo& vi = info(v);
  const auto mask = static_cast<std::int32_t>((1u << vi.bits) - 1);
  switch (kind) {
    case detail::CodeKind::integer:
      return {static_cast<std::int32_t>(vi.lo), static_cast<std::int32_t>(vi.hi), 0, 0, mask,
              static_cast<std::int32_t>(1u << (vi.bits - 1))};
    case detail::CodeKind::minifloat: {
      const std::int32_t mag = mask >> 1;
      const std::int32_t maxcode = v == Value::e4m3 ? 0x7E : v == Value::e5m2 ? 0x7B : 0x7;
      return {0, mask, mag, maxcode, mask, 0};
    }
    case detail::CodeKind::index: break;
  }
  return {0, mask, 0, 0, mask, 0};
}

template <class D>
HWY_INLINE hn::Mask<D> CodeValid(D di, hn::Vec<D> code, const CodeRule& rule) {
  return hn::And(hn::And(IGe(code, hn::Set(di, rule.clo)), ILe(code, hn::Set(di, rule.chi))),
                 ILe(hn::And(code, hn::Set(di, rule.magmask)), hn::Set(di, rule.maxmag)));
}

bool PackRowsImpl(const PackJob& job) {
  const RowGeometry& g = job.geo;
  const CodeRule rule = RuleOf(job.kind, job.value);
  const hn::ScalableTag<std::int32_t> di;
  const hn::CappedTag<std::int32_t, 1> di1;
  const std::size_t lanes = hn::Lanes(di);
  auto bad = hn::Zero(di);
  auto bad1 = hn::Zero(di1);
  alignas(64) std::uint8_t fieldbuf[kChunk];
  auto one = [&](auto d, auto& acc, const std::int32_t* c, std::uint8_t* f) HWY_ATTR {
    const auto code = hn::LoadU(d, c);
    acc = hn::Or(acc, hn::VecFromMask(d, hn::Not(CodeValid(d, code, rule))));
    const hn::Rebind<std::uint8_t, decltype(d)> d8;
    hn::StoreU(hn::DemoteTo(d8, hn::And(code, hn::Set(d, rule.mask))), d8, f);
  };
  for (std::size_t r = 0; r < g.rows; ++r) {
    const std::int32_t* codes = job.codes + r * g.n;
    std::uint8_t* row = job.storage + r * job.pack.row_bytes;
    for (std::size_t c0 = 0; c0 < g.n; c0 += kChunk) {
      const std::size_t c1 = std::min(g.n, c0 + kChunk);
      std::uint8_t* fields = job.pack.per_byte == 1 ? row + c0 : fieldbuf;
      std::size_t i = c0;
      for (; i + lanes <= c1; i += lanes) one(di, bad, codes + i, fields + (i - c0));
      for (; i < c1; ++i) one(di1, bad1, codes + i, fields + (i - c0));
      if (job.pack.per_byte > 1) PackFields(fieldbuf, c1 - c0, job.pack.per_byte, row + c0 / job.pack.per_byte);
    }
    ZeroPadding(row, g.n, job.pack);
  }
  return hn::AllFalse(di, hn::Ne(bad, hn::Zero(di))) && hn::AllFalse(di1, hn::Ne(bad1, hn::Zero(di1)));
}

bool UnpackRowsImpl(const PackJob& job) {
  const RowGeometry& g = job.geo;
  const CodeRule rule = RuleOf(job.kind, job.value);
  const hn::ScalableTag<std::int32_t> di;
  const hn::CappedTag<std::int32_t, 1> di1;
  const std::size_t lanes = hn::Lanes(di);
  auto bad = hn::Zero(di);
  auto bad1 = hn::Zero(di1);
  bool padding_ok = true;
  alignas(64) std::uint8_t fieldbuf[kChunk];
  auto one = [&](auto d, auto& acc, const std::uint8_t* f, std::int32_t* c) HWY_ATTR {
    const hn::Rebind<std::uint8_t, decltype(d)> d8;
    const hn::RebindToUnsigned<decltype(d)> du;
    const auto field = hn::BitCast(d, hn::PromoteTo(du, hn::LoadU(d8, f)));
    const auto sign = hn::Set(d, rule.sign);
    const auto code = hn::Sub(hn::Xor(field, sign), sign);
    const auto valid = hn::And(CodeValid(d, code, rule), ILe(field, hn::Set(d, rule.mask)));
    acc = hn::Or(acc, hn::VecFromMask(d, hn::Not(valid)));
    hn::StoreU(code, d, c);
  };
  for (std::size_t r = 0; r < g.rows; ++r) {
    std::int32_t* codes = job.codes + r * g.n;
    const std::uint8_t* row = job.storage + r * job.pack.row_bytes;
    padding_ok = padding_ok && PaddingIsZero(row, g.n, job.pack);
    for (std::size_t c0 = 0; c0 < g.n; c0 += kChunk) {
      const std::size_t c1 = std::min(g.n, c0 + kChunk);
      const std::uint8_t* fields = row + c0;
      if (job.pack.per_byte > 1) {
        UnpackFields(row + c0 / job.pack.per_byte, c1 - c0, job.pack.per_byte, fieldbuf);
        fields = fieldbuf;
      }
      std::size_t i = c0;
      for (; i + lanes <= c1; i += lanes) one(di, bad, fields + (i - c0), codes + i);
      for (; i < c1; ++i) one(di1, bad1, fields + (i - c0), codes + i);
    }
  }
  return padding_ok && hn::AllFalse(di, hn::Ne(bad, hn::Zero(di))) && hn::AllFalse(di1, hn::Ne(bad1, hn::Zero(di1)));
}

// ------------------------------------------------------------------ value dispatch

#define QCONFORM_OPT_VALUE_SWITCH(v, CALL)                \
  switch (v) {                                            \
    case Value::q8f: return CALL(Value::q8f);             \
    case Value::q8s: return CALL(Value::q8s);             \
    case Value::q4f: return CALL(Value::q4f);             \
    case Value::q4s: return CALL(Value::q4s);             \
    case Value::q2f: return CALL(Value::q2f);             \
    case Value::q2s: return CALL(Value::q2s);             \
    case Value::e4m3: return CALL(Value::e4m3);           \
    case Value::e5m2: return CALL(Value::e5m2);           \
    case Value::e2m1: return CALL(Value::e2m1);           \
  }

bool QuantizeRows(const QuantizeJob& job) {
#define QCONFORM_OPT_CALL(V) job.storage ? QuantizeRowsT<V, true>(job) : QuantizeRowsT<V, false>(job)
  QCONFORM_OPT_VALUE_SWITCH(job.value, QCONFORM_OPT_CALL)
#undef QCONFORM_OPT_CALL
  return false;
}

bool DequantizeRows(const DequantizeJob& job) {
#define QCONFORM_OPT_CALL(V) job.storage ? DequantizeRowsT<V, true>(job) : DequantizeRowsT<V, false>(job)
  QCONFORM_OPT_VALUE_SWITCH(job.value, QCONFORM_OPT_CALL)
#undef QCONFORM_OPT_CALL
  return false;
}

bool CalibrateQuantizeRows(const CalibrateQuantizeJob& job) {
#define QCONFORM_OPT_CALL(V) CalibrateQuantizeRowsT<V>(job)
  QCONFORM_OPT_VALUE_SWITCH(job.value, QCONFORM_OPT_CALL)
#undef QCONFORM_OPT_CALL
  return false;
}

#undef QCONFORM_OPT_VALUE_SWITCH

void AbsMaxRows(const AbsMaxJob& job) { AbsMaxRowsImpl(job); }
bool PackRows(const PackJob& job) { return PackRowsImpl(job); }
bool UnpackRows(const PackJob& job) { return UnpackRowsImpl(job); }
// Lookup mode's integer values have 8, 4 or 2 bits (validate_scheme).
template <bool kQuantize>
bool LookupRowsAnyBits(const LookupJob& job) {
  switch (job.bits) {
    case 2: return LookupRowsT<kQuantize, 2>(job);
    case 4: return LookupRowsT<kQuantize, 4>(job);
    case 8: return LookupRowsT<kQuantize, 8>(job);
    default: return false;  // not a lookup scheme: the caller hands it to the reference
  }
}
bool LookupQuantizeRows(const LookupJob& job) { return LookupRowsAnyBits<true>(job); }
bool LookupDequantizeRows(const LookupJob& job) { return LookupRowsAnyBits<false>(job); }

// ------------------------------------------------------------------ bandwidth ceilings

void Ceiling4to1(const float* HWY_RESTRICT in, std::uint8_t* HWY_RESTRICT out, std::size_t n) {
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToFloat<decltype(du)> df;
  const hn::Rebind<std::uint8_t, decltype(du)> d8;
  const std::size_t lanes = hn::Lanes(du);
  std::size_t i = 0;
  const std::size_t far_end = n == 0 ? 0 : FarEnd(n - 1);
  auto one = [&](std::size_t k) HWY_ATTR { out[k] = static_cast<std::uint8_t>(std::bit_cast<std::uint32_t>(in[k])); };
  // The low byte of each element: no arithmetic (U8FromU32 gathers low bytes; see QuantizeVec).
#if HWY_TARGET != HWY_SCALAR
  if (n >= kStreamBytes) {
    // Streaming stores past kStreamBytes, as the quantize loops: four vectors' bytes make one
    // aligned vector, stored directly (StorageStream goes through L1, VectorStream splices).
    const hn::ScalableTag<std::uint8_t> dv;
    const hn::Half<decltype(dv)> dh;
    const hn::Half<decltype(dh)> dq;
    const std::size_t bytes = hn::Lanes(dv);
    for (; i < n && reinterpret_cast<std::uintptr_t>(out + i) % bytes != 0; ++i) one(i);
    for (; i + bytes <= n; i += bytes) {
      // One prefetch per input vector, as the quantize loops: one per four vectors (every other
      // line on AVX2) left this pass at 0.34 ns/element on the Zen 3 of session 17, where every
      // line prefetched, or none, runs at 0.24 to 0.27 (the q8s kernel beat its ceiling by 1.3x).
      // Each vector's prefetches just before its load: as a loop of their own (GCC 12 keeps it
      // rolled, with PrefetchFar's branch) this pass ran 3 to 4 % slower on the Xeon of session 42.
      auto low = [&](std::size_t k) HWY_ATTR {
        PrefetchNearFar(in, i + k * lanes, n - 1, far_end);
        return hn::BitCast(dq, hn::U8FromU32(hn::BitCast(du, hn::LoadU(df, in + i + k * lanes))));
      };
      const auto v01 = hn::Combine(dh, low(1), low(0));
      const auto v23 = hn::Combine(dh, low(3), low(2));
      hn::Stream(hn::Combine(dv, v23, v01), dv, out + i);
    }
    hwy::FlushStream();
  }
#endif
  for (; i + lanes <= n; i += lanes) {
    PrefetchNearFar(in, i, n - 1, far_end);  // as the quantize loops do
    hn::StoreU(hn::U8FromU32(hn::BitCast(du, hn::LoadU(df, in + i))), d8, out + i);
  }
  for (; i < n; ++i) one(i);
}

void Ceiling1to4(const std::uint8_t* HWY_RESTRICT in, float* HWY_RESTRICT out, std::size_t n) {
  const hn::ScalableTag<std::uint32_t> du;
  const hn::RebindToFloat<decltype(du)> df;
  const hn::Rebind<std::uint8_t, decltype(du)> d8;
  const std::size_t lanes = hn::Lanes(du);
  std::size_t i = 0;
  auto one = [&](std::size_t k) HWY_ATTR { out[k] = std::bit_cast<float>(static_cast<std::uint32_t>(in[k])); };
  if (const std::ptrdiff_t head = StreamHead(out, lanes); n * sizeof(float) >= kStreamBytes && head >= 0) {
    // Streaming stores past kStreamBytes, as the dequantize loops (directly: no L1 staging).
    for (; i < static_cast<std::size_t>(head); ++i) one(i);
    for (; i + lanes <= n; i += lanes) {
      if (i % kChunk == 0) PrefetchBytes(in, i + kChunk, kChunk, in + n);
      hn::Stream(hn::BitCast(df, hn::PromoteTo(du, hn::LoadU(d8, in + i))), df, out + i);
    }
    hwy::FlushStream();
  }
  for (; i + lanes <= n; i += lanes) {
    if (i % kChunk == 0) PrefetchBytes(in, i + kChunk, kChunk, in + n);  // as the dequantize loops do
    hn::StoreU(hn::BitCast(df, hn::PromoteTo(du, hn::LoadU(d8, in + i))), df, out + i);
  }
  for (; i < n; ++i) one(i);
}

std::int64_t TargetOfThisCode() { return HWY_TARGET; }

}  // namespace qconform::optimized::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
