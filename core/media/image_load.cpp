#include "core/media/image_load.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/common/error.h"

namespace h3p::media {

RgbImage load_reference_image(const std::filesystem::path& file, int width, int height) {
  if (width <= 0 || height <= 0) {
    throw InputError(file.string() + ": target size " + std::to_string(width) + "x" +
                     std::to_string(height) + " is not positive");
  }
  const cv::Mat raw = cv::imread(file.string(), cv::IMREAD_COLOR);
  if (raw.empty()) throw InputError(file.string() + ": cannot read as an image");
  cv::Mat rgb;
  cv::cvtColor(raw, rgb, cv::COLOR_BGR2RGB);
  // Cover the target, then crop the centre.
  const double scale = std::max(static_cast<double>(width) / rgb.cols,
                                static_cast<double>(height) / rgb.rows);
  const int sw = std::max(width, static_cast<int>(std::lround(rgb.cols * scale)));
  const int sh = std::max(height, static_cast<int>(std::lround(rgb.rows * scale)));
  cv::Mat scaled;
  cv::resize(rgb, scaled, cv::Size(sw, sh), 0, 0, scale < 1.0 ? cv::INTER_AREA : cv::INTER_CUBIC);
  const cv::Mat crop = scaled(cv::Rect((sw - width) / 2, (sh - height) / 2, width, height));
  cv::Mat f32;
  crop.convertTo(f32, CV_32FC3, 1.0 / 255.0);
  RgbImage out;
  out.width = width;
  out.height = height;
  out.planes.resize(static_cast<std::size_t>(3) * width * height);
  std::vector<cv::Mat> channels(3);
  for (int c = 0; c < 3; ++c) {
    channels[c] = cv::Mat(height, width, CV_32F,
                          out.planes.data() + static_cast<std::size_t>(c) * width * height);
  }
  cv::split(f32, channels);
  return out;
}

}  // namespace h3p::media
