#include "core/model/decoder.h"

#include <ATen/ATen.h>

#include <sstream>
#include <vector>

#include "core/common/error.h"

namespace h3p::model {
namespace {

// A per-channel statistic as the pipeline builds it: torch.tensor(list) in fp32, viewed to
// broadcast over channel dim 1 of a `dims`-D tensor.
at::Tensor channel_stat(const std::vector<double>& values, int64_t dims, const at::Device& device) {
  std::vector<int64_t> shape(static_cast<std::size_t>(dims), 1);
  shape[1] = -1;
  return at::tensor(values, at::TensorOptions().dtype(at::kDouble))
      .to(at::kFloat)
      .to(device)
      .view(shape);
}

const char* to_string(DecodeOptions::Autocast a) {
  switch (a) {
    case DecodeOptions::Autocast::automatic:
      return "automatic (float16 on CUDA, off on CPU)";
    case DecodeOptions::Autocast::on:
      return "float16";
    case DecodeOptions::Autocast::off:
      return "off";
  }
  return "?";
}

}  // namespace

std::string DecodeOptions::describe() const {
  std::ostringstream out;
  out << "video_autocast: " << to_string(video_autocast) << "\nvideo_tiling: " << tiling.describe()
      << "\n";
  return out.str();
}

Decoders load_decoders(const std::filesystem::path& model, const at::Device& device, bool video,
                       bool audio) {
  Decoders d;
  if (video) d.video.emplace(VideoVaeDecoder::load(resolve_vae_dir(model), device));
  if (audio) d.audio.emplace(AudioVaeDecoder::load(resolve_audio_vae_dir(model), device));
  return d;
}

at::Tensor decode_video_raw(const VideoVaeDecoder& vae, const at::Tensor& latents,
                            const DecodeOptions& options) {
  const VideoVaeConfig& c = vae.config();
  if (latents.dim() != 5 || latents.size(1) != c.latent_channels ||
      !at::isFloatingType(latents.scalar_type())) {
    throw InputError("latents: expected floating (1, " + std::to_string(c.latent_channels) +
                     ", T, h, w), got " + c10::str(latents.sizes()));
  }
  const bool cuda = vae.device().is_cuda();
  bool autocast = cuda;
  if (options.video_autocast == DecodeOptions::Autocast::on) {
    if (!cuda) throw InputError("video decode: float16 autocast needs a CUDA device");
    autocast = true;
  } else if (options.video_autocast == DecodeOptions::Autocast::off) {
    autocast = false;
  }
  // z·std + mean in the latents' dtype (fp32 from the sampler).
  at::Tensor x = latents.to(vae.device());
  at::Tensor z =
      at::add(at::mul(x, channel_stat(c.latents_std, 5, vae.device()).to(x.scalar_type())),
              channel_stat(c.latents_mean, 5, vae.device()).to(x.scalar_type()));
  return vae.decode(z, options.tiling, autocast);
}

at::Tensor decode_video(const VideoVaeDecoder& vae, const at::Tensor& latents,
                        const DecodeOptions& options) {
  at::Tensor raw = decode_video_raw(vae, latents, options);
  if (raw.size(1) != 3) {
    throw InputError("video VAE: out_channels is " + std::to_string(raw.size(1)) +
                     ", pixel de-normalisation needs 3 (RGB)");
  }
  const std::vector<double> mean(kPixelMean.begin(), kPixelMean.end());
  const std::vector<double> std_(kPixelStd.begin(), kPixelStd.end());
  return at::clamp(at::add(at::mul(raw, channel_stat(std_, 5, raw.device())),
                           channel_stat(mean, 5, raw.device())),
                   0.0, 1.0);
}

at::Tensor decode_audio(const AudioVaeDecoder& vae, const at::Tensor& audio_latents) {
  const AudioVaeConfig& c = vae.config();
  if (c.latents_mean.empty() || c.latents_std.empty()) {
    throw InputError("audio VAE config: latents_mean and latents_std are needed to decode");
  }
  if (audio_latents.dim() != 3 || audio_latents.size(1) != c.latent_channels ||
      !at::isFloatingType(audio_latents.scalar_type())) {
    throw InputError("audio_latents: expected floating (2, " + std::to_string(c.latent_channels) +
                     ", N), got " + c10::str(audio_latents.sizes()));
  }
  at::Tensor x = audio_latents.to(vae.device());
  at::Tensor z =
      at::add(at::mul(x, channel_stat(c.latents_std, 3, vae.device()).to(x.scalar_type())),
              channel_stat(c.latents_mean, 3, vae.device()).to(x.scalar_type()));
  // (channels, 1, S) → (1, channels, S)
  return vae.decode(z).to(at::kFloat).permute({1, 0, 2}).contiguous();
}

}  // namespace h3p::model
