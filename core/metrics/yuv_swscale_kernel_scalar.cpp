// The portable path of yuv_swscale_exact.h: yuv_swscale_kernel_impl.h as the compiler vectorises
// it.
#include "core/metrics/yuv_swscale_kernel_impl.h"

namespace h3p::metrics::yuv_kernel {

void convert_scalar(const Args& args) { convert(args); }

}  // namespace h3p::metrics::yuv_kernel
