#include "core/metrics/yuv_swscale_exact.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/common/error.h"
#include "core/metrics/yuv_swscale_kernel.h"

namespace h3p::metrics {
namespace {

int floor_log2(unsigned v) {
  int n = 0;
  while (v >>= 1) ++n;
  return n;
}

std::int64_t rounded_div(std::int64_t a, std::int64_t b) {
  return (a >= 0 ? a + b / 2 : a - b / 2) / b;
}

// libswscale's bicubic kernel (B = 0, C = 0.6) at distance d (1 << 30 = one tap), in units of
// 1 << 54 / (1 << 54 / fone).
std::int64_t bicubic(std::int64_t d, std::int64_t fone) {
  constexpr std::int64_t b = 0;
  const auto c = static_cast<std::int64_t>(0.6 * (1 << 24));
  std::int64_t coeff = 0;
  if (d < 1LL << 31) {
    const std::int64_t dd = (d * d) >> 30;
    const std::int64_t ddd = (dd * d) >> 30;
    if (d < 1LL << 30) {
      coeff = (12 * (1 << 24) - 9 * b - 6 * c) * ddd + (-18 * (1 << 24) + 12 * b + 6 * c) * dd +
              (6 * (1 << 24) - 2 * b) * (1LL << 30);
    } else {
      coeff = (-b - 6 * c) * ddd + (6 * b + 30 * c) * dd + (-12 * b - 48 * c) * d +
              (8 * b + 24 * c) * (1LL << 30);
    }
  }
  return coeff / ((1LL << 54) / fone);
}

}  // namespace

SwscaleFilter swscale_bicubic_filter(int src, int dst, int src_pos, int dst_pos) {
  if (src < 1 || dst < 1) throw InputError("yuv420p: filter: empty size");
  const int inc = static_cast<int>(((static_cast<std::int64_t>(src) << 16) + (dst >> 1)) / dst);
  const std::int64_t fone = 1LL << (54 - std::min(floor_log2(static_cast<unsigned>(src / dst)), 8));
  std::vector<int> pos(dst);
  std::vector<std::int64_t> f;
  int size = 1;
  // 1. Raw coefficients.
  if (std::abs(inc - 0x10000) < 10 && src_pos == dst_pos) {  // unscaled
    f.assign(dst, fone);
    for (int i = 0; i < dst; ++i) pos[i] = i;
  } else {
    size = inc <= 1 << 16 ? 1 + 4 : 1 + (4 * src + dst - 1) / dst;
    size = std::max(std::min(size, src - 2), 1);
    f.assign(static_cast<std::size_t>(dst) * size, 0);
    std::int64_t center =
        ((dst_pos * static_cast<std::int64_t>(inc)) >> 7) - ((src_pos * 0x10000LL) >> 7);
    for (int i = 0; i < dst; ++i) {
      int xx = static_cast<int>((center - (size - 2) * (1LL << 16)) / (1 << 17));
      pos[i] = xx;
      for (int j = 0; j < size; ++j, ++xx) {
        std::int64_t d = std::llabs(static_cast<std::int64_t>(xx) * (1 << 17) - center) << 13;
        if (inc > 1 << 16) d = d * dst / src;
        f[static_cast<std::size_t>(i) * size + j] = bicubic(d, fone);
      }
      center += 2LL * inc;
    }
  }
  // 2. Drop near-zero taps at both ends (shift left; the widest row sets the size).
  auto at = [&](int i, int j) -> std::int64_t& {
    return f[static_cast<std::size_t>(i) * size + j];
  };
  int min_size = 0;
  const double cut = 0.002 * static_cast<double>(fone);
  for (int i = dst - 1; i >= 0; --i) {
    int keep = size;
    std::int64_t cutoff = 0;
    for (int j = 0; j < size; ++j) {
      cutoff += std::llabs(at(i, 0));
      if (static_cast<double>(cutoff) > cut) break;
      if (i < dst - 1 && pos[i] >= pos[i + 1]) break;
      for (int k = 1; k < size; ++k) at(i, k - 1) = at(i, k);
      at(i, size - 1) = 0;
      ++pos[i];
    }
    cutoff = 0;
    for (int j = size - 1; j > 0; --j) {
      cutoff += std::llabs(at(i, j));
      if (static_cast<double>(cutoff) > cut) break;
      --keep;
    }
    min_size = std::max(min_size, keep);
  }
  // x86 aligns vertical filters to 2 taps, except a single one.
  const int align = min_size == 1 ? 1 : 2;
  const int taps = (min_size + align - 1) & ~(align - 1);
  std::vector<std::int64_t> g(static_cast<std::size_t>(dst) * taps, 0);
  auto gt = [&](int i, int j) -> std::int64_t& {
    return g[static_cast<std::size_t>(i) * taps + j];
  };
  for (int i = 0; i < dst; ++i) {
    for (int j = 0; j < taps && j < size; ++j) gt(i, j) = at(i, j);
  }
  // 3. Borders: taps outside [0, src) fold into the edge row.
  for (int i = 0; i < dst; ++i) {
    if (pos[i] < 0) {
      for (int j = 1; j < taps; ++j) {
        const int left = std::max(j + pos[i], 0);
        gt(i, left) += gt(i, j);
        gt(i, j) = 0;
      }
      pos[i] = 0;
    }
    if (pos[i] + taps > src) {
      const int shift = pos[i] + std::min(taps - src, 0);
      std::int64_t acc = 0;
      for (int j = taps - 1; j >= 0; --j) {
        if (pos[i] + j >= src) {
          acc += gt(i, j);
          gt(i, j) = 0;
        }
      }
      for (int j = taps - 1; j >= 0; --j) gt(i, j) = j < shift ? 0 : gt(i, j - shift);
      pos[i] -= shift;
      gt(i, src - 1 - pos[i]) += acc;
    }
  }
  // 4. Normalise to 1 << 12, carrying each tap's rounding error into the next.
  SwscaleFilter out;
  out.taps = taps;
  out.pos = pos;
  out.coef.assign(static_cast<std::size_t>(dst) * taps, 0);
  constexpr std::int64_t one = 1 << 12;
  for (int i = 0; i < dst; ++i) {
    std::int64_t sum = 0, error = 0;
    for (int j = 0; j < taps; ++j) sum += gt(i, j);
    sum = (sum + one / 2) / one;
    if (sum == 0) sum = 1;
    for (int j = 0; j < taps; ++j) {
      const std::int64_t v = gt(i, j) + error;
      const auto q = static_cast<int>(rounded_div(v, sum));
      out.coef[static_cast<std::size_t>(i) * taps + j] = static_cast<std::int16_t>(q);
      error = v - q * sum;
    }
  }
  return out;
}

namespace {

class SwscaleExactConverter final : public YuvConverter {
 public:
  explicit SwscaleExactConverter(PassIsa isa)
      : isa_(static_cast<int>(isa) > static_cast<int>(best_pass_isa()) ? best_pass_isa() : isa) {}

  void convert(const std::uint8_t* rgb, std::size_t readable, int width, int height,
               Yuv420Frame& out) override {
    if (width < 1 || height < 1) throw InputError("yuv420p: empty frame");
    if (width != width_ || height != height_) {
      // libswscale's chroma siting: source rows at 128/256, 4:2:0 output rows between two.
      filter_ = swscale_bicubic_filter(height, (height + 1) / 2, 128, 128);
      if (filter_.taps > 64) throw InputError("yuv420p: vertical filter too long");
      ring_.assign(static_cast<std::size_t>(2) * filter_.taps * ((width + 1) / 2), 0);
      width_ = width;
      height_ = height;
    }
    out.resize(width, height);
    yuv_kernel::Args a;
    a.rgb = rgb;
    const std::size_t bytes = static_cast<std::size_t>(width) * height * 3;
    // The pixel after the last row (odd widths): the bytes there when the libswscale
    // converter reads them in place (256 readable bytes), else the zeros of its padded copy.
    if (readable >= bytes + 256) std::copy(rgb + bytes, rgb + bytes + 3, a.tail);
    a.width = width;
    a.height = height;
    a.y = out.planes[0].data();
    a.u = out.planes[1].data();
    a.v = out.planes[2].data();
    a.taps = filter_.taps;
    a.pos = filter_.pos.data();
    a.coef = filter_.coef.data();
    // libswscale's x86 build switches to its C output code for the last two luma rows, so
    // the chroma rows written with them (luma row 2·i >= height - 2) are filtered exactly.
    a.exact_from = std::max(0, (height - 2 + 1) / 2);
    a.ring = ring_.data();
    switch (isa_) {
      case PassIsa::avx512:
        yuv_kernel::convert_avx512(a);
        break;
      case PassIsa::avx2:
        yuv_kernel::convert_avx2(a);
        break;
      default:
        yuv_kernel::convert_scalar(a);
        break;
    }
  }

  std::string name() const override { return "libswscale rgb24->yuv420p (bicubic)"; }

 private:
  PassIsa isa_;
  int width_ = 0, height_ = 0;
  SwscaleFilter filter_;
  std::vector<std::int16_t> ring_;
};

}  // namespace

std::unique_ptr<YuvConverter> make_swscale_exact_yuv_converter(PassIsa isa) {
  return std::make_unique<SwscaleExactConverter>(isa);
}

}  // namespace h3p::metrics
