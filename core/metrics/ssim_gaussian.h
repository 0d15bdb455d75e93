#pragma once
// SSIM as defined by Wang, Bovik, Sheikh and Simoncelli (2004): an 11x11 Gaussian window with
// sigma 1.5 (weights normalised to sum 1), constants c1 = (0.01·L)², c2 = (0.03·L)² with
// dynamic range L = 1 for frames in [0, 1], biased (weighted) variances, evaluated at every
// position where the window lies inside the plane ("valid": (H-10) x (W-10) positions) and
// averaged. Colour frames: per channel, then the mean of the channels. fp32 arithmetic, sums
// of the SSIM map in double. Identical planes give exactly 1.
#include <vector>

namespace h3p::metrics {

// Window side and Gaussian sigma of the definition above.
inline constexpr int kSsimWindow = 11;
inline constexpr double kSsimSigma = 1.5;

// The normalised 1-D Gaussian weights of the window (fp64 sums, rounded to fp32 once).
void gaussian_window(float (&weights)[kSsimWindow]);

// Scratch buffers for one plane size; one object per thread.
class GaussianSsim {
 public:
  // Throws InputError when a side is shorter than the window.
  GaussianSsim(int width, int height);

  // Mean SSIM of two planes of width x height fp32 values (row-major), valid region.
  double plane(const float* a, const float* b);

  int width() const { return width_; }
  int height() const { return height_; }

 private:
  int width_ = 0, height_ = 0;
  float weights_[kSsimWindow];
  std::vector<float> products_;  // ring of 11 rows each of a² + b² and a·b
  std::vector<float> vertical_;  // 4 rows of width: μa, μb, E[a² + b²], E[ab] (vertical pass)
  std::vector<float> filtered_;  // 4 rows of width - 10 (both passes)
  std::vector<float> scratch_;   // one row of SSIM values
};

}  // namespace h3p::metrics
