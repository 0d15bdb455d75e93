// Timestep plan: per-row timesteps reduced to sorted distinct values and inverse indices,
// with one, two and three distinct values, and the keyframe noise-augmentation level.
#include <ATen/ATen.h>

#include <QtTest>

#include <limits>

#include "core/common/error.h"
#include "core/sampling/timestep_plan.h"
#include "sampling_test_util.h"

using namespace h3p::sampling;
using namespace h3p::sampling::test;

namespace {

// 3 text rows, 2 keyframes or none, 7 latent frames of 2x3 rows, 37 audio latents.
PackedLayout small_layout(std::vector<std::string> anchors) {
  return build_packed_layout(at::ones({3}, at::kLong), resolve_geometry(22, 64, 96, 24),
                             anchors);
}


}  // namespace

class TestTimestepPlan : public QObject {
  Q_OBJECT

 private slots:
  void keyframeLevel();
  void oneDistinctValue();
  void twoDistinctValues();
  void threeDistinctValuesSorted();
  void plansOfASchedule();
  void nonFiniteRefused();
};

void TestTimestepPlan::keyframeLevel() {
  QCOMPARE(kKeyframeNoiseAug, 0.999f);
  QCOMPARE(condition_video_t(0.0f), 0.999f);
  QCOMPARE(condition_video_t(0.5f), 0.999f);
  QCOMPARE(condition_video_t(0.999f), 0.999f);
  QCOMPARE(condition_video_t(0.9995f), 0.9995f);
  QCOMPARE(condition_video_t(1.0f), 1.0f);
  // The largest float below 0.999f is below the double 0.999, so it is lifted.
  const float below = std::nextafter(0.999f, 0.0f);
  QCOMPARE(condition_video_t(below), 0.999f);
}

void TestTimestepPlan::oneDistinctValue() {
  const PackedLayout l = small_layout({});
  const RowTimesteps p = build_row_timesteps(l, 0.25f, 0.25f, condition_video_t(0.25f));
  H3P_VERIFY_BITS(p.timestep, at::tensor({0.25f}));
  H3P_VERIFY_BITS(p.timestep_indices, at::zeros({l.sequence_length}, at::kLong));
}

void TestTimestepPlan::twoDistinctValues() {
  const PackedLayout l = small_layout({});
  const RowTimesteps p = build_row_timesteps(l, 0.5f, 0.125f, condition_video_t(0.5f));
  H3P_VERIFY_BITS(p.timestep, at::tensor({0.125f, 0.5f}));
  at::Tensor expected = at::ones({l.sequence_length}, at::kLong);  // text and video: 0.5
  expected.index_fill_(0, l.audio_indices, 0);                      // audio: 0.125
  H3P_VERIFY_BITS(p.timestep_indices, expected);
}

void TestTimestepPlan::threeDistinctValuesSorted() {
  const PackedLayout l = small_layout({"first", "last"});
  QCOMPARE(l.num_condition_video_rows, int64_t{12});
  const RowTimesteps p = build_row_timesteps(l, 0.75f, 0.25f, condition_video_t(0.75f));
  H3P_VERIFY_BITS(p.timestep, at::tensor({0.25f, 0.75f, 0.999f}));
  at::Tensor expected = at::ones({l.sequence_length}, at::kLong);
  expected.index_fill_(0, l.audio_indices, 0);
  expected.index_fill_(0, l.video_indices.slice(0, 0, 12), 2);
  H3P_VERIFY_BITS(p.timestep_indices, expected);
  // Text rows follow the video timestep.
  QVERIFY(p.timestep_indices.index_select(0, l.text_indices).eq(1).all().item<bool>());
  // Audio above video reorders the table, not the assignment.
  const RowTimesteps q = build_row_timesteps(l, 0.25f, 0.75f, condition_video_t(0.25f));
  H3P_VERIFY_BITS(q.timestep, at::tensor({0.25f, 0.75f, 0.999f}));
  QVERIFY(q.timestep_indices.index_select(0, l.audio_indices).eq(1).all().item<bool>());
  QVERIFY(q.timestep_indices.index_select(0, l.text_indices).eq(0).all().item<bool>());
}

void TestTimestepPlan::plansOfASchedule() {
  // At the first step (t = 0 for both) a fl2va plan has two values: 0 and the keyframe level.
  const PackedLayout l = small_layout({"first"});
  const RowTimesteps p = build_row_timesteps(l, 0.0f, 0.0f, condition_video_t(0.0f));
  H3P_VERIFY_BITS(p.timestep, at::tensor({0.0f, 0.999f}));
  QCOMPARE(p.timestep_indices.sum().item<int64_t>(), l.num_condition_video_rows);
}

void TestTimestepPlan::nonFiniteRefused() {
  const PackedLayout l = small_layout({});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, build_row_timesteps(l, nan, 0.5f, 0.999f));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, build_row_timesteps(l, 0.5f, 0.5f, nan));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, build_row_timesteps(PackedLayout{}, 0.5f, 0.5f, 1));
}

QTEST_APPLESS_MAIN(TestTimestepPlan)
#include "test_timestep_plan.moc"
