#include "ui/review/audio_analysis.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

namespace h3p::ui {

std::vector<float> monoMix(const std::vector<float>& stereo) {
  std::vector<float> mono(stereo.size() / 2);
  for (std::size_t i = 0; i < mono.size(); ++i)
    mono[i] = 0.5f * (stereo[2 * i] + stereo[2 * i + 1]);
  return mono;
}

std::vector<std::pair<float, float>> envelope(const std::vector<float>& mono, long long samples,
                                              int columns) {
  std::vector<std::pair<float, float>> out(static_cast<std::size_t>(std::max(columns, 0)),
                                           {0.f, 0.f});
  if (columns <= 0 || samples <= 0) return out;
  for (int c = 0; c < columns; ++c) {
    const long long begin = samples * c / columns;
    const long long end = std::max(begin + 1, samples * (c + 1) / columns);
    float lo = 0, hi = 0;
    bool any = false;
    for (long long i = begin; i < end; ++i) {
      const float v = i < static_cast<long long>(mono.size()) ? mono[i] : 0.f;
      if (!any) {
        lo = hi = v;
        any = true;
      }
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    out[c] = {lo, hi};
  }
  return out;
}

QImage differenceSpectrogram(const std::vector<float>& a, const std::vector<float>& b, int window,
                             int hop, double floorDb) {
  const std::size_t n = std::max(a.size(), b.size());
  if (n == 0 || window < 2 || hop < 1) return {};
  std::vector<float> diff(n, 0.f);
  for (std::size_t i = 0; i < n; ++i) {
    diff[i] = (i < a.size() ? a[i] : 0.f) - (i < b.size() ? b[i] : 0.f);
  }
  const int columns = static_cast<int>(std::max<std::size_t>(1, (n + hop - 1) / hop));
  const int bins = window / 2;
  std::vector<float> hann(window);
  double windowSum = 0;
  for (int i = 0; i < window; ++i) {
    hann[i] = static_cast<float>(0.5 - 0.5 * std::cos(2 * std::numbers::pi * i / (window - 1)));
    windowSum += hann[i];
  }
  cv::Mat levels(bins, columns, CV_8U);
  cv::Mat frame(1, window, CV_32F), spectrum;
  for (int c = 0; c < columns; ++c) {
    const long long start = static_cast<long long>(c) * hop - window / 2;
    for (int i = 0; i < window; ++i) {
      const long long j = start + i;
      frame.at<float>(i) = (j >= 0 && j < static_cast<long long>(n)) ? diff[j] * hann[i] : 0.f;
    }
    cv::dft(frame, spectrum, cv::DFT_COMPLEX_OUTPUT);
    for (int k = 0; k < bins; ++k) {
      const cv::Vec2f z = spectrum.at<cv::Vec2f>(k);
      // A full-scale sine gives |X| = windowSum / 2.
      const double magnitude = std::hypot(z[0], z[1]) / (windowSum / 2);
      const double db = 20 * std::log10(std::max(magnitude, 1e-12));
      const double level = std::clamp((db - floorDb) / -floorDb, 0.0, 1.0);
      levels.at<uchar>(bins - 1 - k, c) = static_cast<uchar>(std::lround(level * 255));
    }
  }
  cv::Mat bgr;
  cv::applyColorMap(levels, bgr, cv::COLORMAP_INFERNO);
  QImage out(columns, bins, QImage::Format_RGB888);
  cv::Mat outMat(bins, columns, CV_8UC3, out.bits(), static_cast<std::size_t>(out.bytesPerLine()));
  cv::cvtColor(bgr, outMat, cv::COLOR_BGR2RGB);
  return out;
}

}  // namespace h3p::ui
