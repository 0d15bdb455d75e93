#pragma once
// What a decode of given latents costs, said before it starts: the floating-point work of the
// video ViT decoder (tokens per tile and chunk window, the overlaps counted) and of the audio
// BigVGAN, and on a CPU a time estimate from a short matmul measured on this machine. An
// estimate to within a small factor, so that a full-size CPU decode (hours) never starts
// silently; not a benchmark.
#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/model/vae_config.h"

namespace h3p::model {

// GFLOP of one video decode of latents (1, C, T, h, w) with the default tiling.
double video_decode_gflop(const VideoVaeConfig& config, const std::vector<int64_t>& latents);
// GFLOP of one audio decode of latents (2, C, N).
double audio_decode_gflop(const AudioVaeConfig& config, const std::vector<int64_t>& latents);

// fp32 GFLOP/s of a 1024x1024x1024 matmul on this CPU (best of three; about 0.1 s).
double measure_cpu_gflops();

// One line for the log: the decoders of `model_dir` (vae/, audio_vae/ where present), the
// latent shapes (audio empty: not decoded), the work, and on a CPU device "about N s|min|h"
// from measure_cpu_gflops(). Reads the configs only.
std::string describe_decode(const std::filesystem::path& model_dir,
                            const std::vector<int64_t>& video_latents,
                            const std::vector<int64_t>& audio_latents, const at::Device& device);

}  // namespace h3p::model
