// Loading model directories: configs and parameter tables, init-model presets, refusals.
#include <ATen/ATen.h>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include "tests/core/model/model_test_util.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/aten_bridge.h"
#include "core/model/init_model.h"
#include "core/model/transformer.h"
#include "core/model/weights.h"

using namespace h3p;
using test::expect_input_error;
using test::temp_dir;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(H3P_SOURCE_DIR) / "tests/data/golden";

}  // namespace

class ModelLoading : public QObject {
  Q_OBJECT
 private slots:
  void loads_diffusers_directory_with_stored_dtypes() {
    auto m = model::load_transformer(kGolden / "tiny-mixed" / "transformer", at::kCPU);
    QCOMPARE(m.config.hidden_size, 48);
    QCOMPARE(m.weights.blocks.size(), std::size_t(2));
    QCOMPARE(m.weights.proj_in_w.scalar_type(), at::kFloat);
    QCOMPARE(m.weights.blocks[0].attn.to_q.scalar_type(), at::kBFloat16);
    QCOMPARE(m.weights.time_linear_1_w.scalar_type(), at::kFloat);
  }

  void attention_dtype_is_the_projections_not_the_input_layers() {
    // The released layout stores proj_in in fp32 and the blocks in bf16: attention runs in bf16
    // (what the numerics environment's SDPA probe must ask about), fp32 in an all-fp32 model.
    auto mixed = model::load_transformer(kGolden / "tiny-mixed" / "transformer", at::kCPU);
    QCOMPARE(mixed.weights.proj_in_w.scalar_type(), at::kFloat);
    QCOMPARE(model::Transformer(mixed.config, mixed.weights).attention_dtype(), at::kBFloat16);
    auto fp32 = model::load_transformer(kGolden / "tiny-fp32" / "transformer", at::kCPU);
    QCOMPARE(model::Transformer(fp32.config, fp32.weights).attention_dtype(), at::kFloat);
  }

  void parameter_table_matches_diffusers_checkpoint() {
    // Every name and shape diffusers saved is in the table and nothing else.
    auto file = io::SafetensorsFile::open(kGolden / "tiny-fp32/transformer/diffusion_pytorch_model.safetensors");
    auto config = model::load_transformer_config(kGolden / "tiny-fp32/transformer/config.json");
    auto specs = model::parameter_specs(config);
    QCOMPARE(specs.size(), file.tensors().size());
    for (const auto& spec : specs) {
      const io::TensorInfo* info = file.find(spec.name);
      QVERIFY2(info != nullptr, spec.name.c_str());
      QCOMPARE(info->shape, spec.shape);
    }
    auto mixed = io::SafetensorsFile::open(kGolden / "tiny-mixed/transformer/diffusion_pytorch_model.safetensors");
    for (const auto& spec : specs) QCOMPARE(mixed.at(spec.name).dtype, spec.checkpoint_dtype);
  }

  void block_qkv_are_rows_of_one_allocation_with_the_stored_values() {
    // The fused QKV GEMM reads the three projections in place: one (3·inner, hidden) view whose
    // row blocks are the stored to_q, to_k, to_v, bit for bit.
    const fs::path dir = kGolden / "tiny-mixed" / "transformer";
    auto m = model::load_transformer(dir, at::kCPU);
    auto file = io::SafetensorsFile::open(dir / "diffusion_pytorch_model.safetensors");
    for (std::size_t i = 0; i < m.weights.blocks.size(); ++i) {
      const model::AttentionWeights& a = m.weights.blocks[i].attn;
      const at::Tensor qkv = model::stacked_qkv(a);
      QVERIFY2(qkv.defined(), "block q/k/v are not one allocation");
      QCOMPARE(qkv.size(0), 3 * a.to_q.size(0));
      QCOMPARE(qkv.data_ptr(), a.to_q.data_ptr());
      const std::string p = "transformer_blocks." + std::to_string(i) + ".attn.";
      std::vector<at::Tensor> stored;
      for (const char* name : {"to_q", "to_k", "to_v"}) {
        stored.push_back(io::load_tensor(file, file.at(p + name + ".weight")));
      }
      QVERIFY(at::equal(qkv, at::cat(stored, 0)));
      QVERIFY(at::equal(a.to_k, stored[1]));
    }
    // Anything that replaces one of the three (an upcast, a swap) is no longer read in place.
    model::AttentionWeights replaced = m.weights.blocks[0].attn;
    replaced.to_k = replaced.to_k.clone();
    QVERIFY(!model::stacked_qkv(replaced).defined());
    model::AttentionWeights upcast = m.weights.blocks[0].attn;
    upcast.to_v = upcast.to_v.to(at::kFloat);
    QVERIFY(!model::stacked_qkv(upcast).defined());
    // Separate allocations are never mistaken for one.
    const model::AttentionWeights apart{at::ones({4, 8}), at::ones({4, 8}), at::ones({4, 8}),
                                        {}, {}, {}};
    QVERIFY(!model::stacked_qkv(apart).defined());
  }

  void init_model_writes_loadable_checkpoint_dtypes() {
    fs::path dir = temp_dir("init");
    model::InitModelParams params;
    params.preset = model::find_preset("tiny");
    params.seed = 7;
    auto tdir = model::init_model(dir, params);
    auto m = model::load_transformer(tdir, at::kCPU);
    QCOMPARE(m.weights.blocks[1].adaln_weight.scalar_type(), at::kBFloat16);
    QCOMPARE(m.weights.audio_proj_out_w.scalar_type(), at::kFloat);
    // Deterministic: the same seed writes the same bytes.
    fs::path dir2 = temp_dir("init2");
    model::init_model(dir2, params);
    QCOMPARE(io::read_file(tdir / "diffusion_pytorch_model.safetensors"),
             io::read_file(dir2 / "transformer/diffusion_pytorch_model.safetensors"));
    fs::remove_all(dir);
    fs::remove_all(dir2);
  }

  void loads_sharded_directory_like_single_file() {
    // Split the golden checkpoint into two shards with a diffusers index; the loaded weights
    // must equal the single-file ones bit for bit.
    const fs::path src = kGolden / "tiny-mixed/transformer";
    fs::path dir = temp_dir("sharded");
    fs::copy_file(src / "config.json", dir / "config.json");
    auto file = io::SafetensorsFile::open(src / "diffusion_pytorch_model.safetensors");
    std::vector<io::NamedTensor> shard[2];
    nlohmann::json map = nlohmann::json::object();
    for (std::size_t i = 0; i < file.tensors().size(); ++i) {
      const auto& info = file.tensors()[i];
      const int k = i % 2;
      shard[k].push_back({info.name, io::load_tensor(file, info)});
      map[info.name] = "diffusion_pytorch_model-0000" + std::to_string(k + 1) + "-of-00002.safetensors";
    }
    for (int k = 0; k < 2; ++k) {
      std::vector<at::Tensor> holder;
      io::write_safetensors(dir / ("diffusion_pytorch_model-0000" + std::to_string(k + 1) +
                                   "-of-00002.safetensors"),
                            io::make_records(shard[k], holder));
    }
    io::atomic_write_text(dir / "diffusion_pytorch_model.safetensors.index.json",
                          nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump());
    auto sharded = model::load_transformer(dir, at::kCPU);
    auto single = model::load_transformer(src, at::kCPU);
    QVERIFY(at::equal(sharded.weights.blocks[1].ff.out, single.weights.blocks[1].ff.out));
    QVERIFY(at::equal(sharded.weights.proj_out_w, single.weights.proj_out_w));
    QCOMPARE(sharded.weights.refiner[0].attn.to_v.scalar_type(), at::kBFloat16);
    fs::remove_all(dir);
  }

  void refuses_missing_and_unexpected_parameters() {
    auto config = model::find_preset("tiny").config;
    std::map<std::string, at::Tensor> tensors;
    for (const auto& spec : model::parameter_specs(config)) tensors[spec.name] = at::zeros(spec.shape);
    auto missing = tensors;
    missing.erase("transformer_blocks.1.ff.net.2.weight");
    expect_input_error([&] { model::assemble_weights(config, missing, "dir"); },
                       "missing parameter 'transformer_blocks.1.ff.net.2.weight'");
    auto extra = tensors;
    extra["transformer_blocks.2.norm1.weight"] = at::zeros({48});
    expect_input_error([&] { model::assemble_weights(config, extra, "dir"); },
                       "unexpected parameter 'transformer_blocks.2.norm1.weight'");
    auto wrong = tensors;
    wrong["proj_in.weight"] = at::zeros({48, 95});
    expect_input_error([&] { model::assemble_weights(config, wrong, "dir"); },
                       "parameter 'proj_in.weight' has shape");
  }

  void refuses_bad_config_naming_the_field() {
    fs::path dir = temp_dir("cfg");
    auto json = model::transformer_config_to_json(model::find_preset("tiny").config);
    json["rope_freq_dim"] = 64;  // 6*64 > head_dim 32
    io::atomic_write_text(dir / "config.json", json.dump());
    expect_input_error([&] { model::load_transformer_config(dir / "config.json"); },
                       "field 'rope_freq_dim'");
    json = model::transformer_config_to_json(model::find_preset("tiny").config);
    json["hidden_sise"] = 3;
    io::atomic_write_text(dir / "config.json", json.dump());
    expect_input_error([&] { model::load_transformer_config(dir / "config.json"); },
                       "unknown field 'hidden_sise'");
    io::atomic_write_text(dir / "config.json", "{ not json");
    expect_input_error([&] { model::load_transformer_config(dir / "config.json"); },
                       "not valid JSON");
    fs::remove_all(dir);
  }
};

QTEST_APPLESS_MAIN(ModelLoading)
#include "test_model_loading.moc"
