// qconform benchmarks: the reference, the optimized implementation on every supported target and a
// bandwidth ceiling, in one run, so every figure is also a ratio to the ceiling and the reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string_view>

#include "qconform/optimized.h"

namespace qconform::bench {

// Every buffer of a run (input, outputs, serialized tensors, ceiling buffers) lies `offset` bytes
// past a 64-byte boundary: 0 by default, as the CPU allocators of PyTorch and ONNX Runtime give
// tensors; 16 is where glibc's malloc puts blocks of 128 KiB and more (std::vector's data). A
// multiple of 4 below 64 (kMaxOffset); where a std::vector lands depends on the heap's history, and
// with it whether every 512-bit load spans two cache lines (bench/README.md, "Alignment").
inline constexpr std::size_t kMaxOffset = 60;

// Runs the cases whose name "<case>/<size>/<impl>" matches the regex `filter` (empty: all) and
// prints a table, or with `json` a JSON array with one object per case, size and implementation:
// case, bytes (f32 side), impl, target, ns_per_element, gb_per_s (f32 bytes per second),
// ratio_to_ceiling (ceiling time / this time) and ratio_to_reference (reference time / this time).
// At the small sizes each row runs for at least `min_time_seconds` in all, as five slices taken in
// rounds over the whole run, each made of timed batches of calls of about 50 us, and reports the
// median over its batches of the time per call (the mean goes to stderr); the DRAM size runs a
// fixed few iterations, each optimized one paired with a ceiling pass (the ratio: their median).
// Buffers at `offset` bytes past a 64-byte boundary (above). The far prefetches and
// calibrate+quantize's next-chunk prefetches run as qconform::optimized::set_far_prefetch and
// set_chunk_prefetch last set them (the run says which way on stderr, the latter per target).
// Returns 0, or 1 when nothing matched, a run failed or the offset is not a multiple of 4 up to
// kMaxOffset.
int run(bool json, double min_time_seconds, std::string_view filter, std::size_t offset = 0);

// The far-prefetch mode a command line names (`--far-prefetch` of qconform_benchmarks and of
// `qconform bench`): "auto", "on" or "off"; nullopt for any other word.
inline std::optional<optimized::FarPrefetch> far_prefetch_mode(std::string_view name) {
  if (name == "auto") return optimized::FarPrefetch::automatic;
  if (name == "on") return optimized::FarPrefetch::on;
  if (name == "off") return optimized::FarPrefetch::off;
  return std::nullopt;
}

// The next-chunk prefetch mode a command line names (`--chunk-prefetch` of qconform_benchmarks and
// of `qconform bench`): "auto", "l1" or "l2"; nullopt for any other word.
inline std::optional<optimized::ChunkPrefetch> chunk_prefetch_mode(std::string_view name) {
  if (name == "auto") return optimized::ChunkPrefetch::automatic;
  if (name == "l1") return optimized::ChunkPrefetch::l1;
  if (name == "l2") return optimized::ChunkPrefetch::l2;
  return std::nullopt;
}

// At the cached sizes each benchmark iteration is a batch of calls taking about kBatchSeconds,
// timed on its own, and a row's figure is the median over its batches of the time per call
// (bench/README.md, "Session 41"): batch_calls is the number of calls in a batch when one call
// took `call_seconds`, from 1 (a call of kBatchSeconds or more) to kMaxBatch (0 or less).
inline constexpr double kBatchSeconds = 50e-6;
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 16;
std::int64_t batch_calls(double call_seconds);

// n objects of T (trivial: float, std::uint8_t) at `offset` bytes past a 64-byte boundary, from
// std::aligned_alloc (whose storage holds implicitly created objects); std::bad_alloc when there is
// no memory, as std::vector.
template <class T>
class Placed {
 public:
  Placed() = default;
  Placed(std::size_t n, std::size_t offset) : n_(n) {
    const std::size_t bytes = (offset + n * sizeof(T) + 63) / 64 * 64 + 64;  // a multiple of 64, never 0
    base_.reset(static_cast<std::byte*>(std::aligned_alloc(64, bytes)));
    if (!base_) throw std::bad_alloc();
    data_ = reinterpret_cast<T*>(base_.get() + offset);
  }
  [[nodiscard]] T* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return n_; }
  [[nodiscard]] std::span<T> span() const { return {data_, n_}; }
  operator std::span<T>() const { return span(); }              // NOLINT(google-explicit-constructor)
  operator std::span<const T>() const { return {data_, n_}; }   // NOLINT(google-explicit-constructor)

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte[], Free> base_;
  T* data_ = nullptr;
  std::size_t n_ = 0;
};

// The benchmarks' input, like activations: deterministic, roughly Gaussian (the sum of four uniform
// draws: mean 0, standard deviation about 0.98, within [-3.4, 3.4)), every 997th element 8 times
// larger. The same values on every call.
void fill_activations(std::span<float> v);

}  // namespace qconform::bench
