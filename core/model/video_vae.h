#pragma once
// The MiniMax-H3 video VAE decoder as diffusers' AutoencoderKLMiniMaxH3.decode computes it:
// post_quant_conv, then a non-causal ViT (RMSNorm, q/k norm, 3-axis RoPE on part of each head,
// SwiGLU, register tokens) that expands every latent voxel into a block of pixels, run per
// spatial tile (blended overlaps) and per temporal chunk (cross-faded frames).
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "core/model/vae_config.h"

namespace h3p::model {

// Spatial tiling of the decode in pixels, diffusers' enable_tiling (on by default: the released
// frames are the blended-tile ones). Sizes and overlaps must be multiples of the spatial ratio.
struct VideoTiling {
  bool enabled = true;
  int64_t tile_height = 256;
  int64_t tile_width = 256;
  int64_t min_overlap_height = 64;
  int64_t min_overlap_width = 64;

  // Throws InputError naming `origin` when a size is not a positive multiple of `ratio` or an
  // overlap is not smaller than its tile.
  void validate(int64_t ratio, const std::string& origin) const;
  // One line, e.g. "tiles 256x256 px, overlap >= 64x64 px" or "off".
  std::string describe() const;
};

// Immutable after construction; decode() may be called from several threads.
class VideoVaeDecoder {
 public:
  // `tensors` holds every decoder tensor of video_vae_parameter_specs(config), fp32, one device.
  VideoVaeDecoder(VideoVaeConfig config, std::map<std::string, at::Tensor> tensors);
  // Loads vae/ (config.json + weights); throws InputError naming the directory.
  static VideoVaeDecoder load(const std::filesystem::path& vae_dir, const at::Device& device);

  const VideoVaeConfig& config() const { return config_; }
  const at::Device& device() const { return device_; }

  // De-normalised latents (B, latent_channels, T, h, w) on device(), T >= 3 → the VAE output
  // (B, out_channels, F, h·ratio, w·ratio) in its ImageNet-normalised pixel space, fp32.
  // `autocast_fp16` runs it under float16 autocast (CUDA only), as the reference pipeline does
  // there. Throws InputError on a wrong shape.
  at::Tensor decode(const at::Tensor& z, const VideoTiling& tiling, bool autocast_fp16) const;
  // decoder(post_quant_conv(z)) of one clip: no chunking, no tiling (stage traces).
  at::Tensor decode_clip(const at::Tensor& z) const;

  // Opaque: the decoder's tensors, defined in the .cpp.
  struct Weights;

 private:
  at::Tensor vit(const at::Tensor& x) const;
  at::Tensor decode_tiled(const at::Tensor& z, const VideoTiling& tiling) const;

  VideoVaeConfig config_;
  at::Device device_;
  std::shared_ptr<const Weights> w_;
};

}  // namespace h3p::model
