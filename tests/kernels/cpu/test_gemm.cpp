// gemm_bf16 / gemm_f32 against the provider's linear (at::linear) on fresh random inputs at
// awkward shapes, on every ISA path this CPU runs (the scalar fallback included), with guard
// bytes around the output, NaN/Inf failing, and the same bytes at 1, 2 and 3 threads.
#include <ATen/ATen.h>

#include <QtTest/QtTest>

#include <optional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_dispatch.h"

using namespace h3p::kernels;
using cpu::Isa;

namespace {

// Declared tolerances: bf16 output rounded once from fp32 sums (the provider rounds once too,
// after another summation order): one bf16 ulp, 2^-8 relative, with margin. fp32: reordered
// fp32 sums.
constexpr test::Tolerance kGemmBf16{4.0 / 256.0, 1e-2};
constexpr test::Tolerance kGemmF32{1e-5, 1e-5};

// Restores the default ISA and thread count on scope exit.
struct OverrideReset {
  ~OverrideReset() {
    cpu::set_isa_for_tests(std::nullopt);
    cpu::set_threads_for_tests(0);
  }
};

std::vector<Isa> runnable_isas() {
  std::vector<Isa> out{Isa::scalar};
  if (cpu::best_supported_isa() >= Isa::avx2) out.push_back(Isa::avx2);
  if (cpu::best_supported_isa() >= Isa::avx512) out.push_back(Isa::avx512);
  if (cpu::best_supported_isa() >= Isa::avx512bf16) out.push_back(Isa::avx512bf16);
  if (cpu::best_supported_isa() >= Isa::amx) out.push_back(Isa::amx);
  return out;
}

struct Run {
  at::Tensor out;
  bool guards_ok = false;
};

// The candidate on contiguous x (m, k), w (n, k), optional b (n), into a guarded buffer.
Run run_gemm(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& b) {
  const std::int64_t m = x.size(0), k = x.size(1), n = w.size(0);
  test::GuardedOutput y(x.scalar_type(), {m, n});
  if (x.scalar_type() == at::kBFloat16) {
    cpu::gemm_bf16(test::kernel_ptr<cpu::Bf16>(x), test::kernel_ptr<cpu::Bf16>(w),
                   b ? test::kernel_ptr<cpu::Bf16>(*b) : nullptr, y.data<cpu::Bf16>(), m, n, k);
  } else {
    cpu::gemm_f32(x.data_ptr<float>(), w.data_ptr<float>(), b ? b->data_ptr<float>() : nullptr,
                  y.data<float>(), m, n, k);
  }
  return {y.tensor().clone(), y.guards_intact()};
}

}  // namespace

class GemmTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { seed_ = test::fresh_seed("test_gemm"); }

  void matches_provider_data() {
    QTest::addColumn<qint64>("m");
    QTest::addColumn<qint64>("n");
    QTest::addColumn<qint64>("k");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<bool>("bf16");
    struct Shape {
      qint64 m, n, k;
      bool bias;
    };
    const Shape shapes[] = {
        {1, 1, 1, false},     {1, 33, 17, true},     {2, 4608, 128, true},  // AdaLN GEMV
        {3, 70, 129, false},  {4, 9, 300, true},     {5, 7, 3, false},
        {7, 31, 15, true},    {13, 33, 65, false},   {12, 32, 16, true},
        {37, 100, 257, true}, {130, 96, 64, false},  {3, 5, 0, true},
        {6, 4, 0, false},     {870, 256, 256, false}, {870, 1408, 256, false},  // small preset
        {870, 256, 704, false}, {200, 3, 1, true},
    };
    for (const Shape& s : shapes) {
      for (bool bf16 : {true, false}) {
        const std::string tag = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                std::to_string(s.k) + (s.bias ? "+b" : "") +
                                (bf16 ? " bf16" : " f32");
        QTest::newRow(tag.c_str()) << s.m << s.n << s.k << s.bias << bf16;
      }
    }
  }

  void matches_provider() {
    QFETCH(qint64, m);
    QFETCH(qint64, n);
    QFETCH(qint64, k);
    QFETCH(bool, bias);
    QFETCH(bool, bf16);
    OverrideReset reset;
    const at::ScalarType dtype = bf16 ? at::kBFloat16 : at::kFloat;
    test::Rng rng(seed_ + static_cast<std::uint64_t>(m * 1000003 + n * 1009 + k));
    const at::Tensor x = rng.normal({m, k}, dtype);
    const at::Tensor w = rng.normal({n, k}, dtype, 0.1);
    const std::optional<at::Tensor> b =
        bias ? std::optional<at::Tensor>(rng.normal({n}, dtype)) : std::nullopt;
    const at::Tensor want = h3p::ops::make_provider_ops()->linear(x, w, b);
    const test::Tolerance tol = bf16 ? kGemmBf16 : kGemmF32;
    for (Isa isa : runnable_isas()) {
      cpu::set_isa_for_tests(isa);
      const std::string what = std::string("isa ") + cpu::isa_name(isa);
      cpu::set_threads_for_tests(1);
      const Run one = run_gemm(x, w, b);
      QVERIFY2(one.guards_ok, (what + ": guard bytes overwritten").c_str());
      const std::string msg = test::check_close(one.out, want, tol, what);
      QVERIFY2(msg.empty(), msg.c_str());
      for (int threads : {2, 3}) {
        cpu::set_threads_for_tests(threads);
        const Run many = run_gemm(x, w, b);
        QVERIFY2(many.guards_ok, (what + ": guard bytes overwritten").c_str());
        QVERIFY2(test::bit_equal(one.out, many.out),
                 (what + ": bytes differ at " + std::to_string(threads) + " threads").c_str());
      }
    }
  }

  // Small integers: every path must give the exact sums, bias added.
  void hand_computed_exact() {
    OverrideReset reset;
    // x (2, 3), w (3, 3), bias (3): y = x·wᵀ + b.
    const float xv[] = {1, 2, 3, -1, 0, 4};
    const float wv[] = {1, 0, -1, 2, 2, 2, 0.5f, -0.25f, 8};
    const float bv[] = {0.5f, -1, 0};
    const float want[] = {-1.5f, 11, 24.0f, -4.5f, 5, 31.5f};
    for (Isa isa : runnable_isas()) {
      cpu::set_isa_for_tests(isa);
      float y[6];
      cpu::gemm_f32(xv, wv, bv, y, 2, 3, 3);
      for (int i = 0; i < 6; ++i) QCOMPARE(y[i], want[i]);
      cpu::Bf16 xb[6], wb[9], bb[3], yb[6];
      for (int i = 0; i < 6; ++i) xb[i] = cpu::to_bf16(xv[i]);
      for (int i = 0; i < 9; ++i) wb[i] = cpu::to_bf16(wv[i]);
      for (int i = 0; i < 3; ++i) bb[i] = cpu::to_bf16(bv[i]);
      cpu::gemm_bf16(xb, wb, bb, yb, 2, 3, 3);
      for (int i = 0; i < 6; ++i) QCOMPARE(cpu::to_float(yb[i]), want[i]);
      // The same rows seen as m = 6 (GEMM path) with x repeated: same values.
      float x6[18], y6[18];
      for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < 3; ++c) x6[r * 3 + c] = xv[(r % 2) * 3 + c];
      }
      cpu::gemm_f32(x6, wv, bv, y6, 6, 3, 3);
      for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < 3; ++c) QCOMPARE(y6[r * 3 + c], want[(r % 2) * 3 + c]);
      }
    }
  }

  // Rounding happens once: a sum that lands between two bf16 values rounds to nearest even.
  void bf16_rounds_once() {
    OverrideReset reset;
    // 1 + 2^-8 + 2^-9 is not a bf16; rounding after each add would give 1, once gives 1 + 2^-7.
    const float xv[] = {1.0f, 1.0f, 1.0f};
    const float wv[] = {1.0f, 1.0f / 256.0f, 1.0f / 512.0f};
    cpu::Bf16 xb[3], wb[3], yb[1];
    for (int i = 0; i < 3; ++i) {
      xb[i] = cpu::to_bf16(xv[i]);
      wb[i] = cpu::to_bf16(wv[i]);
    }
    for (Isa isa : runnable_isas()) {
      cpu::set_isa_for_tests(isa);
      cpu::gemm_bf16(xb, wb, nullptr, yb, 1, 1, 3);
      QCOMPARE(cpu::to_float(yb[0]), 1.0f + 1.0f / 128.0f);
      // The GEMM path (m > 4) rounds the same way.
      cpu::Bf16 x8[24], y8[8];
      for (int i = 0; i < 24; ++i) x8[i] = xb[i % 3];
      cpu::gemm_bf16(x8, wb, nullptr, y8, 8, 1, 3);
      for (int i = 0; i < 8; ++i) QCOMPARE(cpu::to_float(y8[i]), 1.0f + 1.0f / 128.0f);
    }
  }

  void empty_outputs_write_nothing() {
    test::GuardedOutput y(at::kFloat, {0});
    const float x[4] = {1, 2, 3, 4};
    cpu::gemm_f32(x, x, x, y.data<float>(), 0, 4, 1);
    cpu::gemm_f32(x, x, x, y.data<float>(), 4, 0, 1);
    QVERIFY(y.guards_intact());
  }

  void negative_dimension_is_refused() {
    const float x[1] = {1};
    float y[1];
    QVERIFY_THROWS_EXCEPTION(h3p::InputError, cpu::gemm_f32(x, x, nullptr, y, -1, 1, 1));
    QVERIFY_THROWS_EXCEPTION(h3p::InputError, cpu::gemm_f32(x, x, nullptr, y, 1, 1, -1));
  }

  void isa_override_is_capped_at_support() {
    OverrideReset reset;
    cpu::set_isa_for_tests(Isa::avx512);
    QVERIFY(cpu::active_isa() <= cpu::best_supported_isa());
    cpu::set_isa_for_tests(Isa::scalar);
    QCOMPARE(cpu::active_isa(), Isa::scalar);
    QCOMPARE(std::string(cpu::isa_name(Isa::avx2)), std::string("avx2"));
    cpu::set_threads_for_tests(3);
    QCOMPARE(cpu::kernel_threads(), 3);
  }

 private:
  std::uint64_t seed_ = 0;
};

QTEST_APPLESS_MAIN(GemmTest)
#include "test_gemm.moc"
