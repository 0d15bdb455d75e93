// The candidate plugin ABI: plugin impl specs, the loader's refusals (one misbehaving library
// per broken rule), what a plugin's bad output turns into, the per-group contract against the
// graph, and the numerics of the shipped plugins on the golden diffusers calls: the built-in
// candidate through the ABI is bitwise the candidate, the plain-loops example is within 1e-5
// of the provider on the fp32 model and within the bf16 tolerance on the mixed one.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "core/common/error.h"
#include "core/io/safetensors.h"
#include "core/metrics/tensor_diff.h"
#include "core/model/call_file.h"
#include "core/model/transformer.h"
#include "core/ops/group_ops.h"
#include "core/ops/impl_spec.h"
#include "core/ops/plugin/plugin_contract.h"
#include "core/ops/plugin/plugin_library.h"
#include "core/ops/provider_ops.h"
#include "kernels/candidate_ops.h"

using namespace h3p;
using ops::Group;
using ops::Impl;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(H3P_SOURCE_DIR) / "tests/data/golden";

std::string misbehaving(const std::string& way) {
  return (fs::path(H3P_MISBEHAVING_DIR) / ("libmisbehaving_" + way + ".so")).string();
}
std::string shipped(const std::string& name) {
  return (fs::path(H3P_PLUGIN_DIR) / ("lib" + name + ".so")).string();
}

// The InputError message of `body`, or a failure when it does not throw one.
template <typename Body>
std::string refusal(Body body) {
  try {
    body();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

#define EXPECT_IN(haystack, needle)                                                   \
  QVERIFY2(std::string(haystack).find(needle) != std::string::npos,                   \
           qPrintable(QString::fromStdString(std::string(haystack) + "\n  lacks: " + needle)))

struct Golden {
  model::Transformer transformer;
  model::CallInputs inputs;
};

Golden golden(const std::string& model, const std::string& call) {
  auto loaded = model::load_transformer(kGolden / model / "transformer", at::kCPU);
  auto file = io::SafetensorsFile::open(kGolden / "calls" / (call + ".safetensors"));
  return {model::Transformer(loaded.config, std::move(loaded.weights)), model::read_call_inputs(file)};
}

model::CallOutputs run(const Golden& g, const std::string& spec) {
  return g.transformer.forward(
      g.inputs, ops::resolve_group_ops(ops::ImplSpec::parse(spec), kernels::make_candidate_ops()));
}

// Records which primitives each group's call sites invoke, computing with the provider.
class RecordingOps final : public ops::OpSet {
 public:
  RecordingOps(std::set<std::string>& seen) : seen_(seen), p_(ops::make_provider_ops()) {}
  std::string name() const override { return "recording"; }
  at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& b) const override {
    seen_.insert("linear");
    return p_->linear(x, w, b);
  }
  at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) const override {
    seen_.insert("attention");
    return p_->attention(q, k, v);
  }
  at::Tensor swiglu(const at::Tensor& h) const override { seen_.insert("swiglu"); return p_->swiglu(h); }
  at::Tensor silu(const at::Tensor& x) const override { seen_.insert("silu"); return p_->silu(x); }
  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps) const override {
    seen_.insert("rms_norm");
    return p_->rms_norm(x, w, eps);
  }
  at::Tensor norm_modulate(const at::Tensor& x, const at::Tensor& w, double eps, const at::Tensor& s,
                           const at::Tensor& sh) const override {
    seen_.insert("norm_modulate");
    return p_->norm_modulate(x, w, eps, s, sh);
  }
  at::Tensor gather_rows(const at::Tensor& t, const at::Tensor& r) const override {
    seen_.insert("gather_rows");
    return p_->gather_rows(t, r);
  }
  at::Tensor rope(const at::Tensor& x, const at::Tensor& c, const at::Tensor& s) const override {
    seen_.insert("rope");
    return p_->rope(x, c, s);
  }
  at::Tensor gated_residual(const at::Tensor& x, const at::Tensor& g, const at::Tensor& y) const override {
    seen_.insert("gated_residual");
    return p_->gated_residual(x, g, y);
  }
  at::Tensor add(const at::Tensor& x, const at::Tensor& y) const override { seen_.insert("add"); return p_->add(x, y); }
  at::Tensor timestep_sinusoid(const at::Tensor& t, int64_t dim) const override {
    seen_.insert("timestep_sinusoid");
    return p_->timestep_sinusoid(t, dim);
  }

 private:
  std::set<std::string>& seen_;
  ops::OpSetPtr p_;
};

}  // namespace

class PluginTest : public QObject {
  Q_OBJECT
 private slots:
  void cleanup() { ops::plugin::set_check_mode(false); }

  void spec_grammar() {
    auto s = ops::ImplSpec::parse("plugin:/opt/k/libk.so");
    QVERIFY(s.base == Impl::plugin && s.plugin.kind == ops::PluginKind::library);
    QCOMPARE(QString::fromStdString(s.plugin.ref), QString("/opt/k/libk.so"));
    for (Group g : ops::kAllGroups) QVERIFY(s.choice(g).impl == Impl::plugin);
    QVERIFY(s.uses_plugin() && !s.uses_candidate() && !s.rest);

    s = ops::ImplSpec::parse("plugin:libk.so:rest=provider,attention=flash");
    QVERIFY(s.rest && s.rest->impl == Impl::provider);
    QVERIFY(s.choice(Group::attention).impl == Impl::provider);
    QCOMPARE(QString::fromStdString(s.choice(Group::attention).backend), QString("flash"));
    QVERIFY(s.choice(Group::gemm).impl == Impl::plugin);

    s = ops::ImplSpec::parse("python:kern.py:all=provider,gemm=plugin");
    QVERIFY(s.plugin.kind == ops::PluginKind::python);
    QVERIFY(s.choice(Group::gemm).impl == Impl::plugin);
    QVERIFY(s.choice(Group::head).impl == Impl::provider);
    QVERIFY(!ops::ImplSpec::parse("plugin:k.so:all=provider").uses_plugin());
    QCOMPARE(QString::fromStdString(ops::ImplSpec::parse("plugin:k.so").with_override("gemm=provider")),
             QString("plugin:k.so:gemm=provider"));
    QCOMPARE(QString::fromStdString(ops::ImplSpec::parse("plugin:k.so:rest=provider").with_override("gemm=provider")),
             QString("plugin:k.so:rest=provider,gemm=provider"));
  }

  void spec_refusals() {
    EXPECT_IN(refusal([] { ops::ImplSpec::parse("plugin"); }), "needs a reference");
    EXPECT_IN(refusal([] { ops::ImplSpec::parse("plugin:"); }), "reference is empty");
    EXPECT_IN(refusal([] { ops::ImplSpec::parse("candidate:rest=provider"); }), "'rest' is for plugin specs");
    EXPECT_IN(refusal([] { ops::ImplSpec::parse("candidate:gemm=plugin"); }), "unknown value 'plugin'");
    EXPECT_IN(refusal([] { ops::ImplSpec::parse("plugin:k.so:rest=plugin"); }), "unknown value 'plugin'");
    EXPECT_IN(refusal([] { ops::ImplSpec::parse("plugin:k.so:rest=provider,rest=candidate"); }),
              "'rest' is named twice");
    EXPECT_IN(refusal([] { ops::ImplSpec::parse("plugin:a,b.so"); }), "must not contain ','");
  }

  void loader_refusals_data() {
    QTest::addColumn<QString>("way");
    QTest::addColumn<QString>("needle");
    QTest::newRow("no entry point") << "no_entry" << "no entry point 'h3p_candidate_plugin'";
    QTest::newRow("entry refuses") << "refuses_host" << "its entry point refused this h3parity";
    QTest::newRow("other ABI major") << "wrong_abi" << "abi_version 2.0 is not supported: this h3parity speaks plugin ABI 1.x";
    QTest::newRow("create fails") << "create_fails" << "create failed (status 1): no licence for this GPU (simulated)";
    QTest::newRow("group lacks a primitive") << "missing_prim" << "group 'adaln' is provided but lacks gather_rows";
  }
  void loader_refusals() {
    QFETCH(QString, way);
    QFETCH(QString, needle);
    const std::string path = misbehaving(way.toStdString());
    const std::string message = refusal([&] { ops::plugin::load_plugin({ops::PluginKind::library, path}); });
    EXPECT_IN(message, needle.toStdString());
    EXPECT_IN(message, path);
  }

  void missing_library_and_name_lookup() {
    EXPECT_IN(refusal([] { ops::plugin::find_plugin_library("/nonexistent/libk.so"); }), "not found");
    const std::string message = refusal([] { ops::plugin::find_plugin_library("no_such_plugin"); });
    EXPECT_IN(message, "no plugin library named 'no_such_plugin'");
    EXPECT_IN(message, "H3P_PLUGIN_PATH");
    // setenv, not qputenv: a QByteArray helper instantiated here would interpose the Qt 5
    // library Debian's LibTorch drags in (through OpenCV) in the unoptimised sanitizer build.
    ::setenv("H3P_PLUGIN_PATH", (std::string("/nonexistent:") + H3P_MISBEHAVING_DIR).c_str(), 1);
    QCOMPARE(QString::fromStdString(ops::plugin::find_plugin_library("misbehaving_attention_only").string()),
             QString::fromStdString(fs::canonical(misbehaving("attention_only")).string()));
    ::unsetenv("H3P_PLUGIN_PATH");
  }

  void groups_not_provided_are_listed() {
    const std::string spec = "plugin:" + misbehaving("attention_only");
    const std::string message = refusal([&] {
      ops::resolve_group_ops(ops::ImplSpec::parse(spec), nullptr);
    });
    EXPECT_IN(message, "does not provide these groups: gemm swiglu adaln qk_norm rope norm residual embed head");
    EXPECT_IN(message, spec + ":rest=provider");
  }

  void partial_plugin_with_rest_runs() {
    const Golden g = golden("tiny-mixed", "mixed-A-step0");
    const auto provider = run(g, "provider");
    const auto partial = run(g, "plugin:" + misbehaving("attention_only") + ":rest=provider");
    const auto d = metrics::diff_tensors(partial.sample, provider.sample, "sample");
    qInfo("attention-only plugin vs provider: rel L2 %.3e", d.rel_l2);
    QVERIFY(d.finite && d.rel_l2 > 0 && d.rel_l2 <= 2e-2);
    const auto back = run(g, "plugin:" + misbehaving("attention_only") + ":rest=provider,attention=provider");
    QVERIFY(at::equal(back.sample, provider.sample) && at::equal(back.audio_sample, provider.audio_sample));
  }

  void bad_outputs_data() {
    QTest::addColumn<QString>("way");
    QTest::addColumn<bool>("check");
    QTest::addColumn<QString>("needle");
    QTest::newRow("error status") << "error_status" << false
                                  << "group 'attention': attention: returned status 1: attention kernel: launch failed (simulated)";
    QTest::newRow("NaN output (check)") << "nan_output" << true << "holds NaN or Inf";
    QTest::newRow("writes outside (check)") << "writes_outside" << true << "wrote outside its output";
    QTest::newRow("writes its input (check)") << "writes_input" << true << "wrote into its 1st input";
    QTest::newRow("leaves an element (check)") << "leaves_unwritten" << true << "did not write";
  }
  void bad_outputs() {
    QFETCH(QString, way);
    QFETCH(bool, check);
    QFETCH(QString, needle);
    ops::plugin::set_check_mode(check);
    const Golden g = golden("tiny-fp32", "fp32-A-step0");
    const std::string message = refusal([&] { run(g, "plugin:" + misbehaving(way.toStdString()) + ":rest=provider"); });
    EXPECT_IN(message, needle.toStdString());
    EXPECT_IN(message, "misbehaving-" + way.toStdString());
  }

  void contract_matches_the_graph() {
    const Golden g = golden("tiny-mixed", "mixed-B-step30");
    for (Group group : ops::kAllGroups) {
      std::set<std::string> seen;
      std::array<ops::OpSetPtr, ops::kGroupCount> per_group;
      for (Group other : ops::kAllGroups) {
        per_group[static_cast<std::size_t>(other)] =
            other == group ? ops::OpSetPtr(std::make_shared<RecordingOps>(seen)) : ops::make_provider_ops();
      }
      g.transformer.forward(g.inputs, ops::GroupOps(per_group));
      std::set<std::string> expected;
      for (auto p : ops::plugin::group_primitives(group)) expected.emplace(ops::plugin::primitive_name(p));
      QVERIFY2(seen == expected, ops::group_name(group).data());
    }
    const std::string md = ops::plugin::contract_markdown();
    EXPECT_IN(md, "| `adaln` | `linear`, `silu`, `gather_rows` |");
  }

  void builtin_candidate_through_the_abi_is_bitwise_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("call");
    QTest::newRow("fp32") << "tiny-fp32" << "fp32-B-step0";
    QTest::newRow("mixed") << "tiny-mixed" << "mixed-B-step30";
  }
  void builtin_candidate_through_the_abi_is_bitwise() {
    QFETCH(QString, model);
    QFETCH(QString, call);
    const Golden g = golden(model.toStdString(), call.toStdString());
    const auto direct = run(g, "candidate");
    const auto abi = run(g, "plugin:" + shipped("h3p_candidate"));
    QVERIFY(at::equal(direct.sample, abi.sample));
    QVERIFY(at::equal(direct.audio_sample, abi.audio_sample));
    ops::plugin::set_check_mode(true);  // the guards and input checks find nothing either
    const auto checked = run(g, "plugin:" + shipped("h3p_candidate") + ":embed=plugin");
    QVERIFY(at::equal(direct.sample, checked.sample));
    const auto back = run(g, "plugin:" + shipped("h3p_candidate") + ":all=provider");
    QVERIFY(at::equal(back.sample, run(g, "provider").sample));
  }

  void plain_loops_example_matches_the_provider_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("call");
    QTest::addColumn<double>("bound");
    QTest::newRow("fp32") << "tiny-fp32" << "fp32-A-step30" << 1e-5;
    QTest::newRow("mixed") << "tiny-mixed" << "mixed-A-step0" << 2e-2;
  }
  void plain_loops_example_matches_the_provider() {
    QFETCH(QString, model);
    QFETCH(QString, call);
    QFETCH(double, bound);
    if (!fs::exists(shipped("h3p_plain_loops"))) QSKIP("plain-loops example not built");
    const Golden g = golden(model.toStdString(), call.toStdString());
    const auto provider = run(g, "provider");
    const auto plain = run(g, "plugin:" + shipped("h3p_plain_loops"));
    const auto v = metrics::diff_tensors(plain.sample, provider.sample, "sample");
    const auto a = metrics::diff_tensors(plain.audio_sample, provider.audio_sample, "audio");
    qInfo("plain-loops vs provider (%s): video %.3e audio %.3e", qPrintable(model), v.rel_l2, a.rel_l2);
    QVERIFY(v.finite && a.finite);
    QVERIFY(v.rel_l2 <= bound && a.rel_l2 <= bound);
  }

  void identity_records_the_bytes() {
    const auto plugin = ops::plugin::load_plugin({ops::PluginKind::library, shipped("h3p_candidate")});
    const auto& id = plugin->identity();
    QCOMPARE(QString::fromStdString(id.name), QString("h3p-candidate"));
    QCOMPARE(id.groups.size(), ops::kGroupCount);
    QCOMPARE(QString::fromStdString(id.library_sha256).size(), 64);
    auto changed = id;
    changed.library_sha256[0] = changed.library_sha256[0] == '0' ? '1' : '0';
    EXPECT_IN(ops::plugin::first_identity_difference(id, changed), "library_sha256");
    const auto round = ops::plugin::plugin_identity_from_json(ops::plugin::plugin_identity_to_json(id), "x");
    QVERIFY(round == id);
    EXPECT_IN(refusal([] { ops::plugin::plugin_identity_from_json({{"kind", "library"}}, "m.json"); }),
              "m.json: field 'plugin.library': missing");
  }
};

QTEST_GUILESS_MAIN(PluginTest)
#include "test_plugin.moc"
