#include "core/metrics/ffmpeg_compat.h"

#include <cmath>
#include <limits>

#include "core/common/error.h"
#include "core/metrics/pixel_kernels.h"
#include "core/metrics/ssim_x264_kernel.h"

namespace h3p::metrics {
namespace {

// BT.601 limited range in 8.8 fixed point, 2x2-averaged chroma.
class BuiltinYuvConverter final : public YuvConverter {
 public:
  void convert(const std::uint8_t* rgb, std::size_t /*readable*/, int width, int height,
               Yuv420Frame& out) override {
    out.resize(width, height);
    std::uint8_t* py = out.planes[0].data();
    for (std::size_t i = 0, n = static_cast<std::size_t>(width) * height; i < n; ++i) {
      const int r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
      py[i] = static_cast<std::uint8_t>(((66 * r + 129 * g + 25 * b + 128) >> 8) + 16);
    }
    const int cw = out.plane_width(1), ch = out.plane_height(1);
    for (int y = 0; y < ch; ++y) {
      for (int x = 0; x < cw; ++x) {
        int r = 0, g = 0, b = 0, count = 0;
        for (int dy = 0; dy < 2; ++dy) {
          for (int dx = 0; dx < 2; ++dx) {
            const int sy = 2 * y + dy, sx = 2 * x + dx;
            if (sy >= height || sx >= width) continue;
            const std::uint8_t* p = rgb + 3 * (static_cast<std::size_t>(sy) * width + sx);
            r += p[0];
            g += p[1];
            b += p[2];
            ++count;
          }
        }
        r = (r + count / 2) / count;
        g = (g + count / 2) / count;
        b = (b + count / 2) / count;
        const std::size_t at = static_cast<std::size_t>(y) * cw + x;
        out.planes[1][at] =
            static_cast<std::uint8_t>(((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128);
        out.planes[2][at] =
            static_cast<std::uint8_t>(((112 * r - 94 * g - 18 * b + 128) >> 8) + 128);
      }
    }
  }
  std::string name() const override { return "built-in BT.601 limited range"; }
};

}  // namespace

void Yuv420Frame::resize(int w, int h) {
  width = w;
  height = h;
  for (int p = 0; p < 3; ++p) {
    planes[p].resize(static_cast<std::size_t>(plane_width(p)) * plane_height(p));
  }
}

std::unique_ptr<YuvConverter> make_builtin_yuv_converter() {
  return std::make_unique<BuiltinYuvConverter>();
}

Yuv420View Yuv420View::packed(const std::uint8_t* frame, int width, int height) {
  Yuv420View v;
  v.width = width;
  v.height = height;
  for (int p = 0; p < 3; ++p) {
    v.planes[p] = frame;
    frame += static_cast<std::size_t>(v.plane_width(p)) * v.plane_height(p);
  }
  return v;
}

Yuv420View Yuv420View::of(const Yuv420Frame& f) {
  Yuv420View v;
  v.width = f.width;
  v.height = f.height;
  for (int p = 0; p < 3; ++p) v.planes[p] = f.planes[p].data();
  return v;
}

FfmpegFrameStats ffmpeg_frame_stats(const Yuv420Frame& a, const Yuv420Frame& b,
                                    FfmpegScratch& scratch) {
  return ffmpeg_frame_stats(Yuv420View::of(a), Yuv420View::of(b), scratch);
}

FfmpegFrameStats ffmpeg_frame_stats(const Yuv420View& a, const Yuv420View& b,
                                    FfmpegScratch& scratch) {
  if (a.width != b.width || a.height != b.height) {
    throw InputError("yuv420p frames: sizes differ: " + std::to_string(a.width) + "x" +
                     std::to_string(a.height) + " vs " + std::to_string(b.width) + "x" +
                     std::to_string(b.height));
  }
  FfmpegFrameStats s;
  double pixels = 0;
  for (int p = 0; p < 3; ++p) pixels += static_cast<double>(a.plane_width(p)) * a.plane_height(p);
  for (int p = 0; p < 3; ++p) {
    const int w = a.plane_width(p), h = a.plane_height(p);
    const double n = static_cast<double>(w) * h;
    s.sse[p] = kernels::byte_sse(a.planes[p], b.planes[p], static_cast<std::size_t>(w) * h);
    s.ssim[p] = x264_ssim_plane(a.planes[p], b.planes[p], w, h, scratch);
    s.mse += (static_cast<double>(s.sse[p]) / n) * (n / pixels);
    s.ssim_all += s.ssim[p] * n;
  }
  s.ssim_all /= pixels;  // weighted sum first: identical frames give exactly 1
  return s;
}

double x264_ssim_plane(const std::uint8_t* a, const std::uint8_t* b, int width, int height,
                       FfmpegScratch& scratch, PassIsa isa) {
  if ((width >> 2) < 2 || (height >> 2) < 2) return 1.0;  // no whole window: FFmpeg gives 0/0
  scratch.sums.resize(ssim_kernel::sum_ints(width));
  scratch.windows.resize(ssim_kernel::window_floats(width));
  if (static_cast<int>(isa) > static_cast<int>(best_pass_isa())) isa = best_pass_isa();
  switch (isa) {
    case PassIsa::avx512:
      return ssim_kernel::plane_avx512(a, b, width, height, scratch.sums.data(),
                                       scratch.windows.data());
    case PassIsa::avx2:
      return ssim_kernel::plane_avx2(a, b, width, height, scratch.sums.data(),
                                     scratch.windows.data());
    default:
      return ssim_kernel::plane_scalar(a, b, width, height, scratch.sums.data(),
                                       scratch.windows.data());
  }
}

double psnr_from_mse(double mse, double peak) {
  if (mse <= 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(peak * peak / mse);
}

}  // namespace h3p::metrics
