// Conditioning: loading conditioning files (defaults, keyframe split, every refusal naming
// the file and the tensor) and the synthetic prompt conditioning.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <QTemporaryDir>
#include <QtTest>

#include <limits>

#include "core/common/error.h"
#include "core/io/aten_bridge.h"
#include "core/io/safetensors.h"
#include "core/sampling/conditioning.h"
#include "sampling_test_util.h"

using namespace h3p::sampling;
using namespace h3p::sampling::test;
namespace fs = std::filesystem;

class TestConditioning : public QObject {
  Q_OBJECT

 private slots:
  void loadsMinimalFile();
  void loadsTagsAndKeyframes();
  void refusalsNameFileAndTensor_data();
  void refusalsNameFileAndTensor();
  void missingFileRefused();
  void synthesisIsDeterministic();
  void synthesisRefusesBadSizes();

 private:
  QTemporaryDir tmp_;
  fs::path write(const char* name, const std::vector<h3p::io::NamedTensor>& tensors);
};

fs::path TestConditioning::write(const char* name,
                                 const std::vector<h3p::io::NamedTensor>& tensors) {
  const fs::path path = fs::path(tmp_.path().toStdString()) / name;
  std::vector<at::Tensor> holder;
  h3p::io::write_safetensors(path, h3p::io::make_records(tensors, holder));
  return path;
}

void TestConditioning::loadsMinimalFile() {
  at::manual_seed(fresh_seed("loadsMinimalFile"));
  const at::Tensor states = at::randn({1, 7, 48}).to(at::kBFloat16);
  const fs::path path = write("minimal.safetensors", {{"encoder_hidden_states", states}});
  const Conditioning c = load_conditioning(path, 48);
  H3P_VERIFY_BITS(c.encoder_hidden_states, states);
  H3P_VERIFY_BITS(c.text_token_tags, at::ones({7}, at::kLong));
  QVERIFY(c.keyframe_latents.empty());
  QCOMPARE(c.source, path.string());
}

void TestConditioning::loadsTagsAndKeyframes() {
  at::manual_seed(fresh_seed("loadsTagsAndKeyframes"));
  const at::Tensor states = at::randn({1, 5, 8}).to(at::kBFloat16);
  const at::Tensor tags = at::tensor(std::vector<int64_t>{1, 0, 0, 1, 1});
  const at::Tensor frames = at::randn({1, 24, 2, 4, 6});
  const fs::path path = write("full.safetensors", {{"encoder_hidden_states", states},
                                                   {"text_token_tags", tags},
                                                   {"keyframe_latents", frames}});
  const Conditioning c = load_conditioning(path, 8);
  H3P_VERIFY_BITS(c.text_token_tags, tags);
  QCOMPARE(c.keyframe_latents.size(), std::size_t{2});
  for (int64_t k = 0; k < 2; ++k) {
    H3P_VERIFY_BITS(c.keyframe_latents[k], frames.slice(2, k, k + 1).contiguous());
  }
}

void TestConditioning::refusalsNameFileAndTensor_data() {
  QTest::addColumn<QString>("case_name");
  QTest::addColumn<QString>("field");
  for (const char* name : {"missing_states", "states_f32", "states_wrong_dim", "states_rank2",
                           "states_batch2", "states_nan", "unknown_tensor", "tags_i32",
                           "tags_length", "tags_value", "keyframes_channels", "keyframes_odd",
                           "keyframes_f16", "keyframes_inf"}) {
    const QString n = QString::fromLatin1(name);
    const QString field = n.startsWith("missing") || n.startsWith("states")
                              ? "encoder_hidden_states"
                          : n.startsWith("tags")    ? "text_token_tags"
                          : n.startsWith("unknown") ? "extra"
                                                    : "keyframe_latents";
    QTest::newRow(name) << n << field;
  }
}

void TestConditioning::refusalsNameFileAndTensor() {
  QFETCH(QString, case_name);
  QFETCH(QString, field);
  const std::string c = case_name.toStdString();
  const at::Tensor good_states = at::zeros({1, 4, 8}, at::kBFloat16);
  std::vector<h3p::io::NamedTensor> tensors;
  if (c != "missing_states") {
    at::Tensor states = good_states;
    if (c == "states_f32") states = at::zeros({1, 4, 8});
    if (c == "states_wrong_dim") states = at::zeros({1, 4, 9}, at::kBFloat16);
    if (c == "states_rank2") states = at::zeros({4, 8}, at::kBFloat16);
    if (c == "states_batch2") states = at::zeros({2, 4, 8}, at::kBFloat16);
    if (c == "states_nan") {
      states = good_states.clone();
      states[0][1][2] = std::numeric_limits<float>::quiet_NaN();
    }
    tensors.push_back({"encoder_hidden_states", states});
  } else {
    tensors.push_back({"text_token_tags", at::ones({4}, at::kLong)});
  }
  if (c == "unknown_tensor") tensors.push_back({"extra", at::zeros({1})});
  if (c == "tags_i32") tensors.push_back({"text_token_tags", at::ones({4}, at::kInt)});
  if (c == "tags_length") tensors.push_back({"text_token_tags", at::ones({5}, at::kLong)});
  if (c == "tags_value") tensors.push_back({"text_token_tags", at::tensor(std::vector<int64_t>{1, 2, 0, 1})});
  if (c == "keyframes_channels") tensors.push_back({"keyframe_latents", at::zeros({1, 16, 1, 4, 4})});
  if (c == "keyframes_odd") tensors.push_back({"keyframe_latents", at::zeros({1, 24, 1, 3, 4})});
  if (c == "keyframes_f16") {
    tensors.push_back({"keyframe_latents", at::zeros({1, 24, 1, 4, 4}, at::kHalf)});
  }
  if (c == "keyframes_inf") {
    at::Tensor k = at::zeros({1, 24, 1, 4, 4});
    k[0][3][0][1][1] = std::numeric_limits<float>::infinity();
    tensors.push_back({"keyframe_latents", k});
  }
  const fs::path path = write((c + ".safetensors").c_str(), tensors);
  try {
    load_conditioning(path, 8);
    QFAIL("accepted a bad conditioning file");
  } catch (const h3p::InputError& e) {
    const QString message = QString::fromUtf8(e.what());
    QVERIFY2(message.contains(QString::fromStdString(path.string())), e.what());
    QVERIFY2(message.contains(field), e.what());
  }
}

void TestConditioning::missingFileRefused() {
  const fs::path path = fs::path(tmp_.path().toStdString()) / "absent.safetensors";
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, load_conditioning(path, 8));
  const fs::path ok = write("ok.safetensors", {{"encoder_hidden_states",
                                                at::zeros({1, 2, 8}, at::kBFloat16)}});
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, load_conditioning(ok, 0));
}

void TestConditioning::synthesisIsDeterministic() {
  const Conditioning a = synthesize_conditioning("a red fox in snow", 12, 48);
  const Conditioning b = synthesize_conditioning("a red fox in snow", 12, 48);
  QCOMPARE(a.encoder_hidden_states.scalar_type(), at::kBFloat16);
  QCOMPARE(a.encoder_hidden_states.sizes(), (at::IntArrayRef{1, 12, 48}));
  H3P_VERIFY_BITS(a.encoder_hidden_states, b.encoder_hidden_states);
  H3P_VERIFY_BITS(a.text_token_tags, at::ones({12}, at::kLong));
  QVERIFY(a.keyframe_latents.empty());
  QVERIFY(a.source.rfind("synthetic:sha256=", 0) == 0);
  const Conditioning c = synthesize_conditioning("a red fox in snow.", 12, 48);
  QVERIFY(!bit_equal(a.encoder_hidden_states, c.encoder_hidden_states));
  // Seed: the first 8 bytes of SHA-256, big-endian; SHA-256("") = e3b0c44298fc1c14...
  QCOMPARE(prompt_seed(""), uint64_t{0xe3b0c44298fc1c14ull});
  // Drawn as randn (1, L, D) fp32 on a CPU generator with that seed, then cast to bf16.
  at::Generator g = at::detail::createCPUGenerator(prompt_seed("a red fox in snow"));
  const at::Tensor expected =
      at::randn({1, 12, 48}, g, at::TensorOptions().dtype(at::kFloat)).to(at::kBFloat16);
  H3P_VERIFY_BITS(a.encoder_hidden_states, expected);
}

void TestConditioning::synthesisRefusesBadSizes() {
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, synthesize_conditioning("x", 0, 48));
  QVERIFY_THROWS_EXCEPTION(h3p::InputError, synthesize_conditioning("x", 4, 0));
}

QTEST_APPLESS_MAIN(TestConditioning)
#include "test_conditioning.moc"
