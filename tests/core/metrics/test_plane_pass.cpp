// The fused plane pass (core/metrics/plane_pass.h) against the step-by-step kernels it
// replaces (kernels::error_sse, GaussianSsim::plane): bit-identical on every path this CPU
// runs (scalar, AVX2, AVX-512), for fp16, fp32 and 8-bit sources, at awkward sizes (widths
// not a multiple of 8 or 16, planes whose size is not a multiple of 8, the 11x11 minimum);
// several channels in one sweep giving each channel's own figures; every 8-bit value read as
// the table's value / 255;
// and compare_clips giving the same figures for any worker count, telling done_with of each
// frame once after its last reader.
#include <QtTest>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

#include "core/common/error.h"
#include "core/metrics/clip_compare.h"
#include "core/metrics/pixel_kernels.h"
#include "core/metrics/plane_pass.h"
#include "core/metrics/ssim_gaussian.h"

using namespace h3p;
using namespace h3p::metrics;

namespace {

// One side of one channel in the three storage forms, all holding the same values.
struct Side {
  int w = 0, h = 0;
  std::vector<float> f32;
  std::vector<std::uint16_t> f16;
  std::vector<std::uint8_t> rgb;  // interleaved; the channel under test is `channel`
  int channel = 0;

  PassPlane plane(PassSource source) const {
    PassPlane p;
    p.source = source;
    p.channel = channel;
    p.data = source == PassSource::f32   ? static_cast<const void*>(f32.data())
             : source == PassSource::f16 ? static_cast<const void*>(f16.data())
                                         : static_cast<const void*>(rgb.data());
    return p;
  }
  // The fp32 values the pass reads for `source`.
  std::vector<float> values(PassSource source) const {
    std::vector<float> out(static_cast<std::size_t>(w) * h);
    if (source == PassSource::f32) return f32;
    if (source == PassSource::f16) {
      for (std::size_t i = 0; i < out.size(); ++i) {
        _Float16 v;
        std::memcpy(&v, &f16[i], 2);
        out[i] = static_cast<float>(v);
      }
    } else {
      kernels::rgb_channel_to_float(rgb.data(), channel, out.data(), out.size());
    }
    return out;
  }
};

Side random_side(int w, int h, std::uint32_t seed, int channel) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  Side s;
  s.w = w;
  s.h = h;
  s.channel = channel;
  s.f32.resize(static_cast<std::size_t>(w) * h);
  s.f16.resize(s.f32.size());
  s.rgb.resize(s.f32.size() * 3);
  for (std::size_t i = 0; i < s.f32.size(); ++i) {
    s.f32[i] = 0.5f + 0.4f * std::sin(0.07f * (i % w) + 0.05f * (i / w)) + 0.1f * (u(rng) - 0.5f);
    const _Float16 half = static_cast<_Float16>(s.f32[i]);
    std::memcpy(&s.f16[i], &half, 2);
    for (int c = 0; c < 3; ++c) s.rgb[3 * i + c] = static_cast<std::uint8_t>(rng() & 0xff);
  }
  return s;
}

// The figures the way compare computed them before the fused pass.
PassStats reference(const std::vector<float>& a, const std::vector<float>& b,
                    const std::vector<float>* pa, const std::vector<float>* pb, int w, int h) {
  const std::size_t n = a.size();
  std::vector<float> err(n), prev_err(n);
  PassStats s;
  if (pa != nullptr)
    kernels::error_sse(pa->data(), pb->data(), prev_err.data(), nullptr, nullptr, n);
  s.sse = kernels::error_sse(a.data(), b.data(), err.data(),
                             pa != nullptr ? prev_err.data() : nullptr, &s.temporal_sse, n);
  GaussianSsim ssim(w, h);
  s.ssim = ssim.plane(a.data(), b.data());
  return s;
}

std::vector<PassIsa> isas_here() {
  std::vector<PassIsa> out = {PassIsa::scalar};
  if (static_cast<int>(best_pass_isa()) >= static_cast<int>(PassIsa::avx2))
    out.push_back(PassIsa::avx2);
  if (best_pass_isa() == PassIsa::avx512) out.push_back(PassIsa::avx512);
  return out;
}

QString describe(int w, int h, PassSource sa, PassSource sb, PassIsa isa, const char* what) {
  return QString("%1x%2 sources %3/%4 %5: %6")
      .arg(w)
      .arg(h)
      .arg(int(sa))
      .arg(int(sb))
      .arg(pass_isa_name(isa))
      .arg(what);
}


// 9 frames of 61x27 of random content: fp16 planes and 8-bit frames of two sides.
struct RandomClips {
  static constexpr int w = 61, h = 27, frames = 9;
  static constexpr std::size_t plane = static_cast<std::size_t>(w) * h;
  std::vector<std::uint16_t> pa, pb;
  std::vector<std::uint8_t> ra, rb;
  RandomClips() : pa(3 * frames * plane), pb(pa.size()), ra(frames * plane * 3), rb(ra.size()) {
    std::mt19937 rng(17);
    for (std::size_t i = 0; i < pa.size(); ++i) {
      const _Float16 x = static_cast<_Float16>((rng() % 1000) / 999.0f);
      const _Float16 y = static_cast<_Float16>((rng() % 1000) / 999.0f);
      std::memcpy(&pa[i], &x, 2);
      std::memcpy(&pb[i], &y, 2);
    }
    for (std::size_t i = 0; i < ra.size(); ++i) {
      ra[i] = static_cast<std::uint8_t>(rng());
      rb[i] = static_cast<std::uint8_t>(rng());
    }
  }
  // Views of both sides, with or without the planes.
  std::pair<ClipView, ClipView> views(bool planes) {
    ClipView a, b;
    a.width = b.width = w;
    a.height = b.height = h;
    a.frames = b.frames = frames;
    a.fps = b.fps = 24;
    a.rgb = ra.data();
    b.rgb = rb.data();
    if (planes) {
      a.planes = pa.data();
      b.planes = pb.data();
      a.plane_type = b.plane_type = PlaneType::f16;
    }
    return {a, b};
  }
};

bool same_figures(const ClipComparison& x, const ClipComparison& y) {
  if (!(x.psnr_db == y.psnr_db && x.ssim == y.ssim && x.temporal_rmse == y.temporal_rmse &&
        x.ssim_ffmpeg == y.ssim_ffmpeg && x.psnr_db_ffmpeg == y.psnr_db_ffmpeg)) {
    return false;
  }
  for (std::size_t f = 0; f < x.frames.size(); ++f) {
    if (!(x.frames[f].mse == y.frames[f].mse && x.frames[f].ssim == y.frames[f].ssim &&
          x.frames[f].mse_ffmpeg == y.frames[f].mse_ffmpeg &&
          x.frames[f].temporal_rmse == y.frames[f].temporal_rmse)) {
      return false;
    }
  }
  return true;
}

}  // namespace

class PlanePassTest : public QObject {
  Q_OBJECT
 private slots:
  void every_path_equals_the_stepwise_kernels_bit_for_bit() {
    const std::pair<PassSource, PassSource> sources[] = {{PassSource::f32, PassSource::f32},
                                                         {PassSource::f16, PassSource::f16},
                                                         {PassSource::f16, PassSource::f32},
                                                         {PassSource::rgb8, PassSource::rgb8}};
    int checked = 0;
    for (auto [w, h] : {std::pair{11, 11}, std::pair{13, 17}, std::pair{37, 23}, std::pair{64, 40},
                        std::pair{200, 45}, std::pair{267, 31}, std::pair{280, 19}}) {
      // The 8-bit sides read channel w mod 3: every channel of the interleaved rows, with and
      // without the 16-pixel vector conversion and its tail.
      const int c = w % 3;
      const Side a = random_side(w, h, 1000 + w, c), b = random_side(w, h, 2000 + h, c);
      const Side pa = random_side(w, h, 3000 + w, c), pb = random_side(w, h, 4000 + h, c);
      for (auto [sa, sb] : sources) {
        const auto va = a.values(sa), vb = b.values(sb), vpa = pa.values(sa), vpb = pb.values(sb);
        const PassStats want = reference(va, vb, nullptr, nullptr, w, h);
        const PassStats want_t = reference(va, vb, &vpa, &vpb, w, h);
        for (PassIsa isa : isas_here()) {
          PlanePass pass(w, h, isa);
          QCOMPARE(pass.isa(), isa);
          const PassPlane qa = pa.plane(sa), qb = pb.plane(sb);
          const PassStats got = pass.run(a.plane(sa), b.plane(sb));
          const PassStats got_t = pass.run(a.plane(sa), b.plane(sb), &qa, &qb);
          QVERIFY2(got.sse == want.sse, qPrintable(describe(w, h, sa, sb, isa, "sse")));
          QVERIFY2(got.ssim == want.ssim, qPrintable(describe(w, h, sa, sb, isa, "ssim")));
          QVERIFY2(got.temporal_sse == 0.0, qPrintable(describe(w, h, sa, sb, isa, "no temporal")));
          QVERIFY2(got_t.sse == want_t.sse, qPrintable(describe(w, h, sa, sb, isa, "sse")));
          QVERIFY2(got_t.temporal_sse == want_t.temporal_sse,
                   qPrintable(describe(w, h, sa, sb, isa, "temporal sse")));
          QVERIFY2(got_t.ssim == want_t.ssim, qPrintable(describe(w, h, sa, sb, isa, "ssim")));
          ++checked;
        }
      }
    }
    QVERIFY(checked >= 7 * 4);
  }

  void channels_in_one_sweep_equal_a_pass_each() {
    for (auto [w, h] : {std::pair{11, 11}, std::pair{37, 23}, std::pair{267, 31}}) {
      Side a[3], b[3], pa[3], pb[3];
      for (int c = 0; c < 3; ++c) {
        a[c] = random_side(w, h, 10 + c, c);
        b[c] = random_side(w, h, 20 + c, c);
        pa[c] = random_side(w, h, 30 + c, c);
        pb[c] = random_side(w, h, 40 + c, c);
      }
      // Channel c of a source: its own plane, or channel c of side 0's interleaved rows.
      auto plane = [](const Side* sides, int c, PassSource source) {
        if (source != PassSource::rgb8) return sides[c].plane(source);
        PassPlane p = sides[0].plane(source);
        p.channel = c;
        return p;
      };
      for (PassSource source : {PassSource::f32, PassSource::f16, PassSource::rgb8}) {
        for (PassIsa isa : isas_here()) {
          for (int n : {2, 3}) {
            PassPlane xa[3], xb[3], xpa[3], xpb[3];
            for (int c = 0; c < n; ++c) {
              xa[c] = plane(a, c, source);
              xb[c] = plane(b, c, source);
              xpa[c] = plane(pa, c, source);
              xpb[c] = plane(pb, c, source);
            }
            PlanePass together(w, h, isa);
            PassStats got[3], got_t[3];
            together.run_channels(n, xa, xb, nullptr, nullptr, got);
            together.run_channels(n, xa, xb, xpa, xpb, got_t);
            for (int c = 0; c < n; ++c) {
              PlanePass alone(w, h, isa);
              const PassStats want = alone.run(xa[c], xb[c]);
              const PassStats want_t = alone.run(xa[c], xb[c], &xpa[c], &xpb[c]);
              const QString where = describe(w, h, source, source, isa, "channel") +
                                    QString(" %1 of %2").arg(c).arg(n);
              QVERIFY2(got[c].sse == want.sse && got[c].ssim == want.ssim &&
                           got[c].temporal_sse == 0.0,
                       qPrintable(where));
              QVERIFY2(got_t[c].sse == want_t.sse && got_t[c].ssim == want_t.ssim &&
                           got_t[c].temporal_sse == want_t.temporal_sse,
                       qPrintable(where + " (temporal)"));
            }
          }
        }
      }
    }
  }

  void channel_counts_outside_one_to_three_are_refused() {
    const Side a = random_side(20, 20, 1, 0);
    const PassPlane p[4] = {a.plane(PassSource::f32), a.plane(PassSource::f32),
                            a.plane(PassSource::f32), a.plane(PassSource::f32)};
    PassStats out[4];
    PlanePass pass(20, 20);
    QVERIFY_THROWS_EXCEPTION(InputError, pass.run_channels(0, p, p, nullptr, nullptr, out));
    QVERIFY_THROWS_EXCEPTION(InputError, pass.run_channels(4, p, p, nullptr, nullptr, out));
  }

  void every_byte_value_reads_as_the_value_over_255() {
    // Channel c of pixel i holds (3i + c) mod 256: each channel meets all 256 values, in the
    // 16-pixel vector conversion and in the tail, against a black side. Any value converted to
    // other bits than the table's i / 255.0f changes the squared-error sum.
    constexpr int w = 269, h = 12;
    Side a, zero;
    a.w = zero.w = w;
    a.h = zero.h = h;
    a.rgb.resize(static_cast<std::size_t>(w) * h * 3);
    zero.rgb.assign(a.rgb.size(), 0);
    for (std::size_t i = 0; i < a.rgb.size(); ++i) a.rgb[i] = static_cast<std::uint8_t>(i);
    for (int c = 0; c < 3; ++c) {
      a.channel = zero.channel = c;
      const PassStats want = reference(a.values(PassSource::rgb8), zero.values(PassSource::rgb8),
                                       nullptr, nullptr, w, h);
      for (PassIsa isa : isas_here()) {
        PlanePass pass(w, h, isa);
        const PassStats got = pass.run(a.plane(PassSource::rgb8), zero.plane(PassSource::rgb8));
        QVERIFY2(got.sse == want.sse && got.ssim == want.ssim,
                 qPrintable(QString("channel %1, %2").arg(c).arg(pass_isa_name(isa))));
      }
    }
  }

  void identical_planes_give_ssim_one_and_no_error() {
    const Side a = random_side(45, 29, 5, 0);
    for (PassIsa isa : isas_here()) {
      PlanePass pass(45, 29, isa);
      const PassStats s = pass.run(a.plane(PassSource::f16), a.plane(PassSource::f16));
      QCOMPARE(s.ssim, 1.0);
      QCOMPARE(s.sse, 0.0);
    }
  }

  void planes_smaller_than_the_window_are_refused() {
    QVERIFY_THROWS_EXCEPTION(InputError, PlanePass(10, 40));
    QVERIFY_THROWS_EXCEPTION(InputError, PlanePass(40, 10));
  }

  void released_frames_are_reported_once_after_their_last_reader() {
    // done_with overwrites what it is given: a range reported while a run still had to read
    // it changes the figures.
    for (bool planes : {true, false}) {
      for (int threads : {1, 2, 3}) {
        RandomClips clips;
        auto [a, b] = clips.views(planes);
        ClipParams p;
        p.threads = threads;
        const ClipComparison reference = compare_clips(a, b, p);
        std::mutex mutex;
        std::map<const void*, std::pair<std::size_t, int>> reported;
        auto poison = [&](const void* data, std::size_t bytes) {
          std::lock_guard lock(mutex);
          std::memset(const_cast<void*>(data), 0xff, bytes);
          auto& [size, count] = reported[data];
          size = bytes;
          ++count;
        };
        a.done_with = poison;
        b.done_with = poison;
        const ClipComparison released = compare_clips(a, b, p);
        const QString where = QString("planes %1, %2 threads").arg(planes).arg(threads);
        QVERIFY2(same_figures(released, reference), qPrintable(where));
        // Every frame's 8-bit pixels, and with planes its three planes, of both sides, once.
        const std::size_t per_frame = planes ? 4 : 1;
        QCOMPARE(reported.size(), 2 * per_frame * RandomClips::frames);
        for (int f = 0; f < RandomClips::frames; ++f) {
          for (const std::uint8_t* rgb : {clips.ra.data(), clips.rb.data()}) {
            const auto it = reported.find(rgb + f * RandomClips::plane * 3);
            QVERIFY2(it != reported.end() && it->second.second == 1 &&
                         it->second.first == RandomClips::plane * 3,
                     qPrintable(where + QString(", frame %1").arg(f)));
          }
        }
      }
    }
  }

  void clip_figures_do_not_depend_on_the_worker_count() {
    RandomClips clips;
    const int frames = RandomClips::frames;
    for (bool planes : {true, false}) {
      auto [a, b] = clips.views(planes);
      ClipParams p;
      p.threads = 1;
      const ClipComparison one = compare_clips(a, b, p);
      for (int threads : {2, 3, 7}) {
        p.threads = threads;
        const ClipComparison many = compare_clips(a, b, p);
        QVERIFY2(same_figures(many, one) && static_cast<int>(many.frames.size()) == frames,
                 qPrintable(QString("%1 threads").arg(threads)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(PlanePassTest)
#include "test_plane_pass.moc"
