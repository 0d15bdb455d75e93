// Patchify: row and column order on a hand-built tensor, exact round trips, audio row layout.
#include <ATen/ATen.h>

#include <QtTest>

#include "core/common/error.h"
#include "core/sampling/patchify.h"
#include "sampling_test_util.h"

using namespace h3p::sampling;
using namespace h3p::sampling::test;

class TestPatchify : public QObject {
  Q_OBJECT

 private slots:
  void rowAndColumnOrder();
  void roundTripRandom();
  void otherPatchRoundTrip();
  void badShapesRefused();
  void audioRowsAreChannelMajor();
  void audioRoundTrip();
};

void TestPatchify::rowAndColumnOrder() {
  // value = c*1000 + t*100 + h*10 + w, shape (1, 3, 2, 4, 6).
  const int64_t C = 3, T = 2, H = 4, W = 6;
  at::Tensor x = at::empty({1, C, T, H, W}, at::kFloat);
  auto a = x.accessor<float, 5>();
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) a[0][c][t][h][w] = c * 1000 + t * 100 + h * 10 + w;
  const at::Tensor rows = patchify_video(x);
  QCOMPARE(rows.sizes(), (at::IntArrayRef{T * (H / 2) * (W / 2), C * 4}));
  QVERIFY(rows.is_contiguous());
  auto r = rows.accessor<float, 2>();
  for (int64_t t = 0; t < T; ++t)
    for (int64_t hh = 0; hh < H / 2; ++hh)
      for (int64_t ww = 0; ww < W / 2; ++ww)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t ph = 0; ph < 2; ++ph)
            for (int64_t pw = 0; pw < 2; ++pw) {
              const int64_t row = (t * (H / 2) + hh) * (W / 2) + ww;
              const int64_t col = c * 4 + ph * 2 + pw;
              QCOMPARE(r[row][col],
                       static_cast<float>(c * 1000 + t * 100 + (2 * hh + ph) * 10 + 2 * ww + pw));
            }
}

void TestPatchify::roundTripRandom() {
  at::manual_seed(fresh_seed("roundTripRandom"));
  for (const auto& shape : std::vector<std::vector<int64_t>>{
           {1, 24, 7, 4, 6}, {1, 24, 1, 2, 2}, {1, 5, 3, 10, 14}}) {
    const at::Tensor x = at::randn(shape);
    const at::Tensor rows = patchify_video(x);
    H3P_VERIFY_BITS(unpatchify_video(rows, shape[1], shape[2], shape[3], shape[4]), x);
    // bf16 rows permute the same way.
    const at::Tensor xb = x.to(at::kBFloat16);
    H3P_VERIFY_BITS(unpatchify_video(patchify_video(xb), shape[1], shape[2], shape[3], shape[4]),
                    xb);
  }
  // A non-contiguous input packs like its contiguous copy.
  const at::Tensor wide = at::randn({1, 4, 2, 6, 4}).transpose(3, 4);
  H3P_VERIFY_BITS(patchify_video(wide), patchify_video(wide.contiguous()));
}

void TestPatchify::otherPatchRoundTrip() {
  const at::Tensor x = at::randn({1, 2, 4, 6, 8});
  const PatchSize patch = {2, 3, 2};
  const at::Tensor rows = patchify_video(x, patch);
  QCOMPARE(rows.sizes(), (at::IntArrayRef{2 * 2 * 4, 2 * 12}));
  H3P_VERIFY_BITS(unpatchify_video(rows, 2, 4, 6, 8, patch), x);
}

void TestPatchify::badShapesRefused() {
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, patchify_video(at::zeros({1, 4, 2, 5, 4})));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, patchify_video(at::zeros({2, 4, 2, 4, 4})));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, patchify_video(at::zeros({4, 2, 4, 4})));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, unpatchify_video(at::zeros({8, 12}), 4, 2, 4, 4));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, unpatchify_video(at::zeros({7, 16}), 4, 2, 4, 4));
  QCOMPARE(unpatchify_video(at::zeros({8, 16}), 4, 2, 4, 4).sizes(), (at::IntArrayRef{1, 4, 2, 4, 4}));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, unpatchify_video(at::zeros({8, 16}), 4, 2, 3, 4));
}

void TestPatchify::audioRowsAreChannelMajor() {
  // rows[c*N + n][j] -> latents[c][j][n].
  const int64_t N = 5;
  const at::Tensor rows = at::arange(2 * N * 32, at::kFloat).reshape({2 * N, 32});
  const at::Tensor latents = audio_rows_to_latents(rows);
  QCOMPARE(latents.sizes(), (at::IntArrayRef{2, 32, N}));
  auto l = latents.accessor<float, 3>();
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t j = 0; j < 32; ++j)
      for (int64_t n = 0; n < N; ++n) QCOMPARE(l[c][j][n], static_cast<float>((c * N + n) * 32 + j));
}

void TestPatchify::audioRoundTrip() {
  at::manual_seed(fresh_seed("audioRoundTrip"));
  const at::Tensor rows = at::randn({414, 32});
  const at::Tensor latents = audio_rows_to_latents(rows);
  QVERIFY(latents.is_contiguous());
  H3P_VERIFY_BITS(audio_latents_to_rows(latents), rows);
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, audio_rows_to_latents(at::zeros({413, 32})));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, audio_rows_to_latents(at::zeros({414})));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, audio_latents_to_rows(at::zeros({2, 32})));
}

QTEST_APPLESS_MAIN(TestPatchify)
#include "test_patchify.moc"
