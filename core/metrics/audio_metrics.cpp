#include "core/metrics/audio_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/common/error.h"

namespace h3p::metrics {

double relative_l2(double diff_sq, double ref_sq) {
  if (ref_sq > 0) return std::sqrt(diff_sq / ref_sq);
  return diff_sq > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

AudioComparison compare_audio(const float* a, const float* b, int channels, std::int64_t samples,
                              std::int64_t window_samples, std::int64_t stride_a,
                              std::int64_t stride_b) {
  if (channels <= 0 || samples <= 0 || window_samples <= 0) {
    throw InputError("audio comparison: channels, samples and window must be positive (got " +
                     std::to_string(channels) + ", " + std::to_string(samples) + ", " +
                     std::to_string(window_samples) + ")");
  }
  AudioComparison out;
  out.channels = channels;
  out.samples = samples;
  out.window_samples = window_samples;
  double diff_total = 0, ref_total = 0;
  for (std::int64_t start = 0; start < samples; start += window_samples) {
    const std::int64_t end = std::min(samples, start + window_samples);
    double diff = 0, ref = 0;
    for (int c = 0; c < channels; ++c) {
      const float* pa = a + c * (stride_a > 0 ? stride_a : samples);
      const float* pb = b + c * (stride_b > 0 ? stride_b : samples);
      for (std::int64_t i = start; i < end; ++i) {
        const double d = static_cast<double>(pa[i]) - static_cast<double>(pb[i]);
        diff += d * d;
        ref += static_cast<double>(pb[i]) * pb[i];
        out.max_abs = std::max(out.max_abs, std::abs(d));
      }
    }
    out.windows.push_back(relative_l2(diff, ref));
    diff_total += diff;
    ref_total += ref;
  }
  out.rel_l2 = relative_l2(diff_total, ref_total);
  return out;
}

}  // namespace h3p::metrics
