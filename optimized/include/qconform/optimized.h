// qconform::optimized: the SIMD quantizer (Highway, runtime dispatch) that must give the reference's
// bits and error kinds on every input, every target and every caller floating-point environment.
//
// Every operation mirrors the reference's signature (qconform/reference.h) plus a trailing
// `target`: 0 runs the best target this CPU supports; any other value must be the `bits` of an
// entry of targets() with `supported == true` (look names up with find_target). Any other target
// (not compiled in, not supported by this CPU, or not one target bit) runs nothing: the call
// returns ErrorKind::implementation_fault, a kind the reference never returns, naming the target.
// Errors of the input itself come back as the same qconform::Error the reference returns (on any
// failed check the optimized path hands the call to the reference, so kinds and messages agree).
// No SIMD type appears here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qconform/reference.h"

namespace qconform::optimized {

struct Target {
  std::int64_t bits;  // Highway's HWY_* target bit
  std::string name;   // lower case: "avx3_dl", "avx3", "avx2", "sse4", "ssse3", "emu128" or "scalar"
  bool supported;     // this CPU can run it
};

// Every target compiled in, best first, with whether this CPU supports it.
[[nodiscard]] std::vector<Target> targets();
// The bits of the compiled-in target called `name` (case-insensitive) if this CPU supports it.
[[nodiscard]] std::optional<std::int64_t> find_target(std::string_view name);
// The target that `target` = 0 selects.
[[nodiscard]] std::int64_t best_target();
// Name of a compiled-in target bit ("unknown" otherwise).
[[nodiscard]] std::string target_name(std::int64_t bits);
// The HWY_TARGET the per-target code reports when reached through dispatch for `target`; equal to
// the resolved target bits when dispatch works (the tests require it for every target); 0 for a
// target that cannot run here.
[[nodiscard]] std::int64_t dispatched_target(std::int64_t target = 0);

// The reference's operations (SPEC §5-§8), same results.
[[nodiscard]] Result<QTensor> quantize(const Scheme& s, std::span<const std::size_t> shape,
                                       std::span<const float> data, std::span<const float> scales,
                                       std::optional<float> global, Table table = std::nullopt,
                                       std::int64_t target = 0);
[[nodiscard]] Result<std::vector<float>> dequantize(const QTensor& t, Table table = std::nullopt,
                                                    std::int64_t target = 0);
[[nodiscard]] Result<QParams> calibrate(const Scheme& s, std::span<const std::size_t> shape,
                                        std::span<const float> data, Calibration method,
                                        std::int64_t target = 0);
[[nodiscard]] Result<std::vector<std::uint8_t>> pack(const Scheme& s, std::span<const std::size_t> shape,
                                                     std::span<const std::int32_t> codes,
                                                     std::int64_t target = 0);
[[nodiscard]] Result<std::vector<std::int32_t>> unpack(const Scheme& s, std::span<const std::size_t> shape,
                                                       std::span<const std::uint8_t> storage,
                                                       std::int64_t target = 0);
[[nodiscard]] Result<std::vector<std::uint8_t>> serialize(const QTensor& t, std::int64_t target = 0);
[[nodiscard]] Result<QTensor> parse(const Scheme& s, std::span<const std::size_t> shape,
                                    std::span<const std::uint8_t> bytes, Table table = std::nullopt,
                                    std::int64_t target = 0);

// Allocation-free paths, what a user ships and what the benchmarks measure. Each gives exactly the
// composition named, or its first error; `out` must then be exactly the right size, else
// truncated-buffer (too short) or trailing-bytes (too long) for bytes, shape-mismatch for floats,
// reported after every check of the inputs. On an error the contents of `out` are unspecified.
// quantize, quantize_into, parse and dequantize_from keep, per thread, the scheme validation and
// layout of the last (scheme, shape, length) they ran on (one plan for quantize's, one for
// parse's), so repeating a call with the same three skips those steps; every other input is
// checked on every call.
//
// serialize(quantize(s, shape, data, scales, global, table)) into `out`.
[[nodiscard]] Status quantize_into(const Scheme& s, std::span<const std::size_t> shape,
                                   std::span<const float> data, std::span<const float> scales,
                                   std::optional<float> global, std::span<std::uint8_t> out,
                                   Table table = std::nullopt, std::int64_t target = 0);
// p = calibrate(s, shape, data, method); serialize(quantize(s, shape, data, p.scales, p.global))
// into `out`. One-level per-block minmax runs as one pass over the data; each thread keeps the
// plan (validation, layout, row geometry) of the last scheme, shape and length it ran that way,
// so repeating a call with the same three skips those steps.
[[nodiscard]] Status calibrate_quantize_into(const Scheme& s, std::span<const std::size_t> shape,
                                             std::span<const float> data, Calibration method,
                                             std::span<std::uint8_t> out, std::int64_t target = 0);
// dequantize(parse(s, shape, bytes, table), table) into `out`.
[[nodiscard]] Status dequantize_from(const Scheme& s, std::span<const std::size_t> shape,
                                     std::span<const std::uint8_t> bytes, std::span<float> out,
                                     Table table = std::nullopt, std::int64_t target = 0);

// Bandwidth ceilings for the benchmarks (no arithmetic): out[i] = low byte of in[i]'s bits (for
// bits below 256: the scalar and emu128 targets saturate larger ones), and out[i] = float bits
// made from in[i]. Outputs of 16 MiB and more are written with streaming stores, as the kernels
// write theirs. Run on `target` like the operations; false (nothing written) for a target that
// cannot run here.
[[nodiscard]] bool ceiling_4to1(std::span<const float> in, std::span<std::uint8_t> out, std::int64_t target = 0);
[[nodiscard]] bool ceiling_1to4(std::span<const std::uint8_t> in, std::span<float> out, std::int64_t target = 0);

// Far prefetches, in the loops that read their input once (quantize with given scales, and
// ceiling_4to1) on inputs of 16 MiB and more: each line of the input is also prefetched into L2
// some 20 KiB before the loop's own prefetch asks for it in L1. They change no result, only the
// speed, and which way is faster depends on the CPU. At 256 MiB, on an Intel Emerald Rapids Xeon
// they made quantize 1.1x and the ceiling 1.06 to 1.09x faster; on an AMD Zen 5 both ran faster
// without them (by the medians over eight alternations, quantize in 0.86 to 0.93 of the time and
// the ceiling in 0.90; bench/README.md, sessions 42 and 43). `automatic`, the default, turns them on for Intel
// CPUs only. Process-wide; for benchmarks and tests, which run both ways.
enum class FarPrefetch : std::uint8_t { automatic, on, off };
void set_far_prefetch(FarPrefetch mode);
// Whether they are on now (`automatic` resolved for this CPU).
[[nodiscard]] bool far_prefetch();

// Where calibrate_quantize_into's codes pass prefetches the input of the chunk it quantizes next
// (inputs of 16 MiB and more; the chunk's maxima pass then reads it): into L1 (prefetcht0) or into
// L2 only (prefetcht1). From 64 KiB to 16 MiB, where the input is in L2 or L3, it prefetches the
// next chunk into L1 when this says L1, and nothing otherwise (on the Zen 5, AVX-512: 1.12x faster
// at 512 KiB; on AVX2 it was not faster). No result depends on it. At 256 MiB, against the 4-to-1
// ceiling: on an AMD Zen 5, L1 gave 0.94 where L2 gave 0.85 on the AVX-512 targets (medians over 6
// to 8 alternations), but 0.75 to 0.80 where L2 gave 0.81 to 0.86 on AVX2; on an Intel Emerald
// Rapids Xeon L2 gave 0.95 and L1 0.86 (bench/README.md, sessions 42 and 45). `automatic`, the
// default, takes L1 on the AVX-512 targets of AMD CPUs of family 26 (Zen 5) and later, and L2
// everywhere else; `l1` and `l2` take that level on every target. Process-wide, like
// set_far_prefetch.
enum class ChunkPrefetch : std::uint8_t { automatic, l1, l2 };
void set_chunk_prefetch(ChunkPrefetch mode);
// Whether `target` (0: the best this CPU supports) prefetches into L1 now (`automatic` resolved
// for this CPU).
[[nodiscard]] bool chunk_prefetch_l1(std::int64_t target = 0);

}  // namespace qconform::optimized
