// kernels/cpu/adaln (row gather) against the provider's gather_rows: fresh random tables and
// row ids, column slices of a wider table read in place (the AdaLN chunks), one row and many,
// guard bytes; a copy has no rounding, so the result must be bitwise the provider's.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include "core/ops/provider_ops.h"
#include "kernel_check.h"
#include "kernels/cpu/adaln.h"

using namespace h3p;
using namespace h3p::kernels;
using cpu::Bf16;

class AdalnKernel : public QObject {
  Q_OBJECT

  template <typename T>
  void check_dtype(at::ScalarType dtype) {
    auto provider = ops::make_provider_ops();
    test::Rng rng(test::fresh_seed("gather_rows"));
    // (table rows, chunk width, chunks, gathered rows)
    const std::vector<std::array<int64_t, 4>> shapes = {
        {1, 1, 1, 1}, {3, 5, 6, 7}, {9, 48, 6, 333}, {6, 256, 6, 4096}, {4, 33, 2, 1}};
    for (const auto& [t, c, chunks, n] : shapes) {
      const std::string what = std::string(c10::toString(dtype)) + " table " + std::to_string(t) +
                               "x" + std::to_string(c * chunks) + " n=" + std::to_string(n);
      const at::Tensor wide = rng.normal({t, c * chunks}, dtype);
      const at::Tensor rows = rng.uniform_int({n}, t);
      const int64_t* ids = rows.data_ptr<int64_t>();
      auto parts = wide.chunk(chunks, -1);
      for (int64_t k = 0; k < chunks; ++k) {
        const at::Tensor& part = parts[k];
        test::GuardedOutput out(dtype, {n, c});
        if constexpr (std::is_same_v<T, Bf16>) {
          cpu::gather_rows_bf16(test::kernel_ptr<Bf16>(part), part.stride(0), ids, out.data<Bf16>(), n, c);
        } else {
          cpu::gather_rows_f32(test::kernel_ptr<float>(part), part.stride(0), ids, out.data<float>(), n, c);
        }
        QVERIFY2(out.guards_intact(), what.c_str());
        QVERIFY2(test::bit_equal(out.tensor(), provider->gather_rows(part, rows)), what.c_str());
      }
    }
  }

 private slots:
  void bf16_matches_provider() { check_dtype<Bf16>(at::kBFloat16); }
  void f32_matches_provider() { check_dtype<float>(at::kFloat); }

  void hand_computed() {
    const float table[6] = {1, 2, 3, 4, 5, 6};  // 3 rows of 2
    const int64_t rows[4] = {2, 0, 2, 1};
    float out[8];
    cpu::gather_rows_f32(table, 2, rows, out, 4, 2);
    const float want[8] = {5, 6, 1, 2, 5, 6, 3, 4};
    for (int i = 0; i < 8; ++i) QCOMPARE(out[i], want[i]);
  }
};

QTEST_APPLESS_MAIN(AdalnKernel)
#include "test_adaln.moc"
