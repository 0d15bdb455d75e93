#include "core/runs/run_setup.h"

#include <ATen/ATen.h>

#include "core/io/atomic_file.h"
#include "core/io/aten_bridge.h"
#include "core/io/safetensors.h"
#include "core/io/sha256.h"
#include "core/model/decode_estimate.h"
#include "core/model/decoder.h"
#include "core/runs/decoded_write.h"
#include "core/runs/run_inputs.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

std::string write_tensors(const fs::path& file, const std::vector<io::NamedTensor>& tensors,
                          const std::map<std::string, std::string>& metadata = {}) {
  std::vector<at::Tensor> holder;
  return io::write_safetensors(file, io::make_records(tensors, holder), metadata);
}

}  // namespace

sampling::Conditioning contract_conditioning(const contract::Contract& c, int64_t text_dim) {
  return c.conditioning_file.empty()
             ? sampling::synthesize_conditioning(c.prompt, c.text_tokens, text_dim)
             : sampling::load_conditioning(c.conditioning_path(), text_dim);
}

sampling::SamplingPlan contract_plan(const contract::Contract& c,
                                     const sampling::Conditioning& conditioning) {
  const sampling::Geometry geometry = sampling::resolve_geometry(c.frames, c.height, c.width, c.fps);
  return sampling::make_plan(geometry, conditioning, c.sampling_steps, c.video_shift,
                             c.audio_shift);
}

sampling::InitialNoise draw_run_noise(const sampling::SamplingPlan& plan, std::uint64_t seed) {
  const sampling::Geometry& g = plan.geometry;
  return sampling::draw_initial_noise(
      seed, plan.keyframe_shapes,
      {1, sampling::kLatentChannels, g.num_latent_frames, g.latent_height, g.latent_width},
      {plan.layout.audio_indices.size(0), sampling::kAudioLatentChannels});
}

void write_run_inputs(const RunPaths& paths, const sampling::InitialNoise& noise,
                      const sampling::Conditioning& conditioning, std::uint64_t seed,
                      Manifest& manifest) {
  manifest.noise_digest =
      write_tensors(paths.noise(), noise_tensors(noise), {{"seed", std::to_string(seed)}});
  manifest.conditioning_digest = write_tensors(
      paths.conditioning(), conditioning_tensors(conditioning), {{"source", conditioning.source}});
}

void write_run_contract(const RunPaths& paths, const contract::Contract& c) {
  const fs::path file = paths.root() / "contract.json";
  if (!fs::exists(file)) io::atomic_write_text(file, contract::to_json(c).dump(2) + "\n");
}

std::string model_record(const contract::Contract& c, const fs::path& transformer_dir) {
  return c.model_is_builtin() ? c.model
                             : fs::absolute(transformer_dir).lexically_normal().string();
}

bool write_final_latents(const RunPaths& paths, const sampling::FinalLatents& latents) {
  const std::vector<io::NamedTensor> named = {{"latents", latents.video},
                                              {"audio_latents", latents.audio}};
  std::vector<at::Tensor> holder;
  const std::string wanted =
      io::sha256_hex(io::encode_safetensors(io::make_records(named, holder)));
  const bool changed = !fs::exists(paths.latents()) || io::sha256_file(paths.latents()) != wanted;
  if (changed) write_tensors(paths.latents(), named);
  return changed;
}

bool decode_run_outputs(const RunPaths& paths, const fs::path& model_dir,
                        const sampling::FinalLatents& latents, const at::Device& device, int fps,
                        int audio_sample_rate, bool latents_changed,
                        const std::function<void(const std::string&)>& before_decode) {
  const bool has_video = fs::exists(model_dir / "vae" / "config.json");
  const bool has_audio = fs::exists(model_dir / "audio_vae" / "config.json");
  if (!has_video) return false;  // frames are what a decoded run is made of
  if (!latents_changed && fs::exists(decoded_dir(paths) / "frames.json")) return true;
  if (before_decode) {
    before_decode(model::describe_decode(model_dir, latents.video.sizes().vec(),
                                         has_audio ? latents.audio.sizes().vec()
                                                   : std::vector<int64_t>{},
                                         device));
  }
  const model::Decoders decoders = model::load_decoders(model_dir, device, true, has_audio);
  const at::Tensor video = model::decode_video(*decoders.video, latents.video.to(device)).cpu();
  at::Tensor audio;
  int sample_rate = audio_sample_rate;
  if (decoders.audio) {
    audio = model::decode_audio(*decoders.audio, latents.audio.to(device)).cpu();
    sample_rate = static_cast<int>(decoders.audio->config().sampling_rate);
  }
  write_decoded(paths, video, audio, fps, sample_rate);
  return true;
}

}  // namespace h3p::runs
