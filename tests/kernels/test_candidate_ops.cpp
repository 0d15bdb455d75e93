// The CandidateOps adapter: every primitive against the provider at the graph's shapes and
// dtypes (result shape and dtype equal, values within the kernel tolerances), refusals as
// InputError naming the primitive, and whole transformer calls of the golden tiny models:
// `candidate` close to `provider` (relative L2 reported and bounded), `candidate:all=provider`
// bitwise equal to `provider`, and every single-group swap `candidate:<g>=provider` finite.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include <filesystem>

#include "core/common/error.h"
#include "core/io/safetensors.h"
#include "core/metrics/tensor_diff.h"
#include "core/model/call_file.h"
#include "core/model/transformer.h"
#include "core/model/weights.h"
#include "core/ops/group_ops.h"
#include "core/ops/impl_spec.h"
#include "core/ops/provider_ops.h"
#include "cpu/kernel_check.h"
#include "kernels/candidate_ops.h"

using namespace h3p;
namespace test = h3p::kernels::test;

namespace {

const std::filesystem::path kGolden = std::filesystem::path(H3P_SOURCE_DIR) / "tests/data/golden";

struct Golden {
  model::Transformer transformer;
  model::CallInputs inputs;
};

Golden load(const std::string& model_name, const std::string& call) {
  auto loaded = model::load_transformer(kGolden / model_name / "transformer", at::kCPU);
  model::Transformer transformer(loaded.config, std::move(loaded.weights));
  auto file = io::SafetensorsFile::open(kGolden / "calls" / (call + ".safetensors"));
  model::CallInputs inputs = model::read_call_inputs(file);
  model::validate_call(inputs, transformer.config(), call);
  return {std::move(transformer), std::move(inputs)};
}

model::CallOutputs run(const Golden& g, const std::string& spec) {
  return g.transformer.forward(
      g.inputs, ops::resolve_group_ops(ops::ImplSpec::parse(spec), kernels::make_candidate_ops()));
}

// Calls `fn` and expects an InputError whose message names `op`.
template <typename Fn>
bool refuses(Fn&& fn, const std::string& op) {
  try {
    fn();
  } catch (const InputError& e) {
    return std::string(e.what()).find(op) != std::string::npos;
  }
  return false;
}

}  // namespace

class CandidateOpsTest : public QObject {
  Q_OBJECT

  void primitives_for(at::ScalarType dtype) {
    auto cand = kernels::make_candidate_ops();
    auto prov = ops::make_provider_ops();
    test::Rng rng(test::fresh_seed("candidate primitives"));
    const int64_t s = 37, h = 2, d = 32, c = h * d, f = 128, r = 24;
    const std::string tag = c10::toString(dtype);
    auto same = [&](const at::Tensor& got, const at::Tensor& want, const std::string& what) {
      QVERIFY2(got.sizes() == want.sizes(), (tag + " " + what + " shape").c_str());
      QVERIFY2(got.scalar_type() == want.scalar_type(), (tag + " " + what + " dtype").c_str());
      // Twice the kernel suites' tolerances: those suites hold the tight, op-specific bounds.
      const test::Tolerance k = test::tolerance_for(want.scalar_type());
      H3P_CHECK_WITHIN(got, want, (test::Tolerance{2 * k.elem, 2 * k.rel_l2}), at::Tensor(),
                       tag + " " + what);
    };
    const at::Tensor x = rng.normal({s, c}, dtype, 2.0);
    const at::Tensor hff = rng.normal({s, 2 * f}, dtype, 2.0);
    const at::Tensor w = at::add(rng.normal({c}, at::kFloat, 0.1), 1.0).to(dtype);
    const at::Tensor wd = at::add(rng.normal({d}, at::kFloat, 0.1), 1.0).to(dtype);
    const at::Tensor qkv = rng.normal({s, h, d}, dtype, 2.0);
    const at::Tensor angles = rng.normal({s, r}, at::kFloat, 20.0);
    const at::Tensor table = rng.normal({6, 6 * c}, dtype);
    const at::Tensor rows = rng.uniform_int({s}, 6);
    const at::Tensor scale = rng.normal({s, c}, dtype, 0.5), shift = rng.normal({s, c}, dtype, 0.5);
    const at::Tensor t = at::tensor({0.0f, 0.25f, 0.999f});

    same(cand->swiglu(hff), prov->swiglu(hff), "swiglu");
    same(cand->silu(x), prov->silu(x), "silu");
    same(cand->silu(table), prov->silu(table), "silu on a table");
    same(cand->rms_norm(x, w, 1e-5), prov->rms_norm(x, w, 1e-5), "rms_norm (S, C)");
    same(cand->rms_norm(qkv, wd, 1e-6), prov->rms_norm(qkv, wd, 1e-6), "rms_norm (S, H, D)");
    same(cand->norm_modulate(x, w, 1e-5, scale, shift), prov->norm_modulate(x, w, 1e-5, scale, shift),
         "norm_modulate");
    const at::Tensor chunk = table.chunk(6, -1)[2];  // strided, as the graph passes it
    QVERIFY(test::bit_equal(cand->gather_rows(chunk, rows), prov->gather_rows(chunk, rows)));
    same(cand->rope(qkv, at::cos(angles), at::sin(angles)),
         prov->rope(qkv, at::cos(angles), at::sin(angles)), "rope");
    same(cand->gated_residual(x, scale, shift), prov->gated_residual(x, scale, shift), "gated_residual");
    same(cand->add(x, shift), prov->add(x, shift), "add");
    same(cand->timestep_sinusoid(t, 17), prov->timestep_sinusoid(t, 17), "timestep_sinusoid");
  }

 private slots:
  void name_is_candidate() { QCOMPARE(QString::fromStdString(kernels::make_candidate_ops()->name()), QString("candidate")); }

  void primitives_match_provider_bf16() { primitives_for(at::kBFloat16); }
  void primitives_match_provider_f32() { primitives_for(at::kFloat); }

  void refusals_name_the_primitive() {
    auto cand = kernels::make_candidate_ops();
    const at::Tensor half = at::ones({4, 8}, at::kHalf);
    const at::Tensor bf = at::ones({4, 8}, at::kBFloat16), f = at::ones({4, 8}, at::kFloat);
    QVERIFY(refuses([&] { cand->silu(half); }, "silu"));
    QVERIFY(refuses([&] { cand->add(bf, f); }, "add"));
    QVERIFY(refuses([&] { cand->linear(f, bf, std::nullopt); }, "linear"));
    QVERIFY(refuses([&] { cand->linear(f, at::ones({3, 7}), std::nullopt); }, "linear"));
    QVERIFY(refuses([&] { cand->swiglu(at::ones({4, 7})); }, "swiglu"));
    QVERIFY(refuses([&] { cand->gather_rows(f, at::tensor({0, 4}, at::kLong)); }, "gather_rows"));
    QVERIFY(refuses([&] { cand->gather_rows(f, at::tensor({-1}, at::kLong)); }, "gather_rows"));
    QVERIFY(refuses([&] { cand->gather_rows(f, at::tensor({0}, at::kInt)); }, "gather_rows"));
    const at::Tensor x = at::ones({2, 1, 8});
    QVERIFY(refuses([&] { cand->rope(x, at::ones({2, 3}), at::ones({2, 3})); }, "rope"));
    QVERIFY(refuses([&] { cand->rope(x, at::ones({2, 10}), at::ones({2, 10})); }, "rope"));
    QVERIFY(refuses([&] { cand->rms_norm(f, at::ones({7}), 1e-5); }, "rms_norm"));
    QVERIFY(refuses([&] { cand->norm_modulate(f, at::ones({8}), 1e-5, f, at::ones({4, 7})); },
                    "norm_modulate"));
    QVERIFY(refuses([&] { cand->attention(x, x, at::ones({2, 1, 4})); }, "attention"));
    QVERIFY(refuses([&] { cand->timestep_sinusoid(at::ones({3}, at::kDouble), 8); }, "timestep_sinusoid"));
  }

  // `candidate` against `provider` on the golden calls: fp32 ~4e-7 measured (bound 5e-6); mixed
  // ~1e-2 measured, the same size as the provider's own distance to diffusers on another torch
  // build (bound 2e-2, the provider parity bound).
  void candidate_close_to_provider_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("call");
    QTest::addColumn<double>("bound");
    QTest::newRow("fp32 A step 0") << "tiny-fp32" << "fp32-A-step0" << 5e-6;
    QTest::newRow("fp32 A step 30") << "tiny-fp32" << "fp32-A-step30" << 5e-6;
    QTest::newRow("fp32 B step 0") << "tiny-fp32" << "fp32-B-step0" << 5e-6;
    QTest::newRow("mixed A step 0") << "tiny-mixed" << "mixed-A-step0" << 2e-2;
    QTest::newRow("mixed B step 30") << "tiny-mixed" << "mixed-B-step30" << 2e-2;
  }
  void candidate_close_to_provider() {
    QFETCH(QString, model);
    QFETCH(QString, call);
    QFETCH(double, bound);
    const Golden g = load(model.toStdString(), call.toStdString());
    const model::CallOutputs want = run(g, "provider");
    const model::CallOutputs got = run(g, "candidate");
    const auto video = metrics::diff_tensors(got.sample, want.sample, "sample");
    const auto audio = metrics::diff_tensors(got.audio_sample, want.audio_sample, "audio_sample");
    qInfo("%s: candidate vs provider rel L2 sample %.3e audio_sample %.3e", qPrintable(call),
          video.rel_l2, audio.rel_l2);
    QVERIFY(video.finite && audio.finite);
    QVERIFY2(video.rel_l2 <= bound, qPrintable(QString::number(video.rel_l2)));
    QVERIFY2(audio.rel_l2 <= bound, qPrintable(QString::number(audio.rel_l2)));
    QVERIFY(got.sample.sizes() == want.sample.sizes() && got.sample.scalar_type() == at::kFloat);
    // Deterministic: a second call gives the same bytes.
    const model::CallOutputs again = run(g, "candidate");
    QVERIFY(test::bit_equal(again.sample, got.sample));
    QVERIFY(test::bit_equal(again.audio_sample, got.audio_sample));
    // For scale: both against the outputs diffusers wrote into the call file.
    auto file = io::SafetensorsFile::open(kGolden / "calls" / (call.toStdString() + ".safetensors"));
    if (auto saved = model::read_call_outputs(file)) {
      qInfo("%s: vs diffusers rel L2 sample candidate %.3e provider %.3e, audio_sample candidate "
            "%.3e provider %.3e",
            qPrintable(call), metrics::diff_tensors(got.sample, saved->sample, "sample").rel_l2,
            metrics::diff_tensors(want.sample, saved->sample, "sample").rel_l2,
            metrics::diff_tensors(got.audio_sample, saved->audio_sample, "audio").rel_l2,
            metrics::diff_tensors(want.audio_sample, saved->audio_sample, "audio").rel_l2);
    }
  }

  void all_provider_is_bitwise_provider_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("call");
    QTest::newRow("fp32") << "tiny-fp32" << "fp32-A-step30";
    QTest::newRow("mixed") << "tiny-mixed" << "mixed-B-step30";
  }
  void all_provider_is_bitwise_provider() {
    QFETCH(QString, model);
    QFETCH(QString, call);
    const Golden g = load(model.toStdString(), call.toStdString());
    const model::CallOutputs want = run(g, "provider");
    const model::CallOutputs got = run(g, "candidate:all=provider");
    QVERIFY(test::bit_equal(got.sample, want.sample));
    QVERIFY(test::bit_equal(got.audio_sample, want.audio_sample));
  }

  // Every group swapped back to the provider alone still runs and stays finite and close.
  void single_group_swaps_run() {
    for (const char* model_name : {"tiny-fp32", "tiny-mixed"}) {
      const bool fp32 = std::string(model_name) == "tiny-fp32";
      const Golden g = load(model_name, fp32 ? "fp32-B-step0" : "mixed-A-step0");
      const model::CallOutputs want = run(g, "provider");
      for (ops::Group group : ops::kAllGroups) {
        const std::string spec = "candidate:" + std::string(ops::group_name(group)) + "=provider";
        const model::CallOutputs got = run(g, spec);
        const auto video = metrics::diff_tensors(got.sample, want.sample, "sample");
        const auto audio = metrics::diff_tensors(got.audio_sample, want.audio_sample, "audio_sample");
        qInfo("%s %s: rel L2 sample %.3e audio_sample %.3e", model_name, spec.c_str(),
              video.rel_l2, audio.rel_l2);
        QVERIFY2(video.finite && audio.finite, spec.c_str());
        QVERIFY2(video.rel_l2 <= (fp32 ? 5e-6 : 2e-2), spec.c_str());
        QVERIFY2(audio.rel_l2 <= (fp32 ? 5e-6 : 2e-2), spec.c_str());
      }
    }
  }
};

QTEST_APPLESS_MAIN(CandidateOpsTest)
#include "test_candidate_ops.moc"
