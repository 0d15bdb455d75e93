// kernels/cpu/residual against the provider's gated_residual and add: fresh random inputs at
// several sizes (one element, odd lengths, sizes split over threads), guard bytes, NaN/Inf
// failing, the same bytes on one thread and when computed piecewise (one call per row); and the
// checker itself rejecting a NaN and an error just above the declared tolerance.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/residual.h"

using namespace h3p;
using namespace h3p::kernels;
using cpu::Bf16;

namespace {

const std::vector<std::vector<int64_t>> kShapes = {{1, 1}, {3, 7}, {5, 33}, {97, 257}, {300, 257}};

template <typename T>
void gated(const at::Tensor& x, const at::Tensor& g, const at::Tensor& y, T* out, int64_t n,
           int64_t offset = 0) {
  if constexpr (std::is_same_v<T, Bf16>) {
    cpu::gated_residual_bf16(test::kernel_ptr<Bf16>(x) + offset, test::kernel_ptr<Bf16>(g) + offset,
                             test::kernel_ptr<Bf16>(y) + offset, out, n);
  } else {
    cpu::gated_residual_f32(test::kernel_ptr<float>(x) + offset, test::kernel_ptr<float>(g) + offset,
                            test::kernel_ptr<float>(y) + offset, out, n);
  }
}

template <typename T>
void plain(const at::Tensor& x, const at::Tensor& y, T* out, int64_t n, int64_t offset = 0) {
  if constexpr (std::is_same_v<T, Bf16>) {
    cpu::add_bf16(test::kernel_ptr<Bf16>(x) + offset, test::kernel_ptr<Bf16>(y) + offset, out, n);
  } else {
    cpu::add_f32(test::kernel_ptr<float>(x) + offset, test::kernel_ptr<float>(y) + offset, out, n);
  }
}

}  // namespace

class ResidualKernel : public QObject {
  Q_OBJECT

  template <typename T>
  void check_dtype(at::ScalarType dtype) {
    auto provider = ops::make_provider_ops();
    test::Rng rng(test::fresh_seed("residual"));
    for (const auto& shape : kShapes) {
      const std::string what = std::string(c10::toString(dtype)) + " " + c10::str(at::IntArrayRef(shape));
      const at::Tensor x = rng.normal(shape, dtype, 2.0);
      const at::Tensor g = rng.normal(shape, dtype, 0.5);
      const at::Tensor y = rng.normal(shape, dtype);
      const int64_t n = x.numel(), cols = shape.back();

      test::GuardedOutput out(dtype, shape);
      gated(x, g, y, out.data<T>(), n);
      QVERIFY2(out.guards_intact(), ("gated_residual " + what).c_str());
      // Where x and gate·y cancel, the provider's rounding of gate·y dominates: scale by the terms.
      const at::Tensor terms = at::add(at::abs(x.to(at::kDouble)),
                                       at::abs(at::mul(g.to(at::kDouble), y.to(at::kDouble))));
      H3P_CHECK_WITHIN(out.tensor(), provider->gated_residual(x, g, y), test::tolerance_for(dtype),
                       terms, "gated_residual " + what);
      test::GuardedOutput rows(dtype, shape);
      for (int64_t r = 0; r < n / cols; ++r) gated(x, g, y, rows.data<T>() + r * cols, cols, r * cols);
      QVERIFY2(test::bit_equal(rows.tensor(), out.tensor()), ("gated_residual split " + what).c_str());
      test::GuardedOutput serial(dtype, shape);
      {
        test::SingleThreadScope one_thread;
        gated(x, g, y, serial.data<T>(), n);
      }
      QVERIFY2(test::bit_equal(serial.tensor(), out.tensor()), ("gated_residual 1 thread " + what).c_str());

      test::GuardedOutput sum(dtype, shape);
      plain(x, y, sum.data<T>(), n);
      QVERIFY2(sum.guards_intact(), ("add " + what).c_str());
      const at::Tensor addends = at::add(at::abs(x.to(at::kDouble)), at::abs(y.to(at::kDouble)));
      H3P_CHECK_WITHIN(sum.tensor(), provider->add(x, y), test::tolerance_for(dtype), addends,
                       "add " + what);
      test::GuardedOutput sum_rows(dtype, shape);
      for (int64_t r = 0; r < n / cols; ++r) plain(x, y, sum_rows.data<T>() + r * cols, cols, r * cols);
      QVERIFY2(test::bit_equal(sum_rows.tensor(), sum.tensor()), ("add split " + what).c_str());
      test::GuardedOutput sum_serial(dtype, shape);
      {
        test::SingleThreadScope one_thread;
        plain(x, y, sum_serial.data<T>(), n);
      }
      QVERIFY2(test::bit_equal(sum_serial.tensor(), sum.tensor()), ("add 1 thread " + what).c_str());
    }
  }

 private slots:
  void bf16_matches_provider() { check_dtype<Bf16>(at::kBFloat16); }
  void f32_matches_provider() { check_dtype<float>(at::kFloat); }

  // In fp32 x + gate·y is the provider's own arithmetic: the same bits.
  void f32_is_bitwise_provider() {
    test::Rng rng(test::fresh_seed("residual f32 bits"));
    const at::Tensor x = rng.normal({13, 29}, at::kFloat), g = rng.normal({13, 29}, at::kFloat),
                     y = rng.normal({13, 29}, at::kFloat);
    at::Tensor out = at::empty({13, 29}, at::kFloat);
    cpu::gated_residual_f32(x.data_ptr<float>(), g.data_ptr<float>(), y.data_ptr<float>(),
                            out.data_ptr<float>(), out.numel());
    QVERIFY(test::bit_equal(out, ops::make_provider_ops()->gated_residual(x, g, y)));
  }

  // Hand-computed: 1 + 0.5·3 = 2.5 exactly; the output may alias x.
  void hand_computed_in_place() {
    float x[3] = {1.0f, -2.0f, 0.0f};
    const float g[3] = {0.5f, 2.0f, -1.0f}, y[3] = {3.0f, 0.25f, 7.0f};
    cpu::gated_residual_f32(x, g, y, x, 3);
    QCOMPARE(x[0], 2.5f);
    QCOMPARE(x[1], -1.5f);
    QCOMPARE(x[2], -7.0f);
  }

  // The 1-thread scope really serialises parallel regions, and releases them afterwards.
  void single_thread_scope_serialises() {
    {
      test::SingleThreadScope one_thread;
      QCOMPARE(test::SingleThreadScope::region_threads(), 1);
    }
    if (omp_get_num_procs() > 1) QVERIFY(test::SingleThreadScope::region_threads() > 1);
  }

  // The checker fails on NaN, on Inf and on an error just above the declared tolerance.
  void checker_can_fail() {
    const at::Tensor want = at::ones({4}, at::kFloat);
    at::Tensor got = want.clone();
    QVERIFY(test::check_close(got, want, test::kF32Tolerance, "same").empty());
    got[2] = NAN;
    QVERIFY(!test::check_close(got, want, test::kF32Tolerance, "nan").empty());
    got[2] = INFINITY;
    QVERIFY(!test::check_close(got, want, test::kF32Tolerance, "inf").empty());
    got = want.clone();
    got[1] = 1.0f + 3e-6f;  // bound: 1e-6·(1 + 1)
    QVERIFY(!test::check_close(got, want, test::kF32Tolerance, "above").empty());
    const at::Tensor want_bf = want.to(at::kBFloat16);
    at::Tensor got_bf = want_bf.clone();
    got_bf[0] = 1.0f + 5.0f / 128.0f;  // five bf16 ulps at 1; bound: 4/256·(1 + 1)
    QVERIFY(!test::check_close(got_bf, want_bf, test::kBf16Tolerance, "bf16 above").empty());
  }
};

QTEST_APPLESS_MAIN(ResidualKernel)
#include "test_residual.moc"
