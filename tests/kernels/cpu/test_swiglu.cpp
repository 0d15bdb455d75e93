// kernels/cpu/swiglu against the provider's swiglu: fresh random inputs at several shapes (one
// row, f = 1, odd widths, the model's widths, rows split over threads), guard bytes, NaN/Inf
// failing, the same bytes on one thread and when computed one row per call.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/swiglu.h"

using namespace h3p;
using namespace h3p::kernels;
using cpu::Bf16;

namespace {

template <typename T>
void swiglu(const at::Tensor& h, T* y, int64_t rows, int64_t f, int64_t first_row = 0) {
  if constexpr (std::is_same_v<T, Bf16>) {
    cpu::swiglu_bf16(test::kernel_ptr<Bf16>(h) + first_row * 2 * f, y, rows, f);
  } else {
    cpu::swiglu_f32(test::kernel_ptr<float>(h) + first_row * 2 * f, y, rows, f);
  }
}

}  // namespace

class SwigluKernel : public QObject {
  Q_OBJECT

  template <typename T>
  void check_dtype(at::ScalarType dtype) {
    auto provider = ops::make_provider_ops();
    test::Rng rng(test::fresh_seed("swiglu"));
    const std::vector<std::pair<int64_t, int64_t>> shapes = {
        {1, 1}, {1, 17}, {3, 7}, {5, 128}, {64, 704}, {257, 131}};
    for (auto [rows, f] : shapes) {
      const std::string what = std::string(c10::toString(dtype)) + " rows=" + std::to_string(rows) +
                               " f=" + std::to_string(f);
      const at::Tensor h = rng.normal({rows, 2 * f}, dtype, 3.0);
      test::GuardedOutput out(dtype, {rows, f});
      swiglu(h, out.data<T>(), rows, f);
      QVERIFY2(out.guards_intact(), what.c_str());
      H3P_CHECK_CLOSE(out.tensor(), provider->swiglu(h), "swiglu " + what);
      test::GuardedOutput one(dtype, {rows, f});
      for (int64_t r = 0; r < rows; ++r) swiglu(h, one.data<T>() + r * f, 1, f, r);
      QVERIFY2(test::bit_equal(one.tensor(), out.tensor()), ("row by row " + what).c_str());
      test::GuardedOutput serial(dtype, {rows, f});
      {
        test::SingleThreadScope one_thread;
        swiglu(h, serial.data<T>(), rows, f);
      }
      QVERIFY2(test::bit_equal(serial.tensor(), out.tensor()), ("1 thread " + what).c_str());
    }
  }

 private slots:
  void bf16_matches_provider() { check_dtype<Bf16>(at::kBFloat16); }
  void f32_matches_provider() { check_dtype<float>(at::kFloat); }

  // value·silu(gate): 2·silu(0) = 0, 3·silu(40) = 120, 1·silu(-200) = -0.
  void hand_computed() {
    const float h[6] = {2.0f, 3.0f, 1.0f, 0.0f, 40.0f, -200.0f};
    float y[3];
    cpu::swiglu_f32(h, y, 1, 3);
    QCOMPARE(y[0], 0.0f);
    QCOMPARE(y[1], 120.0f);
    QCOMPARE(y[2], 0.0f);
  }
};

QTEST_APPLESS_MAIN(SwigluKernel)
#include "test_swiglu.moc"
