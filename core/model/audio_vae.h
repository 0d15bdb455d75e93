#pragma once
// The MiniMax-H3 audio VAE decoder as diffusers' AutoencoderKLMiniMaxH3Audio.decode computes it:
// a 1x1 input projection, then BigVGAN (weight-normed convolutions, transposed-convolution
// upsamplers, anti-aliased SnakeBeta AMP residual blocks) and a final clamp to [-1, 1]. Mono:
// stereo travels as a batch of two.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "core/model/vae_config.h"

namespace h3p::model {

// Immutable after construction; decode() may be called from several threads.
class AudioVaeDecoder {
 public:
  // `tensors` holds every decoder tensor of audio_vae_parameter_specs(config), fp32, one
  // device. Weight norms are folded into plain weights here, once.
  AudioVaeDecoder(AudioVaeConfig config, std::map<std::string, at::Tensor> tensors);
  // Loads audio_vae/ (config.json + weights); throws InputError naming the directory.
  static AudioVaeDecoder load(const std::filesystem::path& audio_vae_dir, const at::Device& device);

  const AudioVaeConfig& config() const { return config_; }
  const at::Device& device() const { return device_; }

  // De-normalised latents (B, latent_channels, N) → waveform (B, 1, N·hop_length) fp32 in
  // [-1, 1]. Throws InputError on a wrong shape.
  at::Tensor decode(const at::Tensor& z) const;

  // Opaque: the decoder's tensors, defined in the .cpp.
  struct Weights;

 private:
  AudioVaeConfig config_;
  at::Device device_;
  std::shared_ptr<const Weights> w_;
};

}  // namespace h3p::model
