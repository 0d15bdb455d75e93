// kernels/cpu/embed against the provider's timestep_sinusoid: fresh random timesteps and the
// edge values of the model's [0, 1] range, even and odd widths down to 1 and 2, guard bytes,
// NaN/Inf failing, fp32 tolerance; timesteps on a 1000-step scale within the error an ulp of the
// transcendental functions can cause.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/embed.h"

using namespace h3p;
using namespace h3p::kernels;

class EmbedKernel : public QObject {
  Q_OBJECT

  // Largest |candidate - provider| over (t, dim) cases, after guard and finiteness checks.
  static double max_error(const at::Tensor& t, int64_t dim, const std::string& what, bool* ok) {
    test::GuardedOutput out(at::kFloat, {t.numel(), dim});
    cpu::timestep_sinusoid_f32(t.data_ptr<float>(), out.data<float>(), t.numel(), dim);
    const at::Tensor want = ops::make_provider_ops()->timestep_sinusoid(t, dim);
    *ok = out.guards_intact() && out.tensor().sizes() == want.sizes() &&
          at::isfinite(out.tensor()).all().item<bool>();
    if (!*ok) qWarning("%s: guard, shape or finiteness check failed", what.c_str());
    return dim == 0 ? 0.0 : at::max(at::abs(at::sub(out.tensor(), want))).item<double>();
  }

 private slots:
  // The model's range, t in [0, 1]: within 1e-6 (values are bounded by 1) and the fp32
  // tolerance of the other kernels.
  void matches_provider_on_unit_range() {
    test::Rng rng(test::fresh_seed("timestep_sinusoid"));
    const at::Tensor fixed = at::tensor({0.0f, 1.0f, 0.5f, 0.999f, 1e-3f});
    const at::Tensor random = rng.uniform({7});
    for (const at::Tensor& t : {fixed, random, fixed.narrow(0, 1, 1)}) {
      for (int64_t dim : {1, 2, 3, 16, 17, 64, 256, 255}) {
        const std::string what = "n=" + std::to_string(t.numel()) + " dim=" + std::to_string(dim);
        bool ok = false;
        const double err = max_error(t, dim, what, &ok);
        QVERIFY2(ok, what.c_str());
        QVERIFY2(err <= 1e-6, (what + ": max abs error " + std::to_string(err)).c_str());
        test::GuardedOutput out(at::kFloat, {t.numel(), dim});
        cpu::timestep_sinusoid_f32(t.data_ptr<float>(), out.data<float>(), t.numel(), dim);
        H3P_CHECK_CLOSE(out.tensor(), ops::make_provider_ops()->timestep_sinusoid(t, dim),
                        "timestep_sinusoid " + what);
      }
    }
  }

  // Timesteps on a 1000-step scale: exp, sin and cos may each differ by an ulp between C
  // library and the provider's vector math, and a frequency ulp moves an angle near t by about
  // t·2^-23. Bound: 4·t·2^-24 + 1e-7.
  void matches_provider_on_large_timesteps() {
    for (float tv : {10.0f, 999.0f, 1000.0f}) {
      const at::Tensor t = at::tensor({tv});
      for (int64_t dim : {16, 17, 256}) {
        const std::string what = "t=" + std::to_string(tv) + " dim=" + std::to_string(dim);
        bool ok = false;
        const double err = max_error(t, dim, what, &ok);
        const double bound = 4.0 * tv * std::ldexp(1.0, -24) + 1e-7;
        QVERIFY2(ok, what.c_str());
        QVERIFY2(err <= bound, (what + ": max abs error " + std::to_string(err)).c_str());
      }
    }
  }

  // t = 0: cos half is 1, sin half is 0, the odd pad column 0.
  void hand_computed() {
    const float t = 0.0f;
    float out[5];
    cpu::timestep_sinusoid_f32(&t, out, 1, 5);
    const float want[5] = {1, 1, 0, 0, 0};
    for (int i = 0; i < 5; ++i) QCOMPARE(out[i], want[i]);
  }
};

QTEST_APPLESS_MAIN(EmbedKernel)
#include "test_embed.moc"
