// Pixel and audio metrics against hand-computed values and direct (unoptimised, fp64)
// reference implementations of the definitions: Gaussian SSIM, x264-style SSIM, PSNR,
// temporal RMSE, audio relative L2; edge cases (identical, one pixel, shapes, tiny frames).
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/common/error.h"
#include "core/metrics/audio_metrics.h"
#include "core/metrics/clip_compare.h"
#include "core/metrics/ffmpeg_compat.h"
#include "core/metrics/ssim_gaussian.h"

using namespace h3p;
using namespace h3p::metrics;

namespace {

// A synthetic clip: planes (3, F, H, W) fp32 and the quantised RGB bytes.
struct Clip {
  int w = 0, h = 0, f = 0;
  std::vector<float> planes;
  std::vector<std::uint8_t> rgb;
  std::vector<float> audio;  // (2, S)
  float& at(int c, int fr, int y, int x) {
    return planes[((static_cast<std::size_t>(c) * f + fr) * h + y) * w + x];
  }
  void quantise() {
    rgb.resize(static_cast<std::size_t>(f) * h * w * 3);
    for (int fr = 0; fr < f; ++fr)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          for (int c = 0; c < 3; ++c) {
            const float v = std::min(1.0f, std::max(0.0f, at(c, fr, y, x)));
            rgb[((static_cast<std::size_t>(fr) * h + y) * w + x) * 3 + c] =
                static_cast<std::uint8_t>(std::floor(v * 255.0f + 0.5f));
          }
  }
  ClipView view(int sample_rate = 32000) const {
    ClipView v;
    v.width = w;
    v.height = h;
    v.frames = f;
    v.fps = 24;
    v.rgb = rgb.data();
    v.planes = planes.data();
    v.plane_type = PlaneType::f32;
    if (!audio.empty()) {
      v.audio = audio.data();
      v.audio_channels = 2;
      v.audio_samples = static_cast<std::int64_t>(audio.size() / 2);
      v.sample_rate = sample_rate;
    }
    return v;
  }
};

// Smooth random content (sums of a few sinusoids plus noise), in [0, 1].
Clip random_clip(int w, int h, int f, std::uint32_t seed, float noise = 0.05f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  Clip c{w, h, f, std::vector<float>(static_cast<std::size_t>(3) * f * h * w), {}, {}};
  const float fx = 0.05f + 0.2f * u(rng), fy = 0.05f + 0.2f * u(rng), ph = 6.0f * u(rng);
  for (int ch = 0; ch < 3; ++ch)
    for (int fr = 0; fr < f; ++fr)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          const float v = 0.5f + 0.3f * std::sin(fx * x + fy * y + ph + 0.3f * fr + ch) +
                          noise * (u(rng) - 0.5f);
          c.at(ch, fr, y, x) = std::min(1.0f, std::max(0.0f, v));
        }
  c.quantise();
  return c;
}

// Direct Gaussian SSIM of one plane in double (the definition, no separability or symmetry).
double reference_gaussian_ssim(const float* a, const float* b, int w, int h) {
  double g[11], sum = 0;
  for (int k = 0; k < 11; ++k) sum += g[k] = std::exp(-((k - 5.0) * (k - 5.0)) / (2 * 1.5 * 1.5));
  for (double& v : g) v /= sum;
  const double c1 = 1e-4, c2 = 9e-4;
  double total = 0;
  for (int y = 0; y + 11 <= h; ++y)
    for (int x = 0; x + 11 <= w; ++x) {
      double ma = 0, mb = 0, aa = 0, bb = 0, ab = 0;
      for (int i = 0; i < 11; ++i)
        for (int j = 0; j < 11; ++j) {
          const double wt = g[i] * g[j];
          const double va = a[(y + i) * w + x + j], vb = b[(y + i) * w + x + j];
          ma += wt * va;
          mb += wt * vb;
          aa += wt * va * va;
          bb += wt * vb * vb;
          ab += wt * va * vb;
        }
      const double sa = aa - ma * ma, sb = bb - mb * mb, sab = ab - ma * mb;
      total += ((2 * ma * mb + c1) * (2 * sab + c2)) / ((ma * ma + mb * mb + c1) * (sa + sb + c2));
    }
  return total / ((w - 10.0) * (h - 10.0));
}

// x264-style SSIM of one 8-bit plane in double: 8x8 windows at stride 4.
double reference_x264_ssim(const std::uint8_t* a, const std::uint8_t* b, int w, int h) {
  const double c1 = .01 * .01 * 255 * 255 * 64, c2 = .03 * .03 * 255 * 255 * 64 * 63;
  double total = 0;
  int count = 0;
  for (int by = 0; by + 1 < h / 4; ++by)
    for (int bx = 0; bx + 1 < w / 4; ++bx) {
      double s1 = 0, s2 = 0, ss = 0, s12 = 0;
      for (int y = 4 * by; y < 4 * by + 8; ++y)
        for (int x = 4 * bx; x < 4 * bx + 8; ++x) {
          const double va = a[y * w + x], vb = b[y * w + x];
          s1 += va;
          s2 += vb;
          ss += va * va + vb * vb;
          s12 += va * vb;
        }
      const double vars = ss * 64 - s1 * s1 - s2 * s2, covar = s12 * 64 - s1 * s2;
      total += (2 * s1 * s2 + std::round(c1)) * (2 * covar + std::round(c2)) /
               ((s1 * s1 + s2 * s2 + std::round(c1)) * (vars + std::round(c2)));
      ++count;
    }
  return total / count;
}

ClipComparison compare(const Clip& a, const Clip& b, int threads = 2) {
  ClipParams p;
  p.threads = threads;
  return compare_clips(a.view(), b.view(), p);
}

}  // namespace

class MetricsTest : public QObject {
  Q_OBJECT
 private slots:
  void identical_inputs_give_infinite_psnr_and_ssim_one() {
    Clip a = random_clip(40, 24, 10, 1);
    a.audio.assign(2 * 1000, 0.25f);
    const ClipComparison r = compare(a, a);
    QVERIFY(std::isinf(r.psnr_db) && r.psnr_db > 0);
    QVERIFY(std::isinf(r.psnr_db_ffmpeg));
    QCOMPARE(r.ssim, 1.0);
    QCOMPARE(r.ssim_ffmpeg, 1.0);
    QCOMPARE(r.temporal_rmse, 0.0);
    QVERIFY(r.audio.has_value());
    QCOMPARE(r.audio->rel_l2, 0.0);
    for (const FrameRow& f : r.frames) {
      QVERIFY(std::isinf(f.psnr_db));
      QCOMPARE(f.ssim, 1.0);
      QCOMPARE(f.ssim_ffmpeg, 1.0);
    }
    QVERIFY(!r.frames[0].temporal_rmse.has_value());
    QVERIFY(r.frames[1].temporal_rmse.has_value());
  }

  void one_pixel_difference_matches_hand_computed_psnr() {
    Clip a{16, 16, 1, std::vector<float>(3 * 16 * 16, 0.5f), {}, {}};
    Clip b = a;
    b.at(1, 0, 7, 9) = 0.75f;  // one green value off by 0.25
    a.quantise();
    b.quantise();
    const ClipComparison r = compare(b, a, 1);
    // MSE = 0.25² / (3·16·16); PSNR = 10·log10(768 / 0.0625) = 40.8955 dB.
    QVERIFY(std::abs(r.frames[0].mse - 0.0625 / 768.0) < 1e-12);
    QVERIFY(std::abs(r.psnr_db - 10.0 * std::log10(768.0 / 0.0625)) < 1e-9);
    QVERIFY2(r.ssim < 1.0 && r.ssim > 0.5, qPrintable(QString::number(r.ssim)));
    // The fp32 SSIM against the direct definition.
    const std::size_t plane = 16 * 16;
    const double want = (2.0 + reference_gaussian_ssim(b.planes.data() + plane,
                                                       a.planes.data() + plane, 16, 16)) / 3.0;
    // fp32 E[x²] - μ² cancels in flat areas: 1e-5 is the fp32 allowance.
    QVERIFY2(std::abs(r.ssim - want) < 1e-5, qPrintable(QString::number(r.ssim - want)));
    // 8-bit: 128 vs 191 in G. Y changes by round(129·63/256) = 32 (or 31), chroma too: the
    // yuv420p MSE is positive and PSNR finite.
    QVERIFY(std::isfinite(r.psnr_db_ffmpeg) && r.psnr_db_ffmpeg > 30);
  }

  void gaussian_ssim_matches_the_definition_on_random_planes() {
    for (auto [w, h, seed] : {std::tuple{11, 11, 3u}, std::tuple{37, 23, 4u}, std::tuple{64, 40, 5u}}) {
      const Clip a = random_clip(w, h, 1, seed, 0.3f);
      const Clip b = random_clip(w, h, 1, seed + 100, 0.3f);
      GaussianSsim ssim(w, h);
      for (int c = 0; c < 3; ++c) {
        const float* pa = a.planes.data() + static_cast<std::size_t>(c) * w * h;
        const float* pb = b.planes.data() + static_cast<std::size_t>(c) * w * h;
        const double got = ssim.plane(pa, pb);
        const double want = reference_gaussian_ssim(pa, pb, w, h);
        QVERIFY2(std::abs(got - want) < 2e-6,
                 qPrintable(QString("%1x%2 c%3: %4 vs %5").arg(w).arg(h).arg(c).arg(got).arg(want)));
      }
    }
  }

  void x264_ssim_and_psnr_match_the_definition() {
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> byte(0, 255), small(-12, 12);
    for (auto [w, h] : {std::pair{16, 16}, std::pair{50, 34}, std::pair{64, 48}}) {
      Yuv420Frame a, b;
      a.resize(w, h);
      b.resize(w, h);
      double weighted_mse = 0, weighted_ssim = 0, pixels = 0;
      for (int p = 0; p < 3; ++p) pixels += a.plane_width(p) * a.plane_height(p);
      for (int p = 0; p < 3; ++p) {
        for (std::size_t i = 0; i < a.planes[p].size(); ++i) {
          a.planes[p][i] = static_cast<std::uint8_t>(byte(rng));
          b.planes[p][i] = static_cast<std::uint8_t>(std::clamp(a.planes[p][i] + small(rng), 0, 255));
        }
        const int pw = a.plane_width(p), ph = a.plane_height(p);
        double sse = 0;
        for (std::size_t i = 0; i < a.planes[p].size(); ++i) {
          const double d = a.planes[p][i] - b.planes[p][i];
          sse += d * d;
        }
        weighted_mse += sse / (pw * ph) * (pw * ph / pixels);
        weighted_ssim += reference_x264_ssim(a.planes[p].data(), b.planes[p].data(), pw, ph) *
                         (pw * ph / pixels);
      }
      FfmpegScratch scratch;
      const FfmpegFrameStats s = ffmpeg_frame_stats(a, b, scratch);
      QVERIFY(std::abs(s.mse - weighted_mse) < 1e-9);
      QVERIFY2(std::abs(s.ssim_all - weighted_ssim) < 1e-6,
               qPrintable(QString("%1 vs %2").arg(s.ssim_all).arg(weighted_ssim)));
    }
  }

  void temporal_rmse_of_a_ramp_is_its_step() {
    Clip a = random_clip(24, 16, 6, 9, 0.0f);
    Clip b = a, c = a;
    for (int ch = 0; ch < 3; ++ch)
      for (int fr = 0; fr < a.f; ++fr)
        for (int y = 0; y < a.h; ++y)
          for (int x = 0; x < a.w; ++x) {
            b.at(ch, fr, y, x) += 0.125f;           // constant offset: no temporal error
            c.at(ch, fr, y, x) += 0.0078125f * fr;  // ramp: every difference off by 1/128
          }
    b.quantise();
    c.quantise();
    QVERIFY(compare(b, a).temporal_rmse < 1e-7);
    const ClipComparison r = compare(c, a);
    QVERIFY2(std::abs(r.temporal_rmse - 0.0078125) < 1e-6, qPrintable(QString::number(r.temporal_rmse)));
    QVERIFY(std::abs(*r.frames[3].temporal_rmse - 0.0078125) < 1e-6);
  }

  void results_do_not_depend_on_threads_or_precision() {
    const Clip a = random_clip(48, 32, 19, 11);
    const Clip b = random_clip(48, 32, 19, 12);
    const ClipComparison one = compare(a, b, 1), three = compare(a, b, 3);
    QCOMPARE(one.psnr_db, three.psnr_db);
    QCOMPARE(one.ssim, three.ssim);
    QCOMPARE(one.temporal_rmse, three.temporal_rmse);
    QCOMPARE(one.ssim_ffmpeg, three.ssim_ffmpeg);
    // fp16 planes: within fp16 rounding of the fp32 figures.
    auto to_half = [](const std::vector<float>& v) {
      std::vector<std::uint16_t> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        const _Float16 h = static_cast<_Float16>(v[i]);
        std::memcpy(&out[i], &h, 2);
      }
      return out;
    };
    const auto ha = to_half(a.planes), hb = to_half(b.planes);
    ClipView va = a.view(), vb = b.view();
    va.planes = ha.data();
    vb.planes = hb.data();
    va.plane_type = vb.plane_type = PlaneType::f16;
    const ClipComparison half = compare_clips(va, vb, {});
    QVERIFY(std::abs(half.psnr_db - one.psnr_db) < 0.05);
    QVERIFY(std::abs(half.ssim - one.ssim) < 1e-3);
    QCOMPARE(half.pixel_source, std::string("fp16 frames before quantisation"));
  }

  void mismatched_shapes_are_refused_with_the_field() {
    const Clip a = random_clip(32, 16, 4, 1), b = random_clip(32, 24, 4, 1), c = random_clip(32, 16, 5, 1);
    try {
      compare(a, b);
      QFAIL("different heights accepted");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("height differs") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(InputError, compare(a, c));
    Clip x = a, y = a;
    x.audio.assign(200, 0.1f);
    y.audio.assign(202, 0.1f);
    QVERIFY_THROWS_EXCEPTION(InputError, compare(x, y));
    // Frames smaller than the SSIM window.
    const Clip t = random_clip(10, 10, 2, 1);
    QVERIFY_THROWS_EXCEPTION(InputError, compare(t, t));
  }

  void audio_relative_l2_whole_and_windows() {
    // b = [3, 4 | 0, 0], a = b + [0, 0 | 1, 0]: whole ||d|| / ||b|| = 1 / 5; windows of 1
    // sample per channel: channel 0 and 1 at index 0: d = (0, 1), b = (3, 0) -> 1/3.
    const std::vector<float> b = {3, 4, 0, 0};
    const std::vector<float> a = {3, 4, 1, 0};
    const AudioComparison r = compare_audio(a.data(), b.data(), 2, 2, 1);
    QVERIFY(std::abs(r.rel_l2 - 0.2) < 1e-12);
    QCOMPARE(r.windows.size(), std::size_t(2));
    QVERIFY(std::abs(r.windows[0] - 1.0 / 3.0) < 1e-12);
    QCOMPARE(r.windows[1], 0.0);
    QCOMPARE(r.max_abs, 1.0);
    // Silent reference: 0 when both silent, inf otherwise.
    const std::vector<float> z = {0, 0}, o = {0, 1};
    QCOMPARE(compare_audio(z.data(), z.data(), 1, 2, 2).rel_l2, 0.0);
    QVERIFY(std::isinf(compare_audio(o.data(), z.data(), 1, 2, 2).rel_l2));
    QVERIFY_THROWS_EXCEPTION(InputError, compare_audio(o.data(), z.data(), 1, 2, 0));
  }

  void psnr_from_mse_conventions() {
    QVERIFY(std::isinf(psnr_from_mse(0, 255)));
    QVERIFY(std::abs(psnr_from_mse(1, 255) - 48.130803608679) < 1e-9);
    QVERIFY(std::abs(psnr_from_mse(0.01, 1) - 20.0) < 1e-12);
  }
};

QTEST_APPLESS_MAIN(MetricsTest)
#include "test_metrics.moc"
