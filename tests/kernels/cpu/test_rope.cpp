// kernels/cpu/rope against the provider's rope: fresh random inputs and angle tables at several
// shapes (one row and head, rotary width 2, partial widths as the model uses them, full width,
// odd head_dim, rows split over threads), guard bytes, NaN/Inf failing, the same bytes on one
// thread and when computed one row per call; in fp32 the provider's arithmetic exactly.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/rope.h"

using namespace h3p;
using namespace h3p::kernels;
using cpu::Bf16;

namespace {

template <typename T>
void rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, T* y, int64_t s,
          int64_t h, int64_t d, int64_t r, int64_t first = 0) {
  const float* c = cos.data_ptr<float>() + first * r;
  const float* sn = sin.data_ptr<float>() + first * r;
  if constexpr (std::is_same_v<T, Bf16>) {
    cpu::rope_bf16(test::kernel_ptr<Bf16>(x) + first * h * d, c, sn, y, s, h, d, r);
  } else {
    cpu::rope_f32(test::kernel_ptr<float>(x) + first * h * d, c, sn, y, s, h, d, r);
  }
}

}  // namespace

class RopeKernel : public QObject {
  Q_OBJECT

  template <typename T>
  void check_dtype(at::ScalarType dtype) {
    auto provider = ops::make_provider_ops();
    test::Rng rng(test::fresh_seed("rope"));
    // (s, h, d, r)
    const std::vector<std::array<int64_t, 4>> shapes = {
        {1, 1, 2, 2}, {5, 2, 32, 24}, {7, 3, 17, 10}, {300, 4, 64, 48}, {64, 2, 64, 64}, {3, 1, 9, 2}};
    for (const auto& [s, h, d, r] : shapes) {
      const std::string what = std::string(c10::toString(dtype)) + " (" + std::to_string(s) + ", " +
                               std::to_string(h) + ", " + std::to_string(d) + ") r=" + std::to_string(r);
      const at::Tensor x = rng.normal({s, h, d}, dtype, 2.0);
      const at::Tensor angles = rng.normal({s, r}, at::kFloat, 30.0);
      const at::Tensor cos = at::cos(angles), sin = at::sin(angles);
      test::GuardedOutput out(dtype, {s, h, d});
      rope(x, cos, sin, out.data<T>(), s, h, d, r);
      QVERIFY2(out.guards_intact(), what.c_str());
      const at::Tensor want = provider->rope(x, cos, sin);
      H3P_CHECK_CLOSE(out.tensor(), want, "rope " + what);
      if (dtype == at::kFloat) QVERIFY2(test::bit_equal(out.tensor(), want), ("f32 bits " + what).c_str());
      // The channels past r pass through untouched.
      QVERIFY(test::bit_equal(out.tensor().narrow(2, r, d - r), x.narrow(2, r, d - r)));
      test::GuardedOutput one(dtype, {s, h, d});
      for (int64_t i = 0; i < s; ++i) rope(x, cos, sin, one.data<T>() + i * h * d, 1, h, d, r, i);
      QVERIFY2(test::bit_equal(one.tensor(), out.tensor()), ("row by row " + what).c_str());
      test::GuardedOutput serial(dtype, {s, h, d});
      {
        test::SingleThreadScope one_thread;
        rope(x, cos, sin, serial.data<T>(), s, h, d, r);
      }
      QVERIFY2(test::bit_equal(serial.tensor(), out.tensor()), ("1 thread " + what).c_str());
    }
  }

 private slots:
  void bf16_matches_provider() { check_dtype<Bf16>(at::kBFloat16); }
  void f32_matches_provider() { check_dtype<float>(at::kFloat); }

  // A quarter turn maps (a, b) to (-b, a) on the rotated pair; the third channel is copied.
  void hand_computed_quarter_turn() {
    const float x[3] = {1.5f, -2.0f, 7.0f}, cos[2] = {0.0f, 0.0f}, sin[2] = {1.0f, 1.0f};
    float y[3];
    cpu::rope_f32(x, cos, sin, y, 1, 1, 3, 2);
    QCOMPARE(y[0], 2.0f);
    QCOMPARE(y[1], 1.5f);
    QCOMPARE(y[2], 7.0f);
  }
};

QTEST_APPLESS_MAIN(RopeKernel)
#include "test_rope.moc"
