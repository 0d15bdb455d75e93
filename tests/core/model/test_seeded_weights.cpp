// Seeded weights: the draw rule against a scalar reference of its written definition, its
// statistics and independence, seed records, and models that load from them.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include <cmath>
#include <cstring>

#include "tests/core/model/model_test_util.h"
#include "core/io/atomic_file.h"
#include "core/io/seed_record.h"
#include "core/model/init_model.h"
#include "core/model/seeded_weights.h"
#include "core/model/vae_weights.h"
#include "core/model/weights.h"

using namespace h3p;
using test::expect_input_error;
using test::temp_dir;
namespace fs = std::filesystem;

namespace {

// The rule as seeded_weights.h states it, in plain 64-bit unsigned arithmetic.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

float reference_value(uint64_t seed, const std::string& stream, uint64_t i) {
  constexpr uint64_t gamma = 0x9E3779B97F4A7C15ULL;
  uint64_t fnv = 0xCBF29CE484222325ULL;
  for (unsigned char c : stream) fnv = (fnv ^ c) * 0x100000001B3ULL;
  const uint64_t key = mix(seed + gamma) ^ fnv;
  const uint64_t h0 = mix(key + (2 * i + 1) * gamma);
  const uint64_t h1 = mix(key + (2 * i + 2) * gamma);
  auto field = [](uint64_t h, int low) {
    return static_cast<float>((h >> low) & 0xFFFFFF) * (1.0f / 16777216.0f);
  };
  float sum = field(h0, 40) + field(h0, 16);
  sum = sum + field(h1, 40);
  sum = sum + field(h1, 16);
  return (sum - 2.0f) * static_cast<float>(std::sqrt(3.0));
}

bool bitwise_equal(const at::Tensor& a, const at::Tensor& b) {
  return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() &&
         std::memcmp(a.contiguous().data_ptr(), b.contiguous().data_ptr(), a.nbytes()) == 0;
}

}  // namespace

class SeededWeights : public QObject {
  Q_OBJECT
 private slots:
  void draws_follow_the_stated_rule_bit_for_bit() {
    const at::Tensor t = model::seeded_unit_normal({3, 7, 5}, 1234, "blocks.0.w", at::kCPU);
    QCOMPARE(t.scalar_type(), at::kFloat);
    const float* v = t.data_ptr<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float want = reference_value(1234, "blocks.0.w", static_cast<uint64_t>(i));
      QVERIFY2(std::memcmp(&v[i], &want, sizeof want) == 0,
               qPrintable(QString("element %1: %2 vs %3").arg(i).arg(v[i]).arg(want)));
    }
  }

  void an_element_does_not_depend_on_the_tensor_size_or_the_chunking() {
    // 9M elements cross the 8M-element chunk boundary; the first 1000 equal a small draw.
    const at::Tensor big = model::seeded_unit_normal({9'000'000}, 7, "s", at::kCPU);
    const at::Tensor small = model::seeded_unit_normal({1000}, 7, "s", at::kCPU);
    QVERIFY(bitwise_equal(big.narrow(0, 0, 1000), small));
    const int64_t at_chunk = int64_t{1} << 23;
    const float want = reference_value(7, "s", static_cast<uint64_t>(at_chunk));
    QCOMPARE(big[at_chunk].item<float>(), want);
    // Unit variance, zero mean, bounded by the rule's range.
    QVERIFY(std::abs(big.mean().item<double>()) < 2e-3);
    QVERIFY(std::abs(big.var().item<double>() - 1.0) < 3e-3);
    QVERIFY(big.abs().max().item<float>() <= 2.0f * std::sqrt(3.0f));
  }

  void streams_and_seeds_are_independent() {
    const at::Tensor a = model::seeded_unit_normal({100000}, 7, "a", at::kCPU);
    const at::Tensor b = model::seeded_unit_normal({100000}, 7, "b", at::kCPU);
    const at::Tensor c = model::seeded_unit_normal({100000}, 8, "a", at::kCPU);
    QVERIFY(std::abs((a * b).mean().item<double>()) < 0.02);
    QVERIFY(std::abs((a * c).mean().item<double>()) < 0.02);
    QVERIFY(bitwise_equal(a, model::seeded_unit_normal({100000}, 7, "a", at::kCPU)));
  }

  void a_seeded_model_loads_with_checkpoint_dtypes_and_the_param_rule() {
    const fs::path dir = temp_dir("seeded");
    model::InitModelParams params;
    params.preset = model::find_preset("tiny");
    params.seed = 11;
    params.seeded_weights = true;
    const fs::path tdir = model::init_model(dir, params);
    QVERIFY(!fs::exists(tdir / "diffusion_pytorch_model.safetensors"));
    QVERIFY(fs::file_size(tdir / io::kSeedRecordFile) < 512);
    const auto m = model::load_transformer(tdir, at::kCPU);
    QCOMPARE(m.weights.proj_in_w.scalar_type(), at::kFloat);
    QCOMPARE(m.weights.blocks[1].attn.to_q.scalar_type(), at::kBFloat16);
    // A weight is its unit draw scaled by 1/sqrt(fan_in), then rounded to the stored dtype.
    const auto specs = model::parameter_specs(m.config);
    const auto spec = std::find_if(specs.begin(), specs.end(), [](const model::ParamSpec& s) {
      return s.name == "transformer_blocks.1.attn.to_q.weight";
    });
    QVERIFY(spec != specs.end());
    const at::Tensor want =
        model::param_value(*spec, model::seeded_unit_normal(spec->shape, 11, spec->name, at::kCPU))
            .to(at::kBFloat16);
    QVERIFY(bitwise_equal(m.weights.blocks[1].attn.to_q, want));
    // Decoders: every decoder tensor drawn, none of the encoder's.
    const auto vae = model::load_decoder_tensors(
        dir / "vae", model::video_vae_parameter_specs(model::load_video_vae_config(dir / "vae/config.json")),
        at::kCPU);
    QVERIFY(!vae.empty());
    for (const auto& [name, tensor] : vae) QVERIFY2(!name.starts_with("encoder."), name.c_str());
    fs::remove_all(dir);
  }

  void seed_records_are_checked_and_kinds_are_not_mixed() {
    const fs::path dir = temp_dir("records");
    io::atomic_write_text(dir / io::kSeedRecordFile, "{\"format\": \"h3parity-seeded-weights\"}");
    expect_input_error([&] { io::read_seed_record(dir); }, "field 'rule': missing");
    io::atomic_write_text(dir / io::kSeedRecordFile,
                          R"({"format": "h3parity-seeded-weights", "rule": "other", "seed": 1})");
    expect_input_error([&] { io::read_seed_record(dir); }, "is not a rule this build draws");
    io::atomic_write_text(dir / io::kSeedRecordFile,
                          R"({"format": "h3parity-seeded-weights", "rule": "splitmix64-irwin-hall4-v1", "seed": -1})");
    expect_input_error([&] { io::read_seed_record(dir); }, "field 'seed'");
    io::atomic_write_text(dir / io::kSeedRecordFile, "{not json");
    expect_input_error([&] { io::read_seed_record(dir); }, "not valid JSON");

    // Writing weight files over a seeded model (or the reverse) is refused.
    const fs::path model_dir = temp_dir("mixed");
    model::InitModelParams params;
    params.preset = model::find_preset("tiny");
    params.decoders = "none";
    params.seeded_weights = true;
    model::init_model(model_dir, params);
    params.seeded_weights = false;
    expect_input_error([&] { model::init_model(model_dir, params); }, "holds a seed record");
    fs::remove_all(dir);
    fs::remove_all(model_dir);
  }
};

QTEST_APPLESS_MAIN(SeededWeights)
#include "test_seeded_weights.moc"
