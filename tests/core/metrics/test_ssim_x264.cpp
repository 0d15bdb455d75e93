// metrics::x264_ssim_plane: every compiled path equals a direct evaluation of the definition
// (each 8x8 window at stride 4 summed from its pixels, x264's float end, windows added four at
// a time into a float per row, rows into a double) bit for bit, on random, identical and
// extreme planes of odd and even sizes; planes without a whole window give 1.
#include <QtTest>
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/metrics/ffmpeg_compat.h"

using namespace h3p;

namespace {

double direct(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, int w,
              int h) {
  const int bw = w >> 2, bh = h >> 2;
  if (bw < 2 || bh < 2) return 1.0;
  const int c1 = static_cast<int>(.01 * .01 * 255 * 255 * 64 + .5);
  const int c2 = static_cast<int>(.03 * .03 * 255 * 255 * 64 * 63 + .5);
  double total = 0;
  for (int by = 0; by + 1 < bh; ++by) {
    float line = 0;
    for (int bx0 = 0; bx0 < bw - 1; bx0 += 4) {
      float part = 0;
      for (int bx = bx0; bx < bx0 + 4 && bx < bw - 1; ++bx) {
        int s1 = 0, s2 = 0, ss = 0, s12 = 0;
        for (int y = 4 * by; y < 4 * by + 8; ++y) {
          for (int x = 4 * bx; x < 4 * bx + 8; ++x) {
            const int va = a[static_cast<std::size_t>(y) * w + x],
                      vb = b[static_cast<std::size_t>(y) * w + x];
            s1 += va;
            s2 += vb;
            ss += va * va + vb * vb;
            s12 += va * vb;
          }
        }
        const int vars = ss * 64 - s1 * s1 - s2 * s2, covar = s12 * 64 - s1 * s2;
        part += static_cast<float>(2 * s1 * s2 + c1) * static_cast<float>(2 * covar + c2) /
                (static_cast<float>(s1 * s1 + s2 * s2 + c1) * static_cast<float>(vars + c2));
      }
      line += part;
    }
    total += line;
  }
  return total / (static_cast<double>(bh - 1) * (bw - 1));
}

}  // namespace

class TestSsimX264 : public QObject {
  Q_OBJECT

 private slots:
  void every_path_equals_the_definition() {
    std::mt19937 rng(7);
    const int sizes[][2] = {{8, 8},    {9, 8},     {35, 13},   {64, 48}, {67, 41},
                            {131, 70}, {672, 384}, {1344, 12}, {7, 100}, {36, 36}};
    for (const auto& s : sizes) {
      const int w = s[0], h = s[1];
      for (int kind = 0; kind < 4; ++kind) {
        std::vector<std::uint8_t> a(static_cast<std::size_t>(w) * h), b(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          a[i] = static_cast<std::uint8_t>(kind == 2 ? (rng() & 1) * 255 : rng());
          const int noise = static_cast<int>(rng() % 9) - 4;
          b[i] = kind == 1   ? a[i]
                 : kind == 3 ? static_cast<std::uint8_t>(std::clamp(a[i] + noise, 0, 255))
                             : static_cast<std::uint8_t>(kind == 2 ? (rng() & 1) * 255 : rng());
        }
        const double want = direct(a, b, w, h);
        for (auto isa :
             {metrics::PassIsa::scalar, metrics::PassIsa::avx2, metrics::PassIsa::avx512}) {
          metrics::FfmpegScratch scratch;
          const double got = metrics::x264_ssim_plane(a.data(), b.data(), w, h, scratch, isa);
          if (got != want) {
            QFAIL(qPrintable(QString("%1x%2 kind %3 %4: %5 != %6")
                                 .arg(w)
                                 .arg(h)
                                 .arg(kind)
                                 .arg(metrics::pass_isa_name(isa))
                                 .arg(got, 0, 'g', 17)
                                 .arg(want, 0, 'g', 17)));
          }
        }
        if (kind == 1 && w >= 8 && h >= 8) QCOMPARE(want, 1.0);
      }
    }
  }

  void no_whole_window_gives_one() {
    std::vector<std::uint8_t> a(7 * 40, 3), b(7 * 40, 200);
    metrics::FfmpegScratch scratch;
    QCOMPARE(metrics::x264_ssim_plane(a.data(), b.data(), 7, 40, scratch), 1.0);
  }
};

QTEST_APPLESS_MAIN(TestSsimX264)
#include "test_ssim_x264.moc"
