#include "core/metrics/ssim_gaussian.h"

#include <cmath>
#include <string>

#include "core/common/error.h"
#include "core/metrics/pixel_kernels.h"

namespace h3p::metrics {

void gaussian_window(float (&weights)[kSsimWindow]) {
  double total = 0;
  double raw[kSsimWindow];
  for (int k = 0; k < kSsimWindow; ++k) {
    const double d = k - kSsimWindow / 2;
    raw[k] = std::exp(-(d * d) / (2.0 * kSsimSigma * kSsimSigma));
    total += raw[k];
  }
  for (int k = 0; k < kSsimWindow; ++k) weights[k] = static_cast<float>(raw[k] / total);
}

GaussianSsim::GaussianSsim(int width, int height) : width_(width), height_(height) {
  if (width < kSsimWindow || height < kSsimWindow) {
    throw InputError("SSIM: frame " + std::to_string(width) + "x" + std::to_string(height) +
                     " is smaller than the " + std::to_string(kSsimWindow) + "x" +
                     std::to_string(kSsimWindow) + " window");
  }
  gaussian_window(weights_);
  products_.resize(static_cast<std::size_t>(2 * kSsimWindow) * width);
  vertical_.resize(static_cast<std::size_t>(4) * width);
  filtered_.resize(static_cast<std::size_t>(4) * width);
  scratch_.resize(width);
}

double GaussianSsim::plane(const float* a, const float* b) {
  const int w = width_;
  const int out_w = w - (kSsimWindow - 1);
  const int out_h = height_ - (kSsimWindow - 1);
  const float c1 = 0.01f * 0.01f, c2 = 0.03f * 0.03f;
  auto ring = [&](int quantity, int row) {
    return products_.data() + (static_cast<std::size_t>(quantity) * kSsimWindow +
                               row % kSsimWindow) * w;
  };
  auto fill_products = [&](int row) {
    const float* ra = a + static_cast<std::size_t>(row) * w;
    const float* rb = b + static_cast<std::size_t>(row) * w;
    kernels::second_moments(ra, rb, ring(0, row), ring(1, row), w);
  };
  for (int row = 0; row < kSsimWindow - 1; ++row) fill_products(row);

  double total = 0;
  const float* rows[kSsimWindow];
  for (int y = 0; y < out_h; ++y) {
    fill_products(y + kSsimWindow - 1);
    // Vertical pass of the four quantities, then the horizontal pass.
    for (int q = 0; q < 4; ++q) {
      for (int k = 0; k < kSsimWindow; ++k) {
        const int row = y + k;
        rows[k] = q == 0   ? a + static_cast<std::size_t>(row) * w
                  : q == 1 ? b + static_cast<std::size_t>(row) * w
                           : ring(q - 2, row);
      }
      float* v = vertical_.data() + static_cast<std::size_t>(q) * w;
      kernels::gaussian_vertical(rows, weights_, v, w);
      kernels::gaussian_horizontal(v, weights_, filtered_.data() + static_cast<std::size_t>(q) * w,
                                   out_w);
    }
    const float* f = filtered_.data();
    total += kernels::ssim_row(f, f + w, f + 2 * w, f + 3 * w, c1, c2, scratch_.data(), out_w);
  }
  return total / (static_cast<double>(out_w) * out_h);
}

}  // namespace h3p::metrics
