#include "core/model/init_model.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/aten_bridge.h"
#include "core/model/init_decoders.h"
#include "core/model/seeded_weights.h"
#include "core/model/weights.h"

namespace h3p::model {

void refuse_other_weights(const std::filesystem::path& component_dir, bool seeded) {
  namespace fs = std::filesystem;
  std::error_code error;
  const bool has_record = fs::exists(component_dir / io::kSeedRecordFile, error);
  bool has_files = false;
  for (auto it = fs::directory_iterator(component_dir, error);
       !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    has_files = has_files || name.ends_with(".safetensors") ||
                name.ends_with(".safetensors.index.json");
  }
  if (seeded && has_files) {
    throw_input(component_dir.string(), "holds weight files; seeded weights go in a new directory");
  }
  if (!seeded && has_record) {
    throw_input(component_dir.string(),
                std::string("holds a seed record (") + io::kSeedRecordFile +
                    "); weight files go in a new directory");
  }
}

std::filesystem::path init_model(const std::filesystem::path& dir, const InitModelParams& params,
                                 const std::function<void(double)>& progress) {
  namespace fs = std::filesystem;
  const fs::path tdir = dir / "transformer";
  std::error_code ec;
  fs::create_directories(tdir, ec);
  if (ec) throw_input(tdir.string(), "cannot create directory: " + ec.message());

  const TransformerConfig& config = params.preset.config;
  refuse_other_weights(tdir, params.seeded_weights);
  if (params.seeded_weights) {
    io::write_seed_record(tdir, io::SeedRecord{params.seed, io::kSeededRule, params.all_fp32});
    io::atomic_write_text(tdir / "config.json",
                          transformer_config_to_json(config).dump(2) + "\n");
    if (params.decoders != "none") {
      init_decoders(dir, find_decoder_preset(params.decoders), params.seed, true);
    }
    if (progress) progress(1.0);
    return tdir;
  }
  at::Generator gen = at::detail::createCPUGenerator(params.seed);
  std::vector<io::NamedTensor> tensors;
  const auto specs = parameter_specs(config);
  std::size_t done = 0;
  for (const ParamSpec& spec : specs) {
    const at::Tensor t =
        param_value(spec, at::randn(spec.shape, gen, at::TensorOptions().dtype(at::kFloat)));
    const io::DType dtype = params.all_fp32 ? io::DType::F32 : spec.checkpoint_dtype;
    tensors.push_back({spec.name, t.to(io::to_scalar_type(dtype))});
    if (progress) progress(0.5 * static_cast<double>(++done) / static_cast<double>(specs.size()));
  }
  std::vector<at::Tensor> holder;
  io::write_safetensors(tdir / "diffusion_pytorch_model.safetensors",
                        io::make_records(tensors, holder),
                        {{"format", "pt"}, {"h3parity_preset", params.preset.name},
                         {"h3parity_seed", std::to_string(params.seed)}});
  io::atomic_write_text(tdir / "config.json", transformer_config_to_json(config).dump(2) + "\n");
  if (params.decoders != "none") {
    init_decoders(dir, find_decoder_preset(params.decoders), params.seed);
  }
  if (progress) progress(1.0);
  return tdir;
}

nlohmann::json init_model_plan(const InitModelParams& params) {
  int64_t count = 0;
  for (const ParamSpec& spec : parameter_specs(params.preset.config)) {
    int64_t numel = 1;
    for (int64_t d : spec.shape) numel *= d;
    count += numel;
  }
  nlohmann::json plan = {{"transformer", transformer_config_to_json(params.preset.config)},
                         {"vae", nullptr},
                         {"audio_vae", nullptr},
                         {"parameters", {{"transformer", count}}}};
  if (params.decoders != "none") {
    const nlohmann::json d = decoders_plan(find_decoder_preset(params.decoders), params.seed);
    plan["vae"] = d["vae"];
    plan["audio_vae"] = d["audio_vae"];
    plan["parameters"]["vae"] = d["parameters"]["vae"];
    plan["parameters"]["audio_vae"] = d["parameters"]["audio_vae"];
  }
  return plan;
}

}  // namespace h3p::model
