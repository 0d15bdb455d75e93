// Noise: one CPU generator in the reference's draw order, bit-identical to values recorded
// from torch.randn(shape, generator=torch.Generator('cpu').manual_seed(42)) (torch 2.11).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <QtTest>

#include "core/common/error.h"
#include "core/io/sha256.h"
#include "core/sampling/noise.h"
#include "sampling_test_util.h"

using namespace h3p::sampling;
using namespace h3p::sampling::test;

namespace {

std::string digest(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return h3p::io::sha256_hex(
      std::span<const std::byte>(static_cast<const std::byte*>(c.data_ptr()), c.nbytes()));
}

float at_flat(const at::Tensor& t, int64_t i) { return t.contiguous().data_ptr<float>()[i]; }

}  // namespace

class TestNoise : public QObject {
  Q_OBJECT

 private slots:
  void recordedReferenceDraws();
  void deterministicPerSeed();
  void drawOrderIsKeyframesVideoAudio();
  void emptyShapesAndErrors();
};

void TestNoise::recordedReferenceDraws() {
  // One generator, seed 42: randn (1,24,1,4,6), then (1,24,3,4,6), then (10,32) — a keyframe,
  // the video and the audio rows of a tiny request, in the pipeline's order.
  const InitialNoise n = draw_initial_noise(42, {{1, 24, 1, 4, 6}}, {1, 24, 3, 4, 6}, {10, 32});
  QCOMPARE(n.keyframes.size(), std::size_t{1});
  QCOMPARE(n.keyframes[0].scalar_type(), at::kFloat);
  QCOMPARE(n.keyframes[0].sizes(), (at::IntArrayRef{1, 24, 1, 4, 6}));
  QCOMPARE(n.video.sizes(), (at::IntArrayRef{1, 24, 3, 4, 6}));
  QCOMPARE(n.audio_rows.sizes(), (at::IntArrayRef{10, 32}));

  QCOMPARE(at_flat(n.keyframes[0], 0), 0x1.ed4a52p+0f);
  QCOMPARE(at_flat(n.keyframes[0], 1), 0x1.7cbea6p+0f);
  QCOMPARE(at_flat(n.keyframes[0], 575), 0x1.37e9e6p-1f);
  QCOMPARE(at_flat(n.video, 0), -0x1.9b3f08p-1f);
  QCOMPARE(at_flat(n.video, 1727), 0x1.15b9bap+0f);
  QCOMPARE(at_flat(n.audio_rows, 0), -0x1.032eep+0f);
  QCOMPARE(at_flat(n.audio_rows, 319), -0x1.0fd378p-1f);
  QCOMPARE(digest(n.keyframes[0]),
           std::string("e4a7962a304443837ed0869065617daf23ce6885d1454a2edcd27c027e44bab0"));
  QCOMPARE(digest(n.video),
           std::string("cffc1cbb23596d4dac63c327394aea733dd825c771a15451d1e81df9fa11ee91"));
  QCOMPARE(digest(n.audio_rows),
           std::string("cded89d6cf3f552f7f17765e5b29dee48dec9bba8c1a0a58adafa9c230bceefc"));
}

void TestNoise::deterministicPerSeed() {
  const uint64_t seed = fresh_seed("deterministicPerSeed");
  const InitialNoise a = draw_initial_noise(seed, {}, {1, 24, 2, 4, 6}, {18, 32});
  const InitialNoise b = draw_initial_noise(seed, {}, {1, 24, 2, 4, 6}, {18, 32});
  H3P_VERIFY_BITS(a.video, b.video);
  H3P_VERIFY_BITS(a.audio_rows, b.audio_rows);
  const InitialNoise c = draw_initial_noise(seed + 1, {}, {1, 24, 2, 4, 6}, {18, 32});
  QVERIFY(!bit_equal(a.video, c.video));
  QVERIFY(!bit_equal(a.audio_rows, c.audio_rows));
  // Statistically standard normal.
  const InitialNoise big = draw_initial_noise(seed, {}, {1, 24, 8, 16, 16}, {0, 32});
  QVERIFY(qAbs(big.video.mean().item<double>()) < 0.02);
  QVERIFY(qAbs(big.video.std().item<double>() - 1.0) < 0.02);
}

void TestNoise::drawOrderIsKeyframesVideoAudio() {
  const uint64_t seed = fresh_seed("drawOrderIsKeyframesVideoAudio");
  const std::vector<int64_t> kf = {1, 24, 1, 4, 6}, video = {1, 24, 7, 4, 6}, audio = {74, 32};
  const InitialNoise n = draw_initial_noise(seed, {kf, kf}, video, audio);
  at::Generator g = at::detail::createCPUGenerator(seed);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  H3P_VERIFY_BITS(n.keyframes[0], at::randn(kf, g, f32));
  H3P_VERIFY_BITS(n.keyframes[1], at::randn(kf, g, f32));
  H3P_VERIFY_BITS(n.video, at::randn(video, g, f32));
  H3P_VERIFY_BITS(n.audio_rows, at::randn(audio, g, f32));
  // Keyframe draws shift the video draw.
  const InitialNoise plain = draw_initial_noise(seed, {}, video, audio);
  QVERIFY(!bit_equal(plain.video, n.video));
}

void TestNoise::emptyShapesAndErrors() {
  const InitialNoise n = draw_initial_noise(7, {}, {1, 24, 0, 4, 6}, {0, 32});
  QCOMPARE(n.video.numel(), int64_t{0});
  QCOMPARE(n.audio_rows.numel(), int64_t{0});
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, draw_initial_noise(7, {}, {1, -24}, {2, 32}));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, draw_initial_noise(7, {{-1}}, {1, 24}, {2, 32}));
}

QTEST_APPLESS_MAIN(TestNoise)
#include "test_noise.moc"
