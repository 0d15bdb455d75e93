#include "core/media/yuv_swscale.h"

#include <cstring>
#include <vector>

#include "core/media/ffmpeg_check.h"

namespace h3p::media {
namespace {

class SwscaleYuvConverter final : public metrics::YuvConverter {
 public:
  void convert(const std::uint8_t* rgb, std::size_t readable, int width, int height,
               metrics::Yuv420Frame& out) override {
    if (!sws_ || width != width_ || height != height_) {
      sws_.reset(sws_getContext(width, height, AV_PIX_FMT_RGB24, width, height, AV_PIX_FMT_YUV420P,
                                SWS_BICUBIC, nullptr, nullptr, nullptr));
      if (!sws_) throw FfmpegError("libswscale: cannot convert rgb24 to yuv420p");
      width_ = width;
      height_ = height;
    }
    out.resize(width, height);
    // libswscale's SIMD reads past the end of a line: a frame without kPadding readable bytes
    // after it (the last one of a memory mapping) is converted from a padded copy.
    const std::size_t bytes = static_cast<std::size_t>(width) * height * 3;
    const std::uint8_t* source = rgb;
    if (readable < bytes + kPadding) {
      padded_.resize(bytes + kPadding);
      std::memcpy(padded_.data(), rgb, bytes);
      std::memset(padded_.data() + bytes, 0, kPadding);  // what an odd width reads: zeros
      source = padded_.data();
    }
    const std::uint8_t* src[1] = {source};
    const int src_stride[1] = {3 * width};
    // Its SIMD also writes up to a vector past the end of a line: planes whose lines are not
    // a multiple of kAlign go through padded copies.
    std::uint8_t* dst[3];
    int dst_stride[3];
    bool padded = false;
    for (int p = 0; p < 3; ++p) {
      const int w = out.plane_width(p);
      if (w % kAlign == 0) {
        dst[p] = out.planes[p].data();
        dst_stride[p] = w;
      } else {
        padded = true;
        dst_stride[p] = (w + kAlign - 1) / kAlign * kAlign;
        lines_[p].resize(static_cast<std::size_t>(dst_stride[p]) * (out.plane_height(p) + 1));
        dst[p] = lines_[p].data();
      }
    }
    sws_scale(sws_.get(), src, src_stride, 0, height, dst, dst_stride);
    if (!padded) return;
    for (int p = 0; p < 3; ++p) {
      if (dst[p] == out.planes[p].data()) continue;
      const int w = out.plane_width(p);
      for (int y = 0; y < out.plane_height(p); ++y) {
        std::memcpy(out.planes[p].data() + static_cast<std::size_t>(y) * w,
                    dst[p] + static_cast<std::size_t>(y) * dst_stride[p], w);
      }
    }
  }
  std::string name() const override { return "libswscale rgb24->yuv420p (bicubic)"; }

 private:
  static constexpr std::size_t kPadding = 256;
  static constexpr int kAlign = 64;
  Sws sws_;
  int width_ = 0, height_ = 0;
  std::vector<std::uint8_t> padded_;
  std::vector<std::uint8_t> lines_[3];
};

}  // namespace

std::unique_ptr<metrics::YuvConverter> make_swscale_yuv_converter() {
  return std::make_unique<SwscaleYuvConverter>();
}

}  // namespace h3p::media
