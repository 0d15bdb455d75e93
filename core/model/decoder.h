#pragma once
// The end of generation, as the reference pipeline's decode steps run it: latents as the
// sampler leaves them (normalised) are de-normalised with the VAE configs' per-channel means
// and stds and decoded into video frames (fp32, [0, 1]) and stereo audio (fp32, [-1, 1]).
#include <ATen/core/Tensor.h>

#include <array>
#include <filesystem>
#include <optional>
#include <string>

#include "core/model/audio_vae.h"
#include "core/model/video_vae.h"

namespace h3p::model {

// ImageNet statistics of the video VAE's pixel space: frames = clamp(raw·std + mean, 0, 1).
inline constexpr std::array<double, 3> kPixelMean{0.485, 0.456, 0.406};
inline constexpr std::array<double, 3> kPixelStd{0.229, 0.224, 0.225};

struct DecodeOptions {
  // Float16 autocast of the video decode: automatic = on for CUDA (the reference pipeline's
  // recipe), off on CPU; on is refused on CPU.
  enum class Autocast { automatic, on, off };
  Autocast video_autocast = Autocast::automatic;
  VideoTiling tiling;  // the VAE's default tiling (256 px tiles, >= 64 px overlap)

  // One "key: value" per line, for manifests and logs.
  std::string describe() const;
};

// The decoders of one model directory; either may be absent.
struct Decoders {
  std::optional<VideoVaeDecoder> video;
  std::optional<AudioVaeDecoder> audio;
};

// Loads vae/ (when `video`) and audio_vae/ (when `audio`) of `model` (see resolve_vae_dir)
// onto `device`. Throws InputError naming the directory.
Decoders load_decoders(const std::filesystem::path& model, const at::Device& device, bool video,
                       bool audio);

// latents (1, latent_channels, T, h, w) normalised → the VAE's output (1, 3, F, 16h, 16w) fp32
// in its ImageNet-normalised space, before the pixel de-normalisation and clamp.
at::Tensor decode_video_raw(const VideoVaeDecoder& vae, const at::Tensor& latents,
                            const DecodeOptions& options = {});
// latents (1, latent_channels, T, h, w) normalised → video (1, 3, F, 16h, 16w) fp32 in [0, 1];
// F = 17n + 5 for T = 5n + 2. Throws InputError on a wrong shape.
at::Tensor decode_video(const VideoVaeDecoder& vae, const at::Tensor& latents,
                        const DecodeOptions& options = {});
// audio_latents (2, latent_channels, N) normalised, one batch item per stereo channel →
// audio (1, 2, N·hop_length) fp32 in [-1, 1] at config().sampling_rate. Throws InputError when
// the config has no latents_mean / latents_std or on a wrong shape.
at::Tensor decode_audio(const AudioVaeDecoder& vae, const at::Tensor& audio_latents);

}  // namespace h3p::model
