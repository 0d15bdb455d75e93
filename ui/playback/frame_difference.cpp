#include "ui/playback/frame_difference.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

namespace h3p::ui {

namespace {
cv::Mat wrap(const QImage& image) {
  return cv::Mat(image.height(), image.width(), CV_8UC3, const_cast<uchar*>(image.constBits()),
                 static_cast<std::size_t>(image.bytesPerLine()));
}
}  // namespace

QImage differenceImage(const QImage& a, const QImage& b, double gain) {
  if (a.size() != b.size() || a.isNull()) return {};
  const QImage ra =
      a.format() == QImage::Format_RGB888 ? a : a.convertToFormat(QImage::Format_RGB888);
  const QImage rb =
      b.format() == QImage::Format_RGB888 ? b : b.convertToFormat(QImage::Format_RGB888);
  cv::Mat diff;
  cv::absdiff(wrap(ra), wrap(rb), diff);
  // Largest channel: view the 3-channel image as 1-channel rows 3x wider, take the max of each
  // pixel's three bytes.
  cv::Mat channels[3];
  cv::split(diff, channels);
  cv::Mat magnitude = cv::max(cv::max(channels[0], channels[1]), channels[2]);
  magnitude.convertTo(magnitude, CV_8U, std::max(0.0, gain));  // saturates at 255
  QImage out(a.width(), a.height(), QImage::Format_RGB888);
  cv::Mat outMat = wrap(out);
  cv::Mat bgr;
  cv::applyColorMap(magnitude, bgr, cv::COLORMAP_TURBO);
  cv::cvtColor(bgr, outMat, cv::COLOR_BGR2RGB);
  return out;
}

int differenceMagnitude(QRgb a, QRgb b, double gain) {
  const int d = std::max({std::abs(qRed(a) - qRed(b)), std::abs(qGreen(a) - qGreen(b)),
                          std::abs(qBlue(a) - qBlue(b))});
  return std::min(255, static_cast<int>(std::lround(d * std::max(0.0, gain))));
}

}  // namespace h3p::ui
