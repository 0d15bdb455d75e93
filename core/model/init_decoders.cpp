#include "core/model/init_decoders.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/io/aten_bridge.h"
#include "core/io/atomic_file.h"
#include "core/model/init_model.h"
#include "core/model/seeded_weights.h"
#include "core/model/vae_weights.h"

namespace h3p::model {
namespace {

constexpr uint64_t kVideoSeedOffset = 1000003;
constexpr uint64_t kAudioSeedOffset = 2000003;
// Latent statistics drawn in fp32, so the config's decimal values are exactly representable.
void draw_stats(std::vector<double>& mean, std::vector<double>& std_, int64_t channels,
                at::Generator& gen) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  at::Tensor m = at::mul(at::randn({channels}, gen, f32), 0.05).to(at::kDouble);
  at::Tensor s = at::add(at::mul(at::rand({channels}, gen, f32), 0.4), 0.8).to(at::kDouble);
  mean.assign(m.data_ptr<double>(), m.data_ptr<double>() + channels);
  std_.assign(s.data_ptr<double>(), s.data_ptr<double>() + channels);
}

void write_component(const std::filesystem::path& cdir, const std::vector<VaeParamSpec>& specs,
                     at::Generator& gen, const nlohmann::json& config, const std::string& preset,
                     uint64_t seed, bool seeded) {
  std::error_code ec;
  std::filesystem::create_directories(cdir, ec);
  if (ec) throw_input(cdir.string(), "cannot create directory: " + ec.message());
  refuse_other_weights(cdir, seeded);
  if (seeded) {
    io::write_seed_record(cdir, io::SeedRecord{seed, io::kSeededRule, false});
    io::atomic_write_text(cdir / "config.json", config.dump(2) + "\n");
    return;
  }
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  std::vector<io::NamedTensor> tensors;
  for (const VaeParamSpec& spec : specs) {
    const at::Tensor t = vae_param_value(spec, [&] { return at::randn(spec.shape, gen, f32); });
    tensors.push_back({spec.name, t.contiguous()});
  }
  std::vector<at::Tensor> holder;
  io::write_safetensors(cdir / "diffusion_pytorch_model.safetensors",
                        io::make_records(tensors, holder),
                        {{"format", "pt"},
                         {"h3parity_decoder_preset", preset},
                         {"h3parity_seed", std::to_string(seed)}});
  io::atomic_write_text(cdir / "config.json", config.dump(2) + "\n");
}

int64_t parameter_count(const std::vector<VaeParamSpec>& specs) {
  int64_t n = 0;
  for (const VaeParamSpec& spec : specs) {
    int64_t numel = 1;
    for (int64_t d : spec.shape) numel *= d;
    n += numel;
  }
  return n;
}

// The configs as written (latent statistics drawn first from each VAE's generator), with the
// generators positioned where the weights are drawn from.
struct SeededConfigs {
  VideoVaeConfig vae;
  AudioVaeConfig audio;
  at::Generator video_gen, audio_gen;
};

SeededConfigs seeded_configs(const DecoderPreset& preset, uint64_t seed) {
  SeededConfigs s{preset.vae, preset.audio_vae,
                  at::detail::createCPUGenerator(seed + kVideoSeedOffset),
                  at::detail::createCPUGenerator(seed + kAudioSeedOffset)};
  draw_stats(s.vae.latents_mean, s.vae.latents_std, s.vae.latent_channels, s.video_gen);
  s.vae.validate("decoder preset " + preset.name);
  draw_stats(s.audio.latents_mean, s.audio.latents_std, s.audio.latent_channels, s.audio_gen);
  s.audio.validate("decoder preset " + preset.name);
  return s;
}

}  // namespace

std::filesystem::path init_decoders(const std::filesystem::path& dir, const DecoderPreset& preset,
                                    uint64_t seed, bool seeded) {
  SeededConfigs s = seeded_configs(preset, seed);
  write_component(dir / "vae", video_vae_parameter_specs(s.vae), s.video_gen,
                  video_vae_config_to_json(s.vae), preset.name, seed + kVideoSeedOffset, seeded);
  write_component(dir / "audio_vae", audio_vae_parameter_specs(s.audio), s.audio_gen,
                  audio_vae_config_to_json(s.audio), preset.name, seed + kAudioSeedOffset,
                  seeded);
  return dir / "vae";
}

nlohmann::json decoders_plan(const DecoderPreset& preset, uint64_t seed) {
  const SeededConfigs s = seeded_configs(preset, seed);
  return {{"vae", video_vae_config_to_json(s.vae)},
          {"audio_vae", audio_vae_config_to_json(s.audio)},
          {"parameters",
           {{"vae", parameter_count(video_vae_parameter_specs(s.vae))},
            {"audio_vae", parameter_count(audio_vae_parameter_specs(s.audio))}}}};
}

std::string describe_decoder_preset(const std::string& name) {
  const DecoderPreset preset = find_decoder_preset(name);
  auto size = [](int64_t params) {
    char buf[96];
    if (params >= 100'000'000) {
      std::snprintf(buf, sizeof buf, "%.2f B parameters, %.1f GB in fp32", params / 1e9,
                    params * 4 / 1e9);
    } else {
      std::snprintf(buf, sizeof buf, "%.2f M parameters, %.1f MB in fp32", params / 1e6,
                    params * 4 / 1e6);
    }
    return std::string(buf);
  };
  return "decoders " + name + " (" + preset.description + "): video VAE " +
         std::to_string(preset.vae.decoder_dim()) + " wide, " +
         std::to_string(preset.vae.decoder_num_layers) + " blocks, " +
         size(parameter_count(video_vae_parameter_specs(preset.vae))) + "; audio VAE " +
         std::to_string(preset.audio_vae.decoder_dim) + " channels, " +
         std::to_string(preset.audio_vae.decoder_rates.size()) + " upsampling stages, " +
         size(parameter_count(audio_vae_parameter_specs(preset.audio_vae)));
}

}  // namespace h3p::model
