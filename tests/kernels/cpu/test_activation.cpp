// kernels/cpu/activation against the provider's silu: fresh random inputs at several lengths
// (one element, odd, split over threads), saturating magnitudes, guard bytes, NaN/Inf failing,
// the same bytes on one thread and when computed piecewise; exp_f32 against the correctly
// rounded exp.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include <cmath>

#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/activation.h"

using namespace h3p;
using namespace h3p::kernels;
using cpu::Bf16;

namespace {

template <typename T>
void silu(const at::Tensor& x, T* y, int64_t n, int64_t offset = 0) {
  if constexpr (std::is_same_v<T, Bf16>) {
    cpu::silu_bf16(test::kernel_ptr<Bf16>(x) + offset, y, n);
  } else {
    cpu::silu_f32(test::kernel_ptr<float>(x) + offset, y, n);
  }
}

// Distance in units in the last place of fp32 between a and the exact value e.
double ulps(float a, double e) {
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(e)) - 23);
  return std::fabs(static_cast<double>(a) - e) / ulp;
}

}  // namespace

class ActivationKernel : public QObject {
  Q_OBJECT

  template <typename T>
  void check_dtype(at::ScalarType dtype) {
    auto provider = ops::make_provider_ops();
    test::Rng rng(test::fresh_seed("silu"));
    for (int64_t n : {1, 7, 1000, 4097, 100003}) {
      const std::string what = std::string(c10::toString(dtype)) + " n=" + std::to_string(n);
      const at::Tensor x = rng.normal({n}, dtype, 4.0);
      test::GuardedOutput out(dtype, {n});
      silu(x, out.data<T>(), n);
      QVERIFY2(out.guards_intact(), what.c_str());
      H3P_CHECK_CLOSE(out.tensor(), provider->silu(x), "silu " + what);
      // Blocks of 1000 are below the threading grain: serial calls.
      test::GuardedOutput pieces(dtype, {n});
      for (int64_t b = 0; b < n; b += 1000) silu(x, pieces.data<T>() + b, std::min<int64_t>(1000, n - b), b);
      QVERIFY2(test::bit_equal(pieces.tensor(), out.tensor()), ("split " + what).c_str());
      test::GuardedOutput serial(dtype, {n});
      {
        test::SingleThreadScope one_thread;
        silu(x, serial.data<T>(), n);
      }
      QVERIFY2(test::bit_equal(serial.tensor(), out.tensor()), ("1 thread " + what).c_str());
    }
    // Saturation: large negative inputs go to -0, large positive to x.
    const at::Tensor big = at::tensor({-1e30f, -200.0f, -90.0f, -88.0f, 0.0f, 30.0f, 88.0f, 1e30f}).to(dtype);
    test::GuardedOutput out(dtype, {big.numel()});
    silu(big, out.data<T>(), big.numel());
    H3P_CHECK_CLOSE(out.tensor(), provider->silu(big), std::string("silu saturation ") + c10::toString(dtype));
  }

 private slots:
  void bf16_matches_provider() { check_dtype<Bf16>(at::kBFloat16); }
  void f32_matches_provider() { check_dtype<float>(at::kFloat); }

  void hand_computed() {
    const float x[3] = {0.0f, 1.0f, -1.0f};
    float y[3];
    cpu::silu_f32(x, y, 3);
    QCOMPARE(y[0], 0.0f);
    QVERIFY(std::fabs(y[1] - 0.7310585786f) <= 1e-7f);
    QVERIFY(std::fabs(y[2] + 0.2689414214f) <= 1e-7f);
  }

  // exp_f32 within 2 ulp of the exact e^x over its whole normal range; overflow to +inf,
  // NaN stays NaN.
  void exp_is_accurate() {
    double worst = 0;
    for (double v = -87.0; v <= 88.7; v += 0.0123) {
      const float x = static_cast<float>(v);
      worst = std::max(worst, ulps(cpu::exp_f32(x), std::exp(static_cast<double>(x))));
    }
    qInfo("exp_f32: worst %.3f ulp", worst);
    QVERIFY2(worst <= 2.0, qPrintable(QString::number(worst)));
    QVERIFY(std::isinf(cpu::exp_f32(89.0f)));
    QCOMPARE(cpu::exp_f32(-200.0f), 0.0f);
    QVERIFY(std::isnan(cpu::exp_f32(NAN)));
    QCOMPARE(cpu::exp_f32(0.0f), 1.0f);
  }
};

QTEST_APPLESS_MAIN(ActivationKernel)
#include "test_activation.moc"
