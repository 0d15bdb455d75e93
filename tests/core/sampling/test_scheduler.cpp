// Scheduler: the sigma grid (fp32 linspace with the reference's rounding, the shift,
// collapsing), timesteps, the Euler step and scale_noise, against hand-computed values,
// values recorded from the reference and an independent elementwise evaluation.
#include <ATen/ATen.h>

#include <QtTest>

#include <cmath>
#include <limits>

#include "core/common/error.h"
#include "core/sampling/scheduler.h"
#include "sampling_test_util.h"

using namespace h3p::sampling;
using namespace h3p::sampling::test;

class TestScheduler : public QObject {
  Q_OBJECT

 private slots:
  void twoPointsIsOneToZero();
  void shiftOneIsPlainLinspace();
  void linspaceRoundsLikeReference();
  void shiftedGridRecordedValues();
  void gridInvariants();
  void collapsesConsecutiveDuplicates();
  void invalidScheduleRefused();
  void stepHandComputed();
  void stepToZeroReturnsDenoised();
  void stepMatchesElementwiseFp32();
  void stepHalfPrecisionKeepsDtype();
  void stepIndexOutsideRefused();
  void scaleNoiseEnds();
  void scaleNoiseElementwise();
};

void TestScheduler::twoPointsIsOneToZero() {
  for (const double shift : {1.0, 3.0, 12.0, 0.25}) {
    const Schedule s = make_schedule(2, shift);
    QCOMPARE(s.sigmas.size(), std::size_t{2});
    QCOMPARE(s.sigmas[0], 1.0f);
    QCOMPARE(s.sigmas[1], 0.0f);
    QCOMPARE(s.timesteps.size(), std::size_t{1});
    QCOMPARE(s.timesteps[0], 0.0f);
  }
}

void TestScheduler::shiftOneIsPlainLinspace() {
  for (const int n : {3, 5, 17, 50, 101}) {
    const Schedule s = make_schedule(n, 1.0);
    const std::vector<float> base = torch_linspace_f32(1.0f, 0.0f, n);
    QCOMPARE(s.sigmas.size(), base.size());
    for (int i = 0; i < n; ++i) QCOMPARE(float_bits(s.sigmas[i]), float_bits(base[i]));
  }
  // Exactly representable grid: linspace(1, 0, 5) = 1, .75, .5, .25, 0.
  const std::vector<float> five = torch_linspace_f32(1.0f, 0.0f, 5);
  QCOMPARE(five, (std::vector<float>{1.0f, 0.75f, 0.5f, 0.25f, 0.0f}));
  QCOMPARE(torch_linspace_f32(2.0f, 3.0f, 1), std::vector<float>{2.0f});
}

void TestScheduler::linspaceRoundsLikeReference() {
  // torch.linspace(1, 0, 50, dtype=float32) as recorded from the reference (torch 2.11, CPU):
  // these entries are where a multiply-then-add evaluation would round differently.
  const std::vector<float> grid = torch_linspace_f32(1.0f, 0.0f, 50);
  QCOMPARE(grid[9], 0x1.a1f58ep-1f);
  QCOMPARE(grid[17], 0x1.4e5e0ap-1f);
  QCOMPARE(grid[21], 0x1.24924ap-1f);
  QCOMPARE(grid[22], 0x1.1a1f5ap-1f);
  QCOMPARE(grid[0], 1.0f);
  QCOMPARE(grid[49], 0.0f);
  // The upper half counts down from the end: the middle entries are symmetric in rounding.
  const std::vector<float> even = torch_linspace_f32(0.0f, 1.0f, 4);
  QCOMPARE(even, (std::vector<float>{0.0f, 0x1.555556p-2f, 0x1.555554p-1f, 1.0f}));
}

void TestScheduler::shiftedGridRecordedValues() {
  // MiniMaxH3Scheduler(shift=12).set_timesteps(50) as recorded from the reference.
  const Schedule s = make_schedule(50, 12.0);
  QCOMPARE(s.sigmas.size(), std::size_t{50});
  const std::vector<float> head = {0x1p+0f, 0x1.ff1cd6p-1f, 0x1.fe30dap-1f,
                                   0x1.fd3b82p-1f, 0x1.fc3c3cp-1f, 0x1.fb326ep-1f};
  for (std::size_t i = 0; i < head.size(); ++i) QCOMPARE(s.sigmas[i], head[i]);
  QCOMPARE(s.sigmas[47], 0x1.5a240ep-2f);
  QCOMPARE(s.sigmas[48], 0x1.99999ap-3f);  // 12*(1/49) / (1 + 11/49) = 0.2
  QCOMPARE(s.sigmas[49], 0.0f);
}

void TestScheduler::gridInvariants() {
  for (const int n : {2, 3, 10, 50, 51, 200}) {
    for (const double shift : {1.0, 3.0, 12.0, 0.5, 3.7}) {
      const Schedule s = make_schedule(n, shift);
      QCOMPARE(s.sigmas.front(), 1.0f);
      QCOMPARE(s.sigmas.back(), 0.0f);
      QCOMPARE(s.timesteps.size() + 1, s.sigmas.size());
      for (std::size_t i = 1; i < s.sigmas.size(); ++i) QVERIFY(s.sigmas[i] < s.sigmas[i - 1]);
      for (std::size_t i = 0; i < s.timesteps.size(); ++i) {
        QCOMPARE(float_bits(s.timesteps[i]), float_bits(1.0f - s.sigmas[i]));
      }
    }
  }
}

void TestScheduler::collapsesConsecutiveDuplicates() {
  // A huge shift squeezes the top of the grid into the same fp32 values; the schedule keeps
  // each value once, exactly as unique_consecutive over the full grid.
  const int n = 4000;
  const double shift = 1e6;
  const Schedule s = make_schedule(n, shift);
  const std::vector<float> base = torch_linspace_f32(1.0f, 0.0f, n);
  const at::Tensor b = at::from_blob(const_cast<float*>(base.data()), {n}, at::kFloat);
  const at::Tensor full = at::div(at::mul(b, shift), at::add(at::mul(b, shift - 1.0), 1.0));
  const at::Tensor expected = std::get<0>(at::unique_consecutive(full));
  QVERIFY(expected.numel() < n);
  QCOMPARE(static_cast<int64_t>(s.sigmas.size()), expected.numel());
  for (int64_t i = 0; i < expected.numel(); ++i) {
    QCOMPARE(float_bits(s.sigmas[i]), float_bits(expected[i].item<float>()));
  }
}

void TestScheduler::invalidScheduleRefused() {
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, make_schedule(1, 12.0));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, make_schedule(0, 12.0));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, make_schedule(-5, 12.0));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, make_schedule(50, 0.0));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, make_schedule(50, -3.0));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError,
                           make_schedule(50, std::numeric_limits<double>::quiet_NaN()));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError,
                           make_schedule(50, std::numeric_limits<double>::infinity()));
}

void TestScheduler::stepHandComputed() {
  // sigmas (1, .5, 0); t = .25 -> sigma_t = .75; x0 = x + .75 v; r = .5.
  const Schedule s{{1.0f, 0.5f, 0.0f}, {0.0f, 0.5f}};
  const at::Tensor x = at::tensor({1.0f, 2.0f});
  const at::Tensor v = at::tensor({0.5f, -1.0f});
  const at::Tensor next = scheduler_step(v, 0.25f, x, s, 0);
  H3P_VERIFY_BITS(next, at::tensor({1.1875f, 1.625f}));
}

void TestScheduler::stepToZeroReturnsDenoised() {
  // The last step (sigma_next = 0) lands exactly on x0 = x + (1 - t) v.
  const Schedule s = make_schedule(4, 3.0);
  const at::Tensor x = at::randn({7, 5});
  const at::Tensor v = at::randn({7, 5});
  const float t = s.timesteps.back();
  const at::Tensor next = scheduler_step(v, t, x, s, static_cast<int>(s.timesteps.size()) - 1);
  const at::Tensor x0 = x + (1.0f - t) * v;
  H3P_VERIFY_BITS(next, x0);
}

void TestScheduler::stepMatchesElementwiseFp32() {
  at::manual_seed(fresh_seed("stepMatchesElementwiseFp32"));
  const Schedule s = make_schedule(50, 12.0);
  const at::Tensor x = at::randn({33, 96});
  const at::Tensor v = at::randn({33, 96});
  for (const int index : {0, 1, 24, 48}) {
    const float t = s.timesteps[index];
    const at::Tensor next = scheduler_step(v, t, x, s, index);
    QCOMPARE(next.scalar_type(), at::kFloat);
    const float sigma_t = 1.0f - t;
    const float ratio = s.sigmas[index + 1] / s.sigmas[index];
    const float keep = 1.0f - ratio;
    const float* px = x.data_ptr<float>();
    const float* pv = v.data_ptr<float>();
    const float* pn = next.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const float x0 = px[i] + sigma_t * pv[i];
      const float expected = ratio * px[i] + keep * x0;
      QCOMPARE(float_bits(pn[i]), float_bits(expected));
    }
  }
}

void TestScheduler::stepHalfPrecisionKeepsDtype() {
  const Schedule s = make_schedule(10, 3.0);
  const at::Tensor x = at::randn({4, 8}).to(at::kBFloat16);
  const at::Tensor v = at::randn({4, 8});
  const at::Tensor next = scheduler_step(v, s.timesteps[3], x, s, 3);
  QCOMPARE(next.scalar_type(), at::kBFloat16);
  QCOMPARE(next.sizes(), x.sizes());
  const at::Tensor reference = scheduler_step(v, s.timesteps[3], x.to(at::kFloat), s, 3);
  QVERIFY(at::allclose(next.to(at::kFloat), reference, 2e-2, 2e-2));
}

void TestScheduler::stepIndexOutsideRefused() {
  const Schedule s = make_schedule(5, 3.0);
  const at::Tensor x = at::zeros({2, 2});
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, scheduler_step(x, 0.0f, x, s, -1));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, scheduler_step(x, 0.0f, x, s, 4));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError,
                           scheduler_step(x, 0.0f, at::zeros({2, 2}, at::kLong), s, 0));
}

void TestScheduler::scaleNoiseEnds() {
  const at::Tensor x0 = at::randn({2, 3, 4});
  const at::Tensor noise = at::randn({2, 3, 4});
  H3P_VERIFY_BITS(scale_noise(x0, 1.0, noise), x0 + 0.0f * noise);
  H3P_VERIFY_BITS(scale_noise(x0, 0.0, noise), 0.0f * x0 + noise);
}

void TestScheduler::scaleNoiseElementwise() {
  at::manual_seed(fresh_seed("scaleNoiseElementwise"));
  const at::Tensor x0 = at::randn({1, 24, 1, 4, 6});
  const at::Tensor noise = at::randn({1, 24, 1, 4, 6});
  const at::Tensor out = scale_noise(x0, 0.999, noise);
  QCOMPARE(out.scalar_type(), at::kFloat);
  const float t = 0.999f;  // torch.tensor(0.999, dtype=float32)
  const float rest = 1.0f - t;
  const float* a = x0.data_ptr<float>();
  const float* n = noise.data_ptr<float>();
  const float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    QCOMPARE(float_bits(o[i]), float_bits(t * a[i] + rest * n[i]));
  }
}

QTEST_APPLESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
