#include "core/model/decode_estimate.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "core/common/error.h"

namespace h3p::model {
namespace {

// Windows along one spatial axis of `length` pixels: tiles of 256 px overlapping >= 64 px.
int64_t tiles_along(int64_t length) {
  const int64_t tile = 256, overlap = 64;
  if (length <= tile) return 1;
  return (length - overlap + (tile - overlap) - 1) / (tile - overlap);
}

std::string duration_text(double seconds) {
  char buf[64];
  if (seconds < 120) {
    std::snprintf(buf, sizeof buf, "%.0f s", std::max(seconds, 1.0));
  } else if (seconds < 2 * 3600) {
    std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  }
  return buf;
}

}  // namespace

VideoDecodeWork video_decode_work(const VideoVaeConfig& c, const std::vector<int64_t>& latents) {
  if (latents.size() != 5) return {};
  const int64_t T = latents[2], h = latents[3], w = latents[4], r = c.spatial_ratio();
  const int64_t tile_latents = std::min<int64_t>(256 / r, std::max(h, w));
  const int64_t chunk = c.tokens_chunk_size();
  const int64_t step = std::max<int64_t>(1, chunk - c.token_overlap());
  const int64_t chunks = T <= chunk ? 1 : (T - chunk + step - 1) / step + 1;
  const int64_t windows = tiles_along(h * r) * tiles_along(w * r) * chunks;
  const double tokens_per_window =
      static_cast<double>(std::min(T, chunk)) * std::min(h, tile_latents) *
          std::min(w, tile_latents) + c.decoder_num_register_tokens + 1;
  const double D = static_cast<double>(c.decoder_dim());
  const double F = D * static_cast<double>(c.decoder_ffn_mult);
  // Per token and block: q, k, v, out (4 D^2), SwiGLU in (2 F D) and out (F D), then
  // attention scores and values (2 S D); 2 FLOP per multiply-add.
  const double tokens = static_cast<double>(windows) * tokens_per_window;
  const double head = 2 * D * static_cast<double>(c.out_channels * r * r * c.temporal_ratio());
  VideoDecodeWork work;
  work.projection_gflop =
      tokens * (2 * (4 * D * D + 3 * F * D) * c.decoder_num_layers + head) / 1e9;
  work.attention_gflop = tokens * 2 * (2 * tokens_per_window * D) * c.decoder_num_layers / 1e9;
  work.tokens_per_window = tokens_per_window;
  return work;
}

double video_decode_gflop(const VideoVaeConfig& c, const std::vector<int64_t>& latents) {
  const VideoDecodeWork work = video_decode_work(c, latents);
  return work.projection_gflop + work.attention_gflop;
}

double audio_decode_gflop(const AudioVaeConfig& c, const std::vector<int64_t>& latents) {
  if (latents.size() != 3) return 0;
  const double batch = static_cast<double>(latents[0]);
  double length = static_cast<double>(latents[2]);
  double channels = static_cast<double>(c.decoder_dim);
  double kernel_sum = 0;
  for (int64_t k : c.resblock_kernel_sizes) kernel_sum += static_cast<double>(k);
  double macs = length * channels * c.latent_channels;  // input convolutions
  for (std::size_t i = 0; i < c.decoder_rates.size(); ++i) {
    const double out_channels = static_cast<double>(c.stage_channels(i));
    length *= static_cast<double>(c.decoder_rates[i]);
    // The upsampling convolution, then per resblock kernel k two convolutions per dilation.
    macs += length * channels * out_channels *
            static_cast<double>(c.decoder_kernel_sizes[i]) / c.decoder_rates[i];
    macs += length * out_channels * out_channels * kernel_sum * 2 *
            static_cast<double>(c.resblock_dilation_sizes.front().size());
    channels = out_channels;
  }
  return 2 * batch * macs / 1e9;
}

double measure_cpu_gflops(int64_t width, int64_t rows, int64_t columns) {
  if (columns <= 0) columns = width;
  const at::Tensor a = at::randn({rows, width}), b = at::randn({width, columns});
  const double flop = 2.0 * static_cast<double>(rows) * width * columns;
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    int reps = 0;
    const auto start = std::chrono::steady_clock::now();
    double s = 0;
    do {  // at least 20 ms per timing: small widths take microseconds per product
      const at::Tensor c = at::matmul(a, b);
      ++reps;
      s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (s < 0.02);
    best = std::max(best, reps * flop / s / 1e9);
  }
  return best;
}

double measure_cpu_fresh_pass_gbs() {
  const int64_t n = 16 << 20;  // 64 MB of fp32
  const at::Tensor a = at::rand({n}), b = at::rand({n});
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    at::Tensor c = at::add(a, b);  // fresh memory each time, as the decoder's passes get
    (void)c.data_ptr<float>()[n - 1];
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 3.0 * 4 * static_cast<double>(n) / s / 1e9);
  }
  return best;
}

std::string describe_decode(const std::filesystem::path& model_dir,
                            const std::vector<int64_t>& video_latents,
                            const std::vector<int64_t>& audio_latents, const at::Device& device) {
  const bool cpu = device.is_cpu();
  // `model_dir` may also be the component directory itself (resolve_vae_dir).
  auto config_of = [&](auto resolve) {
    try {
      return resolve(model_dir) / "config.json";
    } catch (const InputError&) {
      return std::filesystem::path();
    }
  };
  const auto vae = config_of(resolve_vae_dir);
  const auto audio_vae = config_of(resolve_audio_vae_dir);
  std::vector<std::string> parts;
  // The CPU estimate's terms, each measured at the rate of its own shape (below).
  std::optional<VideoVaeConfig> video;
  VideoDecodeWork video_work;
  double pass_gb = 0;  // the full-size passes over the decoded video
  std::optional<AudioVaeConfig> audio;
  double audio_gflop = 0;
  if (!video_latents.empty() && !vae.empty() && std::filesystem::exists(vae)) {
    video = load_video_vae_config(vae);
    video_work = video_decode_work(*video, video_latents);
    const double r = static_cast<double>(video->spatial_ratio());
    const double pixels = 3.0 * static_cast<double>(video_latents[2] * video->temporal_ratio()) *
                          static_cast<double>(video_latents[3]) * r *
                          static_cast<double>(video_latents[4]) * r;
    pass_gb = kDecodeVideoPasses * 4 * pixels / 1e9;
    std::ostringstream part;
    part << "video latents " << at::IntArrayRef(video_latents) << " (" << video->decoder_dim()
         << "-wide " << video->decoder_num_layers << "-block decoder, "
         << static_cast<int64_t>(video_work.projection_gflop + video_work.attention_gflop)
         << " GFLOP)";
    parts.push_back(part.str());
  }
  if (!audio_latents.empty() && !audio_vae.empty() && std::filesystem::exists(audio_vae)) {
    audio = load_audio_vae_config(audio_vae);
    audio_gflop = audio_decode_gflop(*audio, audio_latents);
    std::ostringstream part;
    part << "audio latents " << at::IntArrayRef(audio_latents) << " (" << audio->decoder_dim
         << "-channel BigVGAN, " << static_cast<int64_t>(audio_gflop) << " GFLOP)";
    parts.push_back(part.str());
  }
  std::ostringstream out;
  out << "decoding " << (parts.empty() ? std::string("nothing") : parts.front());
  if (parts.size() > 1) out << " and " << parts.back();
  out << " on " << device.str();
  if (!cpu) return out.str();
  // Measuring the rates costs ~0.5 s of CPU itself: a decode that is short even at rates every
  // CPU exceeds is reported by that bound instead.
  const double bound =
      (video_work.projection_gflop + video_work.attention_gflop + 2 * audio_gflop) /
          kFloorCpuGflops +
      pass_gb / kFloorCpuPassGbs;
  if (bound < kUnmeasuredDecodeSeconds) {
    out << ": at most " << duration_text(std::ceil(bound)) << " (at " << kFloorCpuGflops
        << " GFLOP/s and " << kFloorCpuPassGbs << " GB/s, rates every CPU exceeds: not measured)";
    return out.str();
  }
  double seconds = 0;
  if (video) {
    // Projections as (tokens x D) @ (D x D) products (rows for about 1 GFLOP a product),
    // attention as (S x head) @ (head x S) ones, each at the rate measured for its shape;
    // then the full-size passes.
    const int64_t D = video->decoder_dim();
    const int64_t rows = std::clamp<int64_t>(static_cast<int64_t>(5e8 / (D * D)), 256, 65536);
    const int64_t s_tokens =
        std::clamp<int64_t>(static_cast<int64_t>(video_work.tokens_per_window), 256, 4096);
    seconds += video_work.projection_gflop / measure_cpu_gflops(D, rows) +
               video_work.attention_gflop /
                   measure_cpu_gflops(video->decoder_attention_head_dim, s_tokens, s_tokens) +
               pass_gb / measure_cpu_fresh_pass_gbs();
  }
  // Convolutions at about half the rate of a matmul of the decoder's width.
  if (audio) seconds += audio_gflop / (0.5 * measure_cpu_gflops(audio->decoder_dim));
  out << ": about " << duration_text(seconds) << " (measured on this CPU at "
      << at::get_num_threads() << " thread" << (at::get_num_threads() == 1 ? "" : "s")
      << ": matmuls of the decoders' shapes, full-size passes)";
  return out.str();
}

}  // namespace h3p::model
