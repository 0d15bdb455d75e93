#include "core/metrics/ffmpeg_compat.h"

#include <cmath>
#include <limits>

#include "core/common/error.h"
#include "core/metrics/pixel_kernels.h"

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
        out.planes[1][at] = static_cast<std::uint8_t>(((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128);
        out.planes[2][at] = static_cast<std::uint8_t>(((112 * r - 94 * g - 18 * b + 128) >> 8) + 128);
      }
    }
  }
  std::string name() const override { return "built-in BT.601 limited range"; }
};

// x264's 4x4 block sums of one row of blocks: s1, s2, Σa²+Σb², Σab.
void ssim_4x4_line(const std::uint8_t* a, const std::uint8_t* b, int stride, int (*sums)[4],
                   int blocks) {
  for (int z = 0; z < blocks; ++z) {
    int s1 = 0, s2 = 0, ss = 0, s12 = 0;
    for (int y = 0; y < 4; ++y) {
      const std::uint8_t* ra = a + y * stride + 4 * z;
      const std::uint8_t* rb = b + y * stride + 4 * z;
      for (int x = 0; x < 4; ++x) {
        const int va = ra[x], vb = rb[x];
        s1 += va;
        s2 += vb;
        ss += va * va + vb * vb;
        s12 += va * vb;
      }
    }
    sums[z][0] = s1;
    sums[z][1] = s2;
    sums[z][2] = ss;
    sums[z][3] = s12;
  }
}

float ssim_end1(int s1, int s2, int ss, int s12) {
  constexpr int c1 = static_cast<int>(.01 * .01 * 255 * 255 * 64 + .5);
  constexpr int c2 = static_cast<int>(.03 * .03 * 255 * 255 * 64 * 63 + .5);
  const int vars = ss * 64 - s1 * s1 - s2 * s2;
  const int covar = s12 * 64 - s1 * s2;
  return static_cast<float>(2 * s1 * s2 + c1) * static_cast<float>(2 * covar + c2) /
         (static_cast<float>(s1 * s1 + s2 * s2 + c1) * static_cast<float>(vars + c2));
}

// Mean SSIM of one plane: windows of 2x2 blocks at every block position.
double ssim_plane(const std::uint8_t* a, const std::uint8_t* b, int width, int height,
                  FfmpegScratch& scratch) {
  const int bw = width >> 2, bh = height >> 2;
  if (bw < 2 || bh < 2) return 1.0;  // no complete window: FFmpeg divides 0 by 0 here
  scratch.sums.resize(static_cast<std::size_t>(2) * (bw + 3) * 4);
  int(*sum0)[4] = reinterpret_cast<int(*)[4]>(scratch.sums.data());
  int(*sum1)[4] = sum0 + bw + 3;
  double total = 0;
  int z = 0;
  for (int y = 1; y < bh; ++y) {
    for (; z <= y; ++z) {
      std::swap(sum0, sum1);
      ssim_4x4_line(a + static_cast<std::size_t>(4 * z) * width,
                    b + static_cast<std::size_t>(4 * z) * width, width, sum0, bw);
    }
    float line = 0;
    for (int i = 0; i < bw - 1; i += 4) {
      float part = 0;
      for (int j = i; j < i + 4 && j < bw - 1; ++j) {
        part += ssim_end1(sum0[j][0] + sum0[j + 1][0] + sum1[j][0] + sum1[j + 1][0],
                          sum0[j][1] + sum0[j + 1][1] + sum1[j][1] + sum1[j + 1][1],
                          sum0[j][2] + sum0[j + 1][2] + sum1[j][2] + sum1[j + 1][2],
                          sum0[j][3] + sum0[j + 1][3] + sum1[j][3] + sum1[j + 1][3]);
      }
      line += part;
    }
    total += line;
  }
  return total / (static_cast<double>(bh - 1) * (bw - 1));
}

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

FfmpegFrameStats ffmpeg_frame_stats(const Yuv420Frame& a, const Yuv420Frame& b,
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
    s.sse[p] = kernels::byte_sse(a.planes[p].data(), b.planes[p].data(), a.planes[p].size());
    s.ssim[p] = ssim_plane(a.planes[p].data(), b.planes[p].data(), w, h, scratch);
    s.mse += (static_cast<double>(s.sse[p]) / n) * (n / pixels);
    s.ssim_all += s.ssim[p] * n;
  }
  s.ssim_all /= pixels;  // weighted sum first: identical frames give exactly 1
  return s;
}

double psnr_from_mse(double mse, double peak) {
  if (mse <= 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(peak * peak / mse);
}

}  // namespace h3p::metrics
