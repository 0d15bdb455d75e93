// metrics::make_swscale_exact_yuv_converter against libswscale itself
// (media::make_swscale_yuv_converter): every byte of Y, U and V on random frames of odd and
// even sizes (1x1 up to the benchmark's 1344x768), with random and extreme pixel values, on
// every compiled path (widths around each SIMD loop's step included); odd widths read the
// pixel after the frame as libswscale does.
#include <QtTest>
#include <cstdint>
#include <random>
#include <vector>

#include "core/media/yuv_swscale.h"
#include "core/metrics/yuv_swscale_exact.h"

using namespace h3p;

namespace {

enum class Fill { random, extremes, smooth };

// A frame of width x height followed by `after` bytes that the converters may read.
std::vector<std::uint8_t> make_frame(int width, int height, std::size_t after, Fill fill,
                                     std::mt19937& rng) {
  const std::size_t bytes = static_cast<std::size_t>(width) * height * 3;
  std::vector<std::uint8_t> buf(bytes + after);
  for (std::size_t i = 0; i < buf.size(); ++i) {
    switch (fill) {
      case Fill::random:
        buf[i] = static_cast<std::uint8_t>(rng());
        break;
      case Fill::extremes:
        buf[i] = (rng() & 1) ? 255 : 0;
        break;
      case Fill::smooth: {
        const std::size_t px = i / 3;
        const int x = static_cast<int>(px % width), y = static_cast<int>(px / width);
        buf[i] = static_cast<std::uint8_t>((x * 7 + y * 3 + (i % 3) * 80 + (rng() % 5)) & 255);
        break;
      }
    }
  }
  return buf;
}

// Index of the first differing byte of plane p, or -1.
long first_difference(const metrics::Yuv420Frame& a, const metrics::Yuv420Frame& b, int p) {
  for (std::size_t i = 0; i < a.planes[p].size(); ++i) {
    if (a.planes[p][i] != b.planes[p][i]) return static_cast<long>(i);
  }
  return -1;
}

}  // namespace

class TestYuvSwscale : public QObject {
  Q_OBJECT

 private:
  // Converts with libswscale and with the exact converter on `isa`; fails on any byte.
  void check(int width, int height, std::size_t after, Fill fill, metrics::PassIsa isa,
             std::mt19937& rng) {
    const std::vector<std::uint8_t> frame = make_frame(width, height, after, fill, rng);
    metrics::Yuv420Frame want, got;
    media::make_swscale_yuv_converter()->convert(frame.data(), frame.size(), width, height, want);
    metrics::make_swscale_exact_yuv_converter(isa)->convert(frame.data(), frame.size(), width,
                                                            height, got);
    QCOMPARE(got.width, want.width);
    QCOMPARE(got.height, want.height);
    for (int p = 0; p < 3; ++p) {
      QCOMPARE(got.planes[p].size(), want.planes[p].size());
      const long at = first_difference(want, got, p);
      if (at >= 0) {
        QFAIL(qPrintable(QString("%1x%2 (%3 bytes after, fill %4, %5): plane %6 byte %7: "
                                 "libswscale %8, exact %9")
                             .arg(width)
                             .arg(height)
                             .arg(after)
                             .arg(static_cast<int>(fill))
                             .arg(metrics::pass_isa_name(isa))
                             .arg(p)
                             .arg(at)
                             .arg(want.planes[p][at])
                             .arg(got.planes[p][at])));
      }
    }
  }

  std::vector<metrics::PassIsa> isas() const {
    std::vector<metrics::PassIsa> out;
    for (auto isa : {metrics::PassIsa::scalar, metrics::PassIsa::avx2, metrics::PassIsa::avx512}) {
      if (static_cast<int>(isa) <= static_cast<int>(metrics::best_pass_isa())) out.push_back(isa);
    }
    return out;
  }

 private slots:
  // Every size up to 24x24: the filter's border cases and the odd-width tail.
  void small_sizes_every_byte() {
    std::mt19937 rng(1);
    for (auto isa : isas()) {
      for (int h = 1; h <= 24; ++h) {
        for (int w = 1; w <= 24; ++w) check(w, h, 512, Fill::random, isa, rng);
      }
    }
  }

  // Widths around the SIMD loops' steps, each loop handing over to the next: rows of 32
  // (AVX-512) and 16 (AVX2) pixels, chroma columns of 64 and 32, then the scalar tail; odd and
  // even, on a few heights.
  void simd_handover_every_byte() {
    std::mt19937 rng(5);
    for (auto isa : isas()) {
      for (int h : {1, 2, 3, 6, 9}) {
        for (int w = 25; w <= 200; ++w) {
          for (Fill fill : {Fill::random, Fill::extremes}) check(w, h, 512, fill, isa, rng);
        }
      }
    }
  }

  // Larger odd and even sizes, random, extreme and smooth content.
  void large_sizes_every_byte() {
    std::mt19937 rng(2);
    const int sizes[][2] = {{1344, 768}, {1343, 767}, {640, 360}, {333, 191},
                            {17, 1000},  {1000, 17},  {258, 130}, {129, 65}};
    for (auto isa : isas()) {
      for (const auto& s : sizes) {
        for (Fill fill : {Fill::random, Fill::extremes, Fill::smooth}) {
          check(s[0], s[1], 512, fill, isa, rng);
        }
      }
    }
  }

  // The last frame of a mapping (fewer than 256 bytes readable after it): the pixel after the
  // last odd-width row is 0, as in the libswscale converter's padded copy.
  void nothing_readable_after_the_frame() {
    std::mt19937 rng(3);
    for (auto isa : isas()) {
      for (const auto& s : {std::pair{33, 17}, std::pair{7, 5}, std::pair{1343, 9}}) {
        for (std::size_t after : {0, 3, 255})
          check(s.first, s.second, after, Fill::random, isa, rng);
      }
    }
  }

  // One converter reused across sizes rebuilds its filter.
  void reuse_across_sizes() {
    std::mt19937 rng(4);
    auto exact = metrics::make_swscale_exact_yuv_converter();
    auto reference = media::make_swscale_yuv_converter();
    for (const auto& s : {std::pair{64, 48}, std::pair{33, 17}, std::pair{64, 48}}) {
      const auto frame = make_frame(s.first, s.second, 64, Fill::random, rng);
      metrics::Yuv420Frame want, got;
      reference->convert(frame.data(), frame.size(), s.first, s.second, want);
      exact->convert(frame.data(), frame.size(), s.first, s.second, got);
      for (int p = 0; p < 3; ++p) QCOMPARE(first_difference(want, got, p), -1L);
    }
    QCOMPARE(QString::fromStdString(exact->name()), QString::fromStdString(reference->name()));
  }

  // The 2:1 filter of 768 rows: 8 taps summing to 4096 with libswscale's MPEG-2 siting.
  void chroma_filter_shape() {
    const metrics::SwscaleFilter f = metrics::swscale_bicubic_filter(768, 384, 128, 128);
    QCOMPARE(f.taps, 8);
    for (int i = 0; i < 384; ++i) {
      int sum = 0;
      for (int j = 0; j < f.taps; ++j) sum += f.coef[i * f.taps + j];
      QCOMPARE(sum, 4096);
      QVERIFY(f.pos[i] >= 0 && f.pos[i] + f.taps <= 768);
    }
    QCOMPARE(f.pos[2], 1);
    QCOMPARE(static_cast<int>(f.coef[2 * 8 + 3]), 1786);
  }
};

QTEST_APPLESS_MAIN(TestYuvSwscale)
#include "test_yuv_swscale.moc"
