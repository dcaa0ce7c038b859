// The EMU128 target's kernels, compiled in a translation unit of their own (CMake defines
// HWY_COMPILE_ONLY_EMU128 and HWY_BROKEN_EMU128=0 for this file alone), so that the build runs it
// alongside optimized.cc, whose foreach_target.h compiles every other target with SCALAR as its
// fallback. optimized.cc calls these through kEmu128Kernels for the target HWY_EMU128.

#include "hwy/highway.h"
#include "quantize-inl.h"

#if HWY_TARGET != HWY_EMU128
#error "emu128.cc must be compiled for EMU128 alone (HWY_COMPILE_ONLY_EMU128, HWY_BROKEN_EMU128=0)"
#endif

namespace qconform::optimized::detail {

namespace k = ::qconform::optimized::N_EMU128;

const KernelTable kEmu128Kernels = {&k::QuantizeRows, &k::DequantizeRows, &k::CalibrateQuantizeRows,
                                    &k::AbsMaxRows,   &k::Scales,         &k::PackRows,
                                    &k::UnpackRows,   &k::LookupQuantizeRows, &k::LookupDequantizeRows,
                                    &k::Ceiling4to1,  &k::Ceiling1to4,    &k::TargetOfThisCode};

}  // namespace qconform::optimized::detail
