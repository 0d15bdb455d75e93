// The AVX-512 build (-mavx512f -mavx512bw -mavx512vl) of yuv_swscale_exact.h:
// yuv_swscale_kernel_impl.h with its 32-pixel AVX-512BW row loop, its AVX2 loops for what is
// left, the rest as the compiler vectorises it.
// GCC 12 reports the deliberately undefined upper halves inside its own AVX-512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "core/metrics/yuv_swscale_kernel_impl.h"

namespace h3p::metrics::yuv_kernel {

void convert_avx512(const Args& args) { convert(args); }

}  // namespace h3p::metrics::yuv_kernel
