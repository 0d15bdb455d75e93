// The AVX-512 build (-mavx512f -mavx512bw -mavx512vl) of yuv_swscale_exact.h:
// yuv_swscale_kernel_impl.h with its AVX2 loops, the rest as the compiler vectorises it.
#include "core/metrics/yuv_swscale_kernel_impl.h"

namespace h3p::metrics::yuv_kernel {

void convert_avx512(const Args& args) { convert(args); }

}  // namespace h3p::metrics::yuv_kernel
