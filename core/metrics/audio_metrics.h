#pragma once
// Audio comparison: relative L2 error of a waveform against the reference over the whole clip
// (all channels together) and per window of consecutive samples.
#include <cstdint>
#include <vector>

namespace h3p::metrics {

struct AudioComparison {
  int channels = 0;
  std::int64_t samples = 0;           // per channel
  double rel_l2 = 0;                  // ||a - b||₂ / ||b||₂ (0 when both are silent, inf when only b is)
  double max_abs = 0;                 // max |a - b|
  std::int64_t window_samples = 0;    // samples per channel in each window of `windows`
  std::vector<double> windows;        // relative L2 per window (the last may be shorter)
};

// `a` is measured against the reference `b`; both planar (channels x samples) fp32.
// window_samples > 0; channel c of `a` starts at a + c·stride_a (stride 0: `samples`), likewise
// for b. Throws InputError when a count is not positive.
AudioComparison compare_audio(const float* a, const float* b, int channels, std::int64_t samples,
                              std::int64_t window_samples, std::int64_t stride_a = 0,
                              std::int64_t stride_b = 0);

// ||a - b|| / ||b|| from the two squared norms, with the conventions above.
double relative_l2(double diff_sq, double ref_sq);

}  // namespace h3p::metrics
