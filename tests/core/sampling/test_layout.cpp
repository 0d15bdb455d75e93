// Packed layout: row counts, index ranges, tags and the fp64 rotary grid of t2va and fl2va
// sequences, plus the numpy arithmetic (open linspace, pairwise summation) it reproduces.
#include <ATen/ATen.h>

#include <QtTest>

#include <numeric>

#include "core/common/error.h"
#include "core/sampling/layout.h"
#include "sampling_test_util.h"

using namespace h3p::sampling;
using namespace h3p::sampling::test;

namespace {

constexpr double kThird5 = 5.0 / 3.0;

at::Tensor tags_of(std::vector<int64_t> values) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong));
}

double pos(const PackedLayout& l, int64_t row, int axis) {
  return l.position_ids.data_ptr<double>()[row * 3 + axis];
}

std::vector<double> spans(int64_t n) {
  std::vector<double> out;
  const int pattern[5] = {1, 4, 4, 4, 4};
  for (int64_t i = 0; i < n; ++i) out.push_back(kThird5 * pattern[i % 5]);
  return out;
}

}  // namespace

class TestLayout : public QObject {
  Q_OBJECT

 private slots:
  void pairwiseSumMatchesNumpy();
  void openLinspace();
  void temporalGridIsSequential();
  void anchorTimes();
  void t2vaRowsAndTags();
  void t2vaPositions();
  void squareAndWideSpatialGrid();
  void fl2vaKeyframeBlocks();
  void invalidInputsRefused();
};

void TestLayout::pairwiseSumMatchesNumpy() {
  // np.sum of the rotary spans as recorded from numpy 2.5: below 8 elements the sum is
  // sequential, from 8 on it runs 8 accumulators, above 128 it splits in halves.
  const std::vector<std::pair<int64_t, double>> recorded = {
      {5, 0x1.c555555555556p+4}, {8, 0x1.5aaaaaaaaaaabp+5}, {9, 0x1.9p+5},
      {16, 0x1.5aaaaaaaaaaabp+6}, {37, 0x1.9d55555555554p+7}, {77, 0x1.b155555555557p+8},
      {129, 0x1.6dp+9}, {300, 0x1.a9p+10}};
  for (const auto& [n, expected] : recorded) {
    const std::vector<double> s = spans(n);
    QCOMPARE(double_bits(numpy_pairwise_sum(s.data(), n)), double_bits(expected));
  }
  // 37 spans: pairwise and sequential orders differ in the last place.
  const std::vector<double> s = spans(37);
  const double sequential = std::accumulate(s.begin(), s.end(), 0.0);
  QVERIFY(sequential != numpy_pairwise_sum(s.data(), 37));
  QCOMPARE(numpy_pairwise_sum(s.data(), 0), 0.0);
}

void TestLayout::openLinspace() {
  QCOMPARE(numpy_linspace_open(2.0, 3.0, 5), (std::vector<double>{2.0, 2.2, 2.4, 2.6, 2.8}));
  QCOMPARE(numpy_linspace_open(-0.5, 1.5, 4), (std::vector<double>{-0.5, 0.0, 0.5, 1.0}));
  QCOMPARE(numpy_linspace_open(1.0, 1.0, 3), (std::vector<double>{1.0, 1.0, 1.0}));
  QVERIFY(numpy_linspace_open(0.0, 1.0, 0).empty());
  // start + i*step, not start + i*(stop-start)/num: 0.1 + 3*(0.6/5) in float64.
  const std::vector<double> g = numpy_linspace_open(0.1, 0.7, 5);
  const double step = (0.7 - 0.1) / 5.0;
  QCOMPARE(double_bits(g[3]), double_bits(3.0 * step + 0.1));
}

void TestLayout::temporalGridIsSequential() {
  const std::vector<double> t = temporal_position_grid(7, 5.0);
  QCOMPARE(t.size(), std::size_t{7});
  QCOMPARE(t[0], 5.0);
  double c = 0.0;
  const std::vector<double> s = spans(7);
  for (int i = 1; i < 7; ++i) {
    c += s[i - 1];
    QCOMPARE(double_bits(t[i]), double_bits(5.0 + c));
  }
  QVERIFY(qAbs(t[1] - (5.0 + 5.0 / 3.0)) < 1e-12);
  QVERIFY(qAbs(t[2] - (5.0 + 25.0 / 3.0)) < 1e-12);
}

void TestLayout::anchorTimes() {
  QCOMPARE(keyframe_anchor_time("first", 12, 37), 12.0);
  const std::vector<double> s = spans(37);
  const double last = 12.0 + numpy_pairwise_sum(s.data(), 37) - kThird5;
  QCOMPARE(double_bits(keyframe_anchor_time("last", 12, 37)), double_bits(last));
  // The last anchor sits on the last pixel frame: the last latent frame (index 36 spans four
  // pixel frames of 5/3) starts 5 rotary units earlier.
  QVERIFY(qAbs(keyframe_anchor_time("last", 12, 37) - (temporal_position_grid(37, 12.0)[36] +
                                                       5.0)) < 1e-9);
  // A last latent frame of one pixel frame (index 35 of 36) is the anchor itself.
  QVERIFY(qAbs(keyframe_anchor_time("last", 12, 36) - temporal_position_grid(36, 12.0)[35]) <
          1e-9);
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, keyframe_anchor_time("middle", 12, 37));
}

void TestLayout::t2vaRowsAndTags() {
  // 22 frames, 64x96 px: 7 latent frames of 4x6 -> 2x3 = 6 rows each, 37 audio latents.
  const Geometry g = resolve_geometry(22, 64, 96, 24);
  const PackedLayout l = build_packed_layout(tags_of({1, 1, 0, 0, 1}), g, {});
  const int64_t text = 5, audio = 74, video = 42;
  QCOMPARE(l.sequence_length, text + audio + video);
  QCOMPARE(l.num_condition_video_rows, int64_t{0});
  QCOMPARE(l.position_ids.scalar_type(), at::kDouble);
  QCOMPARE(l.position_ids.sizes(), (at::IntArrayRef{l.sequence_length, 3}));
  H3P_VERIFY_BITS(l.text_indices, at::arange(text, at::kLong));
  H3P_VERIFY_BITS(l.audio_indices, at::arange(text, text + audio, at::kLong));
  H3P_VERIFY_BITS(l.video_indices, at::arange(text + audio, l.sequence_length, at::kLong));
  const at::Tensor expected_tags = at::cat({tags_of({1, 1, 0, 0, 1}),
                                            at::full({audio}, 2, at::kLong),
                                            at::full({video}, 0, at::kLong)});
  H3P_VERIFY_BITS(l.token_tags, expected_tags);
}

void TestLayout::t2vaPositions() {
  const Geometry g = resolve_geometry(22, 64, 96, 24);
  const PackedLayout l = build_packed_layout(at::ones({3}, at::kLong), g, {});
  // Text rows: (i, 0, 0).
  for (int64_t i = 0; i < 3; ++i) {
    QCOMPARE(pos(l, i, 0), static_cast<double>(i));
    QCOMPARE(pos(l, i, 1), 0.0);
    QCOMPARE(pos(l, i, 2), 0.0);
  }
  // Width grid of a 4x6 latent: sqrt(24), ratio 6/sqrt(24), three open points, times 32.
  const double sqrt_area = std::sqrt(24.0);
  const double ratio_w = 6.0 / sqrt_area, left_w = (1.0 - ratio_w) / 2.0;
  const std::vector<double> width = numpy_linspace_open(left_w, left_w + ratio_w, 3);
  const double ratio_h = 4.0 / sqrt_area, left_h = (1.0 - ratio_h) / 2.0;
  const std::vector<double> height = numpy_linspace_open(left_h, left_h + ratio_h, 2);
  // Audio rows: channel-major, t = L + k, h = 0, w at the two ends of the width grid.
  const int64_t audio0 = 3, n = 37;
  for (int64_t c = 0; c < 2; ++c) {
    for (int64_t k = 0; k < n; ++k) {
      const int64_t row = audio0 + c * n + k;
      QCOMPARE(pos(l, row, 0), 3.0 + k);
      QCOMPARE(pos(l, row, 1), 0.0);
      QCOMPARE(double_bits(pos(l, row, 2)), double_bits((c == 0 ? width[0] : width[2]) * 32.0));
    }
  }
  // Video rows: frame-major, h-major inside a frame, on the 5/3*(1,4,4,4,4) time grid.
  const std::vector<double> times = temporal_position_grid(7, 3.0);
  const int64_t video0 = audio0 + 2 * n;
  for (int64_t f = 0; f < 7; ++f) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        const int64_t row = video0 + f * 6 + i * 3 + j;
        QCOMPARE(double_bits(pos(l, row, 0)), double_bits(times[f]));
        QCOMPARE(double_bits(pos(l, row, 1)), double_bits(height[i] * 32.0));
        QCOMPARE(double_bits(pos(l, row, 2)), double_bits(width[j] * 32.0));
      }
    }
  }
}

void TestLayout::squareAndWideSpatialGrid() {
  // Square 4x4 latent: ratio 1, grid [0, 16) on both axes.
  {
    const Geometry g = resolve_geometry(5, 64, 64, 24);
    const PackedLayout l = build_packed_layout(at::ones({1}, at::kLong), g, {});
    const int64_t video0 = 1 + 2 * g.num_audio_latents;
    const double expected[4][2] = {{0, 0}, {0, 16}, {16, 0}, {16, 16}};
    for (int r = 0; r < 4; ++r) {
      QCOMPARE(pos(l, video0 + r, 1), expected[r][0]);
      QCOMPARE(pos(l, video0 + r, 2), expected[r][1]);
    }
  }
  // 4x16 latent: sqrt area 8; height .25 + [0, .25] -> [8, 16]; width -.5 + .25k -> -16 + 8k.
  {
    const Geometry g = resolve_geometry(5, 64, 256, 24);
    const PackedLayout l = build_packed_layout(at::ones({2}, at::kLong), g, {});
    const int64_t video0 = 2 + 2 * g.num_audio_latents;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 8; ++j) {
        QCOMPARE(pos(l, video0 + i * 8 + j, 1), 8.0 + 8.0 * i);
        QCOMPARE(pos(l, video0 + i * 8 + j, 2), -16.0 + 8.0 * j);
      }
    }
    QCOMPARE(pos(l, 2, 2), -16.0);                          // first audio channel: left end
    QCOMPARE(pos(l, 2 + g.num_audio_latents, 2), 40.0);     // second channel: right end
  }
}

void TestLayout::fl2vaKeyframeBlocks() {
  const Geometry g = resolve_geometry(124, 64, 96, 24);  // 37 latent frames of 2x3 rows
  const int64_t text = 4, per_frame = 6;
  const PackedLayout l = build_packed_layout(tags_of({1, 0, 0, 1}), g, {"first", "last"});
  const int64_t cond = 2 * per_frame, audio = 2 * 207, video = 37 * per_frame;
  QCOMPARE(l.num_condition_video_rows, cond);
  QCOMPARE(l.sequence_length, text + cond + audio + video);
  // Keyframe rows come first among the video rows, then the generated ones after the audio.
  H3P_VERIFY_BITS(l.video_indices,
                  at::cat({at::arange(text, text + cond, at::kLong),
                           at::arange(text + cond + audio, l.sequence_length, at::kLong)}));
  H3P_VERIFY_BITS(l.audio_indices, at::arange(text + cond, text + cond + audio, at::kLong));
  QCOMPARE(l.token_tags.slice(0, text, text + cond).eq(0).all().item<bool>(), true);
  QCOMPARE(l.token_tags.slice(0, text + cond, text + cond + audio).eq(2).all().item<bool>(),
           true);
  // First block at t = L, last block at L + pairwise(spans) - 5/3; both carry the frame grid.
  const double last = keyframe_anchor_time("last", text, 37);
  const int64_t video0 = text + cond + audio;
  for (int64_t r = 0; r < per_frame; ++r) {
    QCOMPARE(pos(l, text + r, 0), 4.0);
    QCOMPARE(double_bits(pos(l, text + per_frame + r, 0)), double_bits(last));
    for (int axis = 1; axis < 3; ++axis) {
      QCOMPARE(double_bits(pos(l, text + r, axis)), double_bits(pos(l, video0 + r, axis)));
      QCOMPARE(double_bits(pos(l, text + per_frame + r, axis)),
               double_bits(pos(l, video0 + r, axis)));
    }
  }
  // Audio times continue from the text, unaffected by the keyframe rows.
  QCOMPARE(pos(l, text + cond, 0), 4.0);
}

void TestLayout::invalidInputsRefused() {
  const Geometry g = resolve_geometry(22, 64, 96, 24);
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, build_packed_layout(at::ones({3}, at::kLong), g,
                                                                {"first", "middle"}));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError,
                           build_packed_layout(at::ones({0}, at::kLong), g, {}));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError,
                           build_packed_layout(at::ones({3}, at::kFloat), g, {}));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError,
                           build_packed_layout(at::ones({1, 3}, at::kLong), g, {}));
  Geometry odd = g;
  odd.latent_width = 5;
  QVERIFY_THROWS_EXCEPTION(h3p::InputError,
                           build_packed_layout(at::ones({3}, at::kLong), odd, {}));
}

QTEST_APPLESS_MAIN(TestLayout)
#include "test_layout.moc"
