// The noise floor of a comparison: which impl specs count as provider variants, the variants'
// range, and the second verdict (a candidate within the provider's own spread is no worse than
// the worst variant on every metric; zero spread admits only bitwise agreement; missing audio
// and NaN are never within).
#include <QtTest>
#include <limits>

#include "core/metrics/compare/noise_floor.h"

namespace compare = h3p::compare;
namespace metrics = h3p::metrics;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

compare::VariantFigures variant(const char* spec, double psnr, double ssim, double temporal,
                                std::optional<double> audio) {
  compare::VariantFigures v;
  v.spec = spec;
  v.psnr_db = psnr;
  v.ssim = ssim;
  v.temporal_rmse = temporal;
  v.audio_rel_l2 = audio;
  return v;
}

metrics::ClipComparison clip(double psnr, double ssim, double temporal, std::optional<double> audio) {
  metrics::ClipComparison c;
  c.psnr_db = psnr;
  c.ssim = ssim;
  c.temporal_rmse = temporal;
  if (audio) {
    c.audio.emplace();
    c.audio->rel_l2 = *audio;
  }
  return c;
}

}  // namespace

class TestNoiseFloor : public QObject {
  Q_OBJECT

 private slots:
  void provider_variants_force_a_backend_and_run_only_the_provider() {
    QVERIFY(compare::is_provider_variant("provider:attention=math"));
    QVERIFY(compare::is_provider_variant("provider:gemm=cublaslt"));
    QVERIFY(compare::is_provider_variant("provider:attention=flash,gemm=provider"));
    QVERIFY(!compare::is_provider_variant("provider"));
    QVERIFY(!compare::is_provider_variant("provider:all=provider"));
    QVERIFY(!compare::is_provider_variant("provider:attention=candidate"));
    QVERIFY(!compare::is_provider_variant("candidate:attention=math"));
    QVERIFY(!compare::is_provider_variant("plugin:libk.so:rest=provider"));
    QVERIFY(!compare::is_provider_variant("provider:attention"));
  }

  void range_and_verdict() {
    const std::vector<compare::VariantFigures> variants = {
        variant("provider:attention=math", 48.0, 0.9990, 2e-3, 0.01),
        variant("provider:attention=flash", kInf, 1.0, 0.0, 0.0)};
    const auto within = compare::make_noise_floor(variants, clip(48.0, 0.9995, 1e-3, 0.01));
    QVERIFY(within);
    QCOMPARE(within->psnr_db.min, 48.0);
    QCOMPARE(within->psnr_db.max, kInf);
    QCOMPARE(within->temporal_rmse.max, 2e-3);
    QCOMPARE(within->audio_rel_l2->max, 0.01);
    QVERIFY(within->within_spread());

    const auto outside = compare::make_noise_floor(variants, clip(47.9, 0.9995, 3e-3, 0.02));
    QVERIFY(!outside->within_spread());
    QCOMPARE(outside->outside.size(), std::size_t(3));  // psnr, temporal, audio; ssim within
    QVERIFY(outside->outside[0].starts_with("psnr_db 47.9 < worst variant 48"));

    QVERIFY(!compare::make_noise_floor({}, clip(1, 1, 0, 0)));
  }

  void zero_spread_admits_only_bitwise_agreement() {
    const std::vector<compare::VariantFigures> same = {variant("provider:attention=math", kInf, 1.0, 0.0, 0.0)};
    QVERIFY(compare::make_noise_floor(same, clip(kInf, 1.0, 0.0, 0.0))->within_spread());
    QVERIFY(!compare::make_noise_floor(same, clip(90.0, 1.0, 0.0, 0.0))->within_spread());
  }

  void missing_audio_and_nan_are_never_within() {
    const std::vector<compare::VariantFigures> v = {variant("provider:attention=math", 40, 0.99, 1e-2, 0.1)};
    QVERIFY(!compare::make_noise_floor(v, clip(50, 1, 0, std::nullopt))->within_spread());
    QVERIFY(!compare::make_noise_floor(v, clip(std::nan(""), 1, 0, 0))->within_spread());
    // Variants without audio leave audio out of the verdict.
    const std::vector<compare::VariantFigures> silent = {variant("provider:attention=math", 40, 0.99, 1e-2, std::nullopt)};
    const auto nf = compare::make_noise_floor(silent, clip(50, 1, 0, std::nullopt));
    QVERIFY(!nf->audio_rel_l2);
    QVERIFY(nf->within_spread());
  }
};

QTEST_APPLESS_MAIN(TestNoiseFloor)
#include "test_noise_floor.moc"
