// kernels/cpu/norm against the provider's rms_norm and norm_modulate: fresh random inputs at
// several shapes (one row, one column, odd widths, the model's widths, rows split over threads),
// two eps values, guard bytes, NaN/Inf failing, the same bytes on one thread and when computed
// one row per call.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include <cmath>

#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/norm.h"

using namespace h3p;
using namespace h3p::kernels;
using cpu::Bf16;

namespace {

// norm_modulate in bf16: six half-ulps (2^-8 each) of the terms' magnitude.
constexpr test::Tolerance kBf16ModulateTolerance{6.0 / 256.0, 1e-2};

const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {1, 48}, {7, 33}, {16, 17}, {130, 256}, {513, 257}};

template <typename T>
void norm(const at::Tensor& x, const at::Tensor& w, T* y, int64_t rows, int64_t c, double eps,
          int64_t first = 0) {
  if constexpr (std::is_same_v<T, Bf16>) {
    cpu::rms_norm_bf16(test::kernel_ptr<Bf16>(x) + first * c, test::kernel_ptr<Bf16>(w), y, rows, c, eps);
  } else {
    cpu::rms_norm_f32(test::kernel_ptr<float>(x) + first * c, test::kernel_ptr<float>(w), y, rows, c, eps);
  }
}

template <typename T>
void modulate(const at::Tensor& x, const at::Tensor& w, const at::Tensor& scale,
              const at::Tensor& shift, T* y, int64_t rows, int64_t c, double eps, int64_t first = 0) {
  const int64_t o = first * c;
  if constexpr (std::is_same_v<T, Bf16>) {
    cpu::norm_modulate_bf16(test::kernel_ptr<Bf16>(x) + o, test::kernel_ptr<Bf16>(w),
                            test::kernel_ptr<Bf16>(scale) + o, test::kernel_ptr<Bf16>(shift) + o, y,
                            rows, c, eps);
  } else {
    cpu::norm_modulate_f32(test::kernel_ptr<float>(x) + o, test::kernel_ptr<float>(w),
                           test::kernel_ptr<float>(scale) + o, test::kernel_ptr<float>(shift) + o,
                           y, rows, c, eps);
  }
}

}  // namespace

class NormKernel : public QObject {
  Q_OBJECT

  template <typename T>
  void check_dtype(at::ScalarType dtype) {
    auto provider = ops::make_provider_ops();
    test::Rng rng(test::fresh_seed("norm"));
    for (auto [rows, c] : kShapes) {
      for (double eps : {1e-5, 1e-6}) {
        const std::string what = std::string(c10::toString(dtype)) + " " + std::to_string(rows) +
                                 "x" + std::to_string(c) + " eps=" + std::to_string(eps);
        const at::Tensor x = rng.normal({rows, c}, dtype, 3.0);
        const at::Tensor w = at::add(rng.normal({c}, at::kFloat, 0.1), 1.0).to(dtype);
        const at::Tensor scale = rng.normal({rows, c}, dtype, 0.5);
        const at::Tensor shift = rng.normal({rows, c}, dtype, 0.5);

        test::GuardedOutput out(dtype, {rows, c});
        norm(x, w, out.data<T>(), rows, c, eps);
        QVERIFY2(out.guards_intact(), ("rms_norm " + what).c_str());
        H3P_CHECK_CLOSE(out.tensor(), provider->rms_norm(x, w, eps), "rms_norm " + what);
        test::GuardedOutput one(dtype, {rows, c});
        for (int64_t r = 0; r < rows; ++r) norm(x, w, one.data<T>() + r * c, 1, c, eps, r);
        QVERIFY2(test::bit_equal(one.tensor(), out.tensor()), ("rms_norm by row " + what).c_str());
        test::GuardedOutput serial(dtype, {rows, c});
        {
          test::SingleThreadScope one_thread;
          norm(x, w, serial.data<T>(), rows, c, eps);
        }
        QVERIFY2(test::bit_equal(serial.tensor(), out.tensor()), ("rms_norm 1 thread " + what).c_str());

        test::GuardedOutput mod(dtype, {rows, c});
        modulate(x, w, scale, shift, mod.data<T>(), rows, c, eps);
        QVERIFY2(mod.guards_intact(), ("norm_modulate " + what).c_str());
        // The provider rounds five times in bf16 (normalise, weight, 1 + scale, product, + shift)
        // and the product and shift may cancel: bound by the terms, six half-ulps in bf16.
        const at::Tensor normed = provider->rms_norm(x, w, eps).to(at::kDouble);
        const at::Tensor terms =
            at::add(at::abs(at::mul(normed, at::add(scale.to(at::kDouble), 1.0))),
                    at::abs(shift.to(at::kDouble)));
        const test::Tolerance tol =
            dtype == at::kBFloat16 ? kBf16ModulateTolerance : test::kF32Tolerance;
        H3P_CHECK_WITHIN(mod.tensor(), provider->norm_modulate(x, w, eps, scale, shift), tol, terms,
                         "norm_modulate " + what);
        test::GuardedOutput mod_one(dtype, {rows, c});
        for (int64_t r = 0; r < rows; ++r) {
          modulate(x, w, scale, shift, mod_one.data<T>() + r * c, 1, c, eps, r);
        }
        QVERIFY2(test::bit_equal(mod_one.tensor(), mod.tensor()), ("norm_modulate by row " + what).c_str());
        test::GuardedOutput mod_serial(dtype, {rows, c});
        {
          test::SingleThreadScope one_thread;
          modulate(x, w, scale, shift, mod_serial.data<T>(), rows, c, eps);
        }
        QVERIFY2(test::bit_equal(mod_serial.tensor(), mod.tensor()), ("norm_modulate 1 thread " + what).c_str());
      }
    }
  }

 private slots:
  void bf16_matches_provider() { check_dtype<Bf16>(at::kBFloat16); }
  void f32_matches_provider() { check_dtype<float>(at::kFloat); }

  // x = (3, 4): rms = sqrt(12.5); with eps 0, w = (1, 2), scale 1, shift 0.5:
  // y = (3, 8)/sqrt(12.5)·2 + 0.5.
  void hand_computed() {
    const float x[2] = {3.0f, 4.0f}, w[2] = {1.0f, 2.0f}, scale[2] = {1.0f, 1.0f},
                shift[2] = {0.5f, 0.5f};
    float y[2];
    cpu::norm_modulate_f32(x, w, scale, shift, y, 1, 2, 0.0);
    const double r = std::sqrt(12.5);
    QVERIFY(std::fabs(y[0] - (3.0 / r * 2 + 0.5)) < 1e-6);
    QVERIFY(std::fabs(y[1] - (8.0 / r * 2 + 0.5)) < 1e-6);
    // A zero row with eps stays zero (no NaN).
    const float zeros[2] = {0.0f, 0.0f};
    cpu::rms_norm_f32(zeros, w, y, 1, 2, 1e-6);
    QCOMPARE(y[0], 0.0f);
    QCOMPARE(y[1], 0.0f);
  }
};

QTEST_APPLESS_MAIN(NormKernel)
#include "test_norm.moc"
