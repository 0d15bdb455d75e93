// kernels/cpu/qk_norm against the provider's rms_norm on (S, H, D) tensors: fresh random inputs
// at several shapes (one row and head, head_dim 1, odd head_dim not a multiple of any vector
// width, the model's 32 and 64, rows split over threads), guard bytes, NaN/Inf failing, the
// same bytes on one thread and when computed one row per call.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/qk_norm.h"

using namespace h3p;
using namespace h3p::kernels;
using cpu::Bf16;

namespace {

template <typename T>
void qk_norm(const at::Tensor& x, const at::Tensor& w, T* y, int64_t rows, int64_t heads,
             int64_t d, double eps, int64_t first = 0) {
  const int64_t o = first * heads * d;
  if constexpr (std::is_same_v<T, Bf16>) {
    cpu::qk_norm_bf16(test::kernel_ptr<Bf16>(x) + o, test::kernel_ptr<Bf16>(w), y, rows, heads, d, eps);
  } else {
    cpu::qk_norm_f32(test::kernel_ptr<float>(x) + o, test::kernel_ptr<float>(w), y, rows, heads, d, eps);
  }
}

}  // namespace

class QkNormKernel : public QObject {
  Q_OBJECT

  template <typename T>
  void check_dtype(at::ScalarType dtype) {
    auto provider = ops::make_provider_ops();
    test::Rng rng(test::fresh_seed("qk_norm"));
    const std::vector<std::array<int64_t, 3>> shapes = {
        {1, 1, 1}, {1, 2, 32}, {5, 3, 17}, {9, 2, 33}, {300, 4, 64}, {77, 2, 31}};
    for (const auto& [s, h, d] : shapes) {
      const std::string what = std::string(c10::toString(dtype)) + " (" + std::to_string(s) + ", " +
                               std::to_string(h) + ", " + std::to_string(d) + ")";
      const at::Tensor x = rng.normal({s, h, d}, dtype, 2.0);
      const at::Tensor w = at::add(rng.normal({d}, at::kFloat, 0.1), 1.0).to(dtype);
      test::GuardedOutput out(dtype, {s, h, d});
      qk_norm(x, w, out.data<T>(), s, h, d, 1e-5);
      QVERIFY2(out.guards_intact(), what.c_str());
      H3P_CHECK_CLOSE(out.tensor(), provider->rms_norm(x, w, 1e-5), "qk_norm " + what);
      test::GuardedOutput one(dtype, {s, h, d});
      for (int64_t r = 0; r < s; ++r) qk_norm(x, w, one.data<T>() + r * h * d, 1, h, d, 1e-5, r);
      QVERIFY2(test::bit_equal(one.tensor(), out.tensor()), ("row by row " + what).c_str());
      test::GuardedOutput serial(dtype, {s, h, d});
      {
        test::SingleThreadScope one_thread;
        qk_norm(x, w, serial.data<T>(), s, h, d, 1e-5);
      }
      QVERIFY2(test::bit_equal(serial.tensor(), out.tensor()), ("1 thread " + what).c_str());
    }
  }

 private slots:
  void bf16_matches_provider() { check_dtype<Bf16>(at::kBFloat16); }
  void f32_matches_provider() { check_dtype<float>(at::kFloat); }

  // Each head is normalised on its own: head 0 (3, 4) and head 1 (0, 2), eps 0, w = 1.
  void heads_are_independent() {
    const float x[4] = {3.0f, 4.0f, 0.0f, 2.0f}, w[2] = {1.0f, 1.0f};
    float y[4];
    cpu::qk_norm_f32(x, w, y, 1, 2, 2, 0.0);
    QVERIFY(std::fabs(y[0] - 3.0f / std::sqrt(12.5f)) < 1e-6f);
    QVERIFY(std::fabs(y[1] - 4.0f / std::sqrt(12.5f)) < 1e-6f);
    QCOMPARE(y[2], 0.0f);
    QVERIFY(std::fabs(y[3] - std::sqrt(2.0f)) < 1e-6f);
  }
};

QTEST_APPLESS_MAIN(QkNormKernel)
#include "test_qk_norm.moc"
