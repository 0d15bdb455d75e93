// The portable path of the x264-style SSIM (ssim_x264_kernel.h).
#include "core/metrics/ssim_x264_kernel_impl.h"

namespace h3p::metrics::ssim_kernel {

double plane_scalar(const unsigned char* a, const unsigned char* b, int width, int height,
                    int* sums, float* windows) {
  return plane(a, b, width, height, sums, windows);
}

}  // namespace h3p::metrics::ssim_kernel
