#include "core/model/init_decoders.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/io/aten_bridge.h"
#include "core/io/atomic_file.h"
#include "core/model/vae_weights.h"

namespace h3p::model {
namespace {

constexpr uint64_t kVideoSeedOffset = 1000003;
constexpr uint64_t kAudioSeedOffset = 2000003;
constexpr double kAudioOutputGain = 0.07;  // conv_post magnitude: waveform RMS well inside [-1, 1]

at::Tensor draw(const VaeParamSpec& spec, at::Generator& gen) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  auto randn = [&] { return at::randn(spec.shape, gen, f32); };
  switch (spec.kind) {
    case VaeParamKind::weight:
      return at::mul(randn(), 1.0 / std::sqrt(static_cast<double>(spec.fan_in)));
    case VaeParamKind::bias:
      return at::mul(randn(), 0.02);
    case VaeParamKind::norm_weight:
    case VaeParamKind::weight_g:
    case VaeParamKind::snake_alpha:
      return at::add(at::mul(randn(), 0.05), 1.0);
    case VaeParamKind::layer_scale:
      return at::add(at::mul(randn(), 0.05), 0.5);
    case VaeParamKind::register_tokens:
    case VaeParamKind::weight_v:
      return randn();
    case VaeParamKind::snake_log:
      return at::mul(randn(), 0.1);
    case VaeParamKind::zero:
      return at::zeros(spec.shape, f32);
    case VaeParamKind::lowpass_filter:
      // Resampling by 2: cutoff 0.5/2, transition half-width 0.6/2 (cycles per sample).
      return kaiser_sinc_filter(0.25, 0.3, spec.shape.back());
  }
  throw InputError("init-model: no rule for tensor '" + spec.name + "'");
}

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
                     uint64_t seed) {
  std::error_code ec;
  std::filesystem::create_directories(cdir, ec);
  if (ec) throw_input(cdir.string(), "cannot create directory: " + ec.message());
  std::vector<io::NamedTensor> tensors;
  for (const VaeParamSpec& spec : specs) {
    at::Tensor t = draw(spec, gen);
    if (spec.name == "decoder.conv_post.weight_g") t = at::mul(t, kAudioOutputGain);
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

}  // namespace

std::filesystem::path init_decoders(const std::filesystem::path& dir, const DecoderPreset& preset,
                                    uint64_t seed) {
  VideoVaeConfig vae = preset.vae;
  at::Generator video_gen = at::detail::createCPUGenerator(seed + kVideoSeedOffset);
  draw_stats(vae.latents_mean, vae.latents_std, vae.latent_channels, video_gen);
  vae.validate("decoder preset " + preset.name);
  write_component(dir / "vae", video_vae_parameter_specs(vae), video_gen,
                  video_vae_config_to_json(vae), preset.name, seed + kVideoSeedOffset);

  AudioVaeConfig audio = preset.audio_vae;
  at::Generator audio_gen = at::detail::createCPUGenerator(seed + kAudioSeedOffset);
  draw_stats(audio.latents_mean, audio.latents_std, audio.latent_channels, audio_gen);
  audio.validate("decoder preset " + preset.name);
  write_component(dir / "audio_vae", audio_vae_parameter_specs(audio), audio_gen,
                  audio_vae_config_to_json(audio), preset.name, seed + kAudioSeedOffset);
  return dir / "vae";
}

}  // namespace h3p::model
