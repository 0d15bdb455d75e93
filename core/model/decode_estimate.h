#pragma once
// What a decode of given latents costs, said before it starts: the floating-point work of the
// video ViT decoder (tokens per tile and chunk window, the overlaps counted) and of the audio
// BigVGAN, and on a CPU a time estimate from rates measured on this machine in a fraction of a
// second: matmuls of the decoder's own shapes (a 32-wide decoder runs far below a large
// matmul's rate) and an elementwise pass into a fresh full-size tensor (the decoded video is
// written, blended, de-normalised and converted a dozen times over; on some machines the page
// faults of fresh memory cost more than the traffic). An estimate to within a small factor, so
// that a full-size CPU decode (hours) never starts silently; not a benchmark.
#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/model/vae_config.h"

namespace h3p::model {

// The work of one video decode of latents (1, C, T, h, w) with the default tiling: the
// token-wise products (projections, SwiGLU, output head) and attention's token-by-token ones.
struct VideoDecodeWork {
  double projection_gflop = 0, attention_gflop = 0;
  double tokens_per_window = 0;
};
VideoDecodeWork video_decode_work(const VideoVaeConfig& config, const std::vector<int64_t>& latents);
// GFLOP of one video decode (both parts).
double video_decode_gflop(const VideoVaeConfig& config, const std::vector<int64_t>& latents);
// GFLOP of one audio decode of latents (2, C, N).
double audio_decode_gflop(const AudioVaeConfig& config, const std::vector<int64_t>& latents);

// fp32 GFLOP/s of a (rows x width) @ (width x columns) matmul on this CPU (columns <= 0: width),
// at the current thread count (best of three timings of at least 20 ms each).
double measure_cpu_gflops(int64_t width = 1024, int64_t rows = 4096, int64_t columns = 0);

// GB/s (bytes written plus read) of out = a + b into a freshly allocated 64 MB fp32 tensor on
// this CPU (best of three), allocation and first-touch page faults included.
double measure_cpu_fresh_pass_gbs();

// Full-size passes over the decoded video assumed by the estimate (see the header comment).
inline constexpr double kDecodeVideoPasses = 12;

// Rates every CPU exceeds (one slow core; the matmul rate halved for the audio decoder's
// convolutions, as the estimate does): a decode that takes under kUnmeasuredDecodeSeconds at
// these is reported by that bound, "at most N s", without the ~0.5 s of measuring this CPU.
inline constexpr double kFloorCpuGflops = 2.0;
inline constexpr double kFloorCpuPassGbs = 0.5;
inline constexpr double kUnmeasuredDecodeSeconds = 10.0;

// One line for the log: the decoders of `model_dir` (vae/, audio_vae/ where present), the
// latent shapes (audio empty: not decoded), the work, and on a CPU device "about N s|min|h"
// from the rates above, or "at most N s" from the floor rates. Reads the configs only.
std::string describe_decode(const std::filesystem::path& model_dir,
                            const std::vector<int64_t>& video_latents,
                            const std::vector<int64_t>& audio_latents, const at::Device& device);

}  // namespace h3p::model
