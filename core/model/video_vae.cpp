#include "core/model/video_vae.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>
#include <torch/version.h>

#include <cmath>
#include <optional>
#include <sstream>
#include <vector>

#include "core/common/error.h"
#include "core/model/tensor_map.h"
#include "core/model/vae_weights.h"
#include "core/ops/provider_ops.h"

namespace h3p::model {

struct VideoVaeDecoder::Weights {
  struct Block {
    at::Tensor norm1, to_q_w, to_q_b, to_k_w, to_k_b, to_v_w, to_v_b, to_out_w, to_out_b, scale1;
    at::Tensor norm2, ff_in_w, ff_in_b, ff_out_w, ff_out_b, scale2;
  };
  at::Tensor post_quant_w, post_quant_b, proj_in_w, proj_in_b, register_tokens;
  std::vector<Block> blocks;
  at::Tensor norm_out_w, norm_out_b, proj_out_w, proj_out_b;
  at::Tensor inv_freq;  // (rope_dim / 6,) fp32
};

namespace {

// Removes `name` from `t`; InputError naming it when absent.
at::Tensor take_video(std::map<std::string, at::Tensor>& t, const std::string& name) {
  return take_tensor(t, name, "video VAE: missing decoder tensor");
}

// Python's t[start:stop] along `dim` (clamped, negative indices from the end).
at::Tensor py_slice(const at::Tensor& t, int64_t dim, int64_t start, int64_t stop) {
  const int64_t size = t.size(dim);
  auto clamp = [size](int64_t i) {
    if (i < 0) i += size;
    return std::min(std::max<int64_t>(i, 0), size);
  };
  const int64_t a = clamp(start), b = std::max(clamp(stop), clamp(start));
  return t.narrow(dim, a, b - a);
}

// Python's a % b for b > 0.
int64_t py_mod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

using ops::torch_rms_norm;

// Full self-attention over (B, S, H, D) as diffusers' native backend dispatches it.
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return ops::torch_sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2);
}

// Rotate-half RoPE over the first cos.size(-1) channels of each head; x (B, S, H, D), cos/sin
// (B, S, 1, R) cast to x's dtype first.
at::Tensor rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t r = cos.size(-1);
  at::Tensor c = cos.to(x.scalar_type()), s = sin.to(x.scalar_type());
  at::Tensor xr = x.narrow(-1, 0, r), xp = x.narrow(-1, r, x.size(-1) - r);
  auto halves = xr.chunk(2, -1);
  at::Tensor rotated = at::cat({at::neg(halves[1]), halves[0]}, -1);
  return at::cat({at::add(at::mul(xr, c), at::mul(rotated, s)), xp}, -1);
}

// Linear cross-fade of the last `extent` entries of `a` into the first of `b` along `dim`,
// followed by the rest of `b` (diffusers' _blend).
at::Tensor blend(const at::Tensor& a, const at::Tensor& b, int64_t extent, int64_t dim) {
  extent = std::min({a.size(dim), b.size(dim), extent});
  if (extent <= 0) return b;
  at::Tensor pos = at::arange(extent, b.options());
  std::vector<int64_t> shape(static_cast<std::size_t>(a.dim()), 1);
  shape[static_cast<std::size_t>(dim < 0 ? dim + a.dim() : dim)] = extent;
  at::Tensor wa = at::rsub(at::div(pos, extent), 1).view(shape);
  at::Tensor wb = at::div(pos, extent).view(shape);
  at::Tensor blended = at::add(at::mul(py_slice(a, dim, -extent, a.size(dim)), wa),
                               at::mul(py_slice(b, dim, 0, extent), wb));
  if (extent == b.size(dim)) return blended;
  return at::cat({blended, py_slice(b, dim, extent, b.size(dim))}, dim);
}

struct Tiles {
  std::vector<int64_t> starts, lengths, overlaps;
};

// Tiles of `tile` pixels over `length` with overlaps >= `min_overlap`, the slack spread
// round-robin over the overlaps in steps of `ratio` (diffusers' _split_tiles).
Tiles split_tiles(int64_t length, int64_t tile, int64_t min_overlap, int64_t ratio) {
  if (tile >= length) return {{0}, {length}, {}};
  int64_t n = (length + tile - 1) / tile;
  while (tile * n - min_overlap * (n - 1) - length < 0) ++n;
  Tiles t;
  t.overlaps.assign(static_cast<std::size_t>(n - 1), min_overlap);
  int64_t sum = 0;
  for (int64_t o : t.overlaps) sum += o;
  const int64_t remaining = tile * n - sum - length;
  for (int64_t i = 0; i < remaining / ratio; ++i) {
    t.overlaps[static_cast<std::size_t>(i % (n - 1))] += ratio;
  }
  t.starts.push_back(0);
  for (int64_t i = 0; i + 1 < n; ++i) {
    t.starts.push_back(t.starts.back() + tile - t.overlaps[static_cast<std::size_t>(i)]);
  }
  t.lengths.assign(static_cast<std::size_t>(n), tile);
  return t;
}

// Blends each tile into its upper and left neighbours, crops the overlaps and joins them
// (diffusers' _stitch_tiles).
at::Tensor stitch(const std::vector<std::vector<at::Tensor>>& tiles,
                  const std::vector<int64_t>& h_overlaps, const std::vector<int64_t>& w_overlaps) {
  std::vector<at::Tensor> rows;
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    std::vector<at::Tensor> row;
    for (std::size_t j = 0; j < tiles[i].size(); ++j) {
      at::Tensor tile = tiles[i][j];
      if (i > 0) tile = blend(tiles[i - 1][j], tile, h_overlaps[i - 1], -2);
      if (j > 0) tile = blend(tiles[i][j - 1], tile, w_overlaps[j - 1], -1);
      if (i + 1 < tiles.size()) tile = py_slice(tile, -2, 0, -h_overlaps[i]);
      if (j + 1 < tiles[i].size()) tile = py_slice(tile, -1, 0, -w_overlaps[j]);
      row.push_back(tile);
    }
    rows.push_back(at::cat(row, -1));
  }
  return at::cat(rows, -2);
}

// Float16 autocast for CUDA over a scope, as torch.autocast(device_type="cuda", dtype=float16).
class CudaAutocastScope {
 public:
  explicit CudaAutocastScope(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    prev_enabled_ = at::autocast::is_autocast_enabled(at::kCUDA);
    prev_dtype_ = at::autocast::get_autocast_dtype(at::kCUDA);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kHalf);
#else
    prev_enabled_ = at::autocast::is_enabled();
    prev_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kHalf);
#endif
    at::autocast::increment_nesting();
  }
  ~CudaAutocastScope() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, prev_enabled_);
    at::autocast::set_autocast_dtype(at::kCUDA, prev_dtype_);
#else
    at::autocast::set_enabled(prev_enabled_);
    at::autocast::set_autocast_gpu_dtype(prev_dtype_);
#endif
  }
  CudaAutocastScope(const CudaAutocastScope&) = delete;
  CudaAutocastScope& operator=(const CudaAutocastScope&) = delete;

 private:
  bool enabled_;
  bool prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kHalf;
};

}  // namespace

void VideoTiling::validate(int64_t ratio, const std::string& origin) const {
  if (!enabled) return;
  auto check = [&](int64_t v, const char* what) {
    if (v <= 0 || v % ratio != 0) {
      throw_input(origin, std::string(what) + " " + std::to_string(v) +
                              " px: must be a positive multiple of " + std::to_string(ratio));
    }
  };
  check(tile_height, "tile height");
  check(tile_width, "tile width");
  check(min_overlap_height, "tile overlap height");
  check(min_overlap_width, "tile overlap width");
  if (min_overlap_height >= tile_height || min_overlap_width >= tile_width) {
    throw_input(origin, "tile overlaps must be smaller than the tiles");
  }
}

std::string VideoTiling::describe() const {
  if (!enabled) return "off";
  std::ostringstream out;
  out << "tiles " << tile_height << "x" << tile_width << " px, overlap >= " << min_overlap_height
      << "x" << min_overlap_width << " px";
  return out.str();
}

VideoVaeDecoder::VideoVaeDecoder(VideoVaeConfig config, std::map<std::string, at::Tensor> t)
    : config_(std::move(config)), device_(at::kCPU) {
  config_.validate("video VAE config");
  for (const auto& spec : video_vae_parameter_specs(config_)) {
    if (!spec.decoder) continue;
    auto it = t.find(spec.name);
    if (it == t.end()) throw InputError("video VAE: missing decoder tensor '" + spec.name + "'");
    if (it->second.sizes().vec() != spec.shape) {
      throw InputError("video VAE: tensor '" + spec.name + "' has shape " +
                       c10::str(it->second.sizes()) + ", the config implies " +
                       c10::str(at::IntArrayRef(spec.shape)));
    }
  }
  auto w = std::make_shared<Weights>();
  w->post_quant_w = take_video(t, "post_quant_conv.weight");
  w->post_quant_b = take_video(t, "post_quant_conv.bias");
  device_ = w->post_quant_w.device();
  w->proj_in_w = take_video(t, "decoder.proj_in.weight");
  w->proj_in_b = take_video(t, "decoder.proj_in.bias");
  w->register_tokens = take_video(t, "decoder.register_tokens");
  for (int64_t k = 0; k < config_.decoder_num_layers; ++k) {
    const std::string p = "decoder.transformer_blocks." + std::to_string(k) + ".";
    Weights::Block b;
    b.norm1 = take_video(t, p + "norm1.weight");
    b.to_q_w = take_video(t, p + "attn.to_q.weight");
    b.to_q_b = take_video(t, p + "attn.to_q.bias");
    b.to_k_w = take_video(t, p + "attn.to_k.weight");
    b.to_k_b = take_video(t, p + "attn.to_k.bias");
    b.to_v_w = take_video(t, p + "attn.to_v.weight");
    b.to_v_b = take_video(t, p + "attn.to_v.bias");
    b.to_out_w = take_video(t, p + "attn.to_out.0.weight");
    b.to_out_b = take_video(t, p + "attn.to_out.0.bias");
    b.scale1 = take_video(t, p + "scale1");
    b.norm2 = take_video(t, p + "norm2.weight");
    b.ff_in_w = take_video(t, p + "ff.net.0.proj.weight");
    b.ff_in_b = take_video(t, p + "ff.net.0.proj.bias");
    b.ff_out_w = take_video(t, p + "ff.net.2.weight");
    b.ff_out_b = take_video(t, p + "ff.net.2.bias");
    b.scale2 = take_video(t, p + "scale2");
    w->blocks.push_back(std::move(b));
  }
  w->norm_out_w = take_video(t, "decoder.norm_out.weight");
  w->norm_out_b = take_video(t, "decoder.norm_out.bias");
  w->proj_out_w = take_video(t, "decoder.proj_out.weight");
  w->proj_out_b = take_video(t, "decoder.proj_out.bias");
  // inv_freq = 1 / theta^(arange(0, 1, 6 / rope_dim)) in fp32, as the module's buffer.
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device_);
  at::Tensor exponents = at::arange(0.0, 1.0, 6.0 / static_cast<double>(config_.rope_dim()), f32);
  w->inv_freq = at::mul(at::reciprocal(at::pow(config_.decoder_rope_theta, exponents)), 1.0);
  w_ = std::move(w);
}

VideoVaeDecoder VideoVaeDecoder::load(const std::filesystem::path& vae_dir,
                                      const at::Device& device) {
  VideoVaeConfig config = load_video_vae_config(vae_dir / "config.json");
  auto tensors = load_decoder_tensors(vae_dir, video_vae_parameter_specs(config), device);
  return VideoVaeDecoder(std::move(config), std::move(tensors));
}

at::Tensor VideoVaeDecoder::vit(const at::Tensor& x) const {
  const Weights& w = *w_;
  const int64_t B = x.size(0), C = x.size(1), T = x.size(2), H = x.size(3), W = x.size(4);
  const int64_t heads = config_.decoder_num_attention_heads;
  const int64_t head_dim = config_.decoder_attention_head_dim;
  const double eps = config_.decoder_norm_eps;

  // 1. Tokens: one per latent voxel, then the register tokens and one zero token.
  at::Tensor hs =
      at::linear(x.permute({0, 2, 3, 4, 1}).reshape({B, T * H * W, C}), w.proj_in_w, w.proj_in_b);
  const int64_t num_patches = hs.size(1);
  at::Tensor registers = w.register_tokens.expand({B, -1, -1});
  hs = at::cat({hs, registers, at::zeros_like(hs.narrow(1, 0, 1))}, 1);

  // 2. RoPE tables: per-axis centred coordinates in [-1, 1), registers at the origin.
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(x.device());
  auto grid = [&](int64_t size) {
    return at::sub(
        at::mul(at::div(at::arange(0.5, static_cast<double>(size), 1.0, f32), size), 2.0), 1.0);
  };
  at::Tensor pos = at::stack(at::meshgrid({grid(T), grid(H), grid(W)}, "ij"), -1).flatten(0, 2);
  pos = pos.unsqueeze(0).expand({B, -1, -1});
  pos =
      at::cat({pos, at::zeros({B, config_.decoder_num_register_tokens + 1, 3}, pos.options())}, 1);
  at::Tensor angles =
      at::mul(at::mul(pos.unsqueeze(-1), 2.0 * M_PI), w.inv_freq.view({1, 1, 1, -1}));
  angles = angles.flatten(2, 3).repeat({1, 1, 2}).unsqueeze(2);
  const at::Tensor cos = angles.cos(), sin = angles.sin();

  // 3. Blocks: pre-norm attention and SwiGLU, each scaled by a learned per-channel factor.
  const int64_t S = hs.size(1);
  for (const Weights::Block& b : w.blocks) {
    at::Tensor n = torch_rms_norm(hs.to(at::kFloat), b.norm1, eps).to(hs.scalar_type());
    at::Tensor q = at::linear(n, b.to_q_w, b.to_q_b).view({B, S, heads, head_dim});
    at::Tensor k = at::linear(n, b.to_k_w, b.to_k_b).view({B, S, heads, head_dim});
    at::Tensor v = at::linear(n, b.to_v_w, b.to_v_b).view({B, S, heads, head_dim});
    q = torch_rms_norm(q.to(at::kFloat), std::nullopt, eps).to(q.scalar_type());
    k = torch_rms_norm(k.to(at::kFloat), std::nullopt, eps).to(k.scalar_type());
    q = rope(q, cos, sin);
    k = rope(k, cos, sin);
    at::Tensor o = attention(q, k, v).flatten(2, 3);
    hs = at::add(hs, at::mul(at::linear(o, b.to_out_w, b.to_out_b), b.scale1));
    n = torch_rms_norm(hs.to(at::kFloat), b.norm2, eps).to(hs.scalar_type());
    auto halves = at::linear(n, b.ff_in_w, b.ff_in_b).chunk(2, -1);
    at::Tensor f = at::linear(at::mul(halves[0], at::silu(halves[1])), b.ff_out_w, b.ff_out_b);
    hs = at::add(hs, at::mul(f, b.scale2));
  }

  // 4. Output: LayerNorm, projection to pixel blocks, registers dropped, blocks unfolded.
  hs = at::layer_norm(hs, {hs.size(-1)}, w.norm_out_w, w.norm_out_b, eps);
  hs = at::linear(hs, w.proj_out_w, w.proj_out_b).narrow(1, 0, num_patches);
  const int64_t pt = config_.temporal_ratio(), p = config_.spatial_ratio(),
                oc = config_.out_channels;
  hs = hs.view({B, T, H, W, oc, pt, p, p}).permute({0, 4, 1, 5, 2, 6, 3, 7}).contiguous();
  return hs.reshape({B, oc, T * pt, H * p, W * p});
}

at::Tensor VideoVaeDecoder::decode_clip(const at::Tensor& z) const {
  at::NoGradGuard no_grad;
  return vit(at::conv3d(z, w_->post_quant_w, w_->post_quant_b));
}

at::Tensor VideoVaeDecoder::decode_tiled(const at::Tensor& z, const VideoTiling& tiling) const {
  if (!tiling.enabled) return decode_clip(z);
  const int64_t r = config_.spatial_ratio();
  const Tiles ys = split_tiles(z.size(-2) * r, tiling.tile_height, tiling.min_overlap_height, r);
  const Tiles xs = split_tiles(z.size(-1) * r, tiling.tile_width, tiling.min_overlap_width, r);
  std::vector<std::vector<at::Tensor>> rows;
  for (std::size_t i = 0; i < ys.starts.size(); ++i) {
    std::vector<at::Tensor> row;
    for (std::size_t j = 0; j < xs.starts.size(); ++j) {
      const int64_t y0 = ys.starts[i] / r, x0 = xs.starts[j] / r;
      at::Tensor tile =
          py_slice(py_slice(z, -2, y0, y0 + ys.lengths[i] / r), -1, x0, x0 + xs.lengths[j] / r);
      row.push_back(decode_clip(tile));
    }
    rows.push_back(std::move(row));
  }
  return stitch(rows, ys.overlaps, xs.overlaps);
}

at::Tensor VideoVaeDecoder::decode(const at::Tensor& z_in, const VideoTiling& tiling,
                                   bool autocast_fp16) const {
  const VideoVaeConfig& c = config_;
  if (z_in.dim() != 5 || z_in.size(1) != c.latent_channels) {
    throw InputError("video latents: expected (B, " + std::to_string(c.latent_channels) +
                     ", T, h, w), got " + c10::str(z_in.sizes()));
  }
  tiling.validate(c.spatial_ratio(), "video decode tiling");
  const int64_t chunk = c.tokens_chunk_size(), drop = c.token_drop, ratio_t = c.temporal_ratio();
  const int64_t chunk_frames = chunk * ratio_t;
  const int64_t num_tokens = z_in.size(2) + drop;
  const int64_t pad_tokens = py_mod(-num_tokens, chunk);
  const int64_t num_chunks = (num_tokens + pad_tokens) / chunk - (drop > 0 ? 1 : 0);
  if (num_chunks < 1 || z_in.size(3) < 1 || z_in.size(4) < 1) {
    throw InputError("video latents " + c10::str(z_in.sizes()) +
                     ": too few latent frames for one "
                     "chunk (at least " +
                     std::to_string(chunk - drop + 1) + ")");
  }
  if (autocast_fp16 && !z_in.is_cuda()) {
    throw InputError("video decode: float16 autocast is only available on CUDA");
  }
  at::NoGradGuard no_grad;
  CudaAutocastScope autocast(autocast_fp16);
  at::Tensor z = z_in.to(device_, at::kFloat);

  // 1. Repeat the last latent frame up to whole chunks.
  if (pad_tokens > 0) {
    z = at::cat({z, py_slice(z, 2, -1, z.size(2)).repeat({1, 1, pad_tokens, 1, 1})}, 2);
  }
  // 2. Decode overlapping chunks; each yields its frames and the tail that fades into the next.
  std::vector<at::Tensor> decoded;
  std::optional<at::Tensor> overlap;
  for (int64_t i = 0; i < num_chunks; ++i) {
    const int64_t start = i * chunk;
    at::Tensor clip =
        decode_tiled(py_slice(z, 2, start, start + chunk + c.token_overlap()), tiling);
    for (int64_t j = 0; j < (drop > 0 ? 2 : 1); ++j) {
      const int64_t frame_start = j * chunk_frames;
      at::Tensor part = py_slice(clip, 2, frame_start, frame_start + chunk_frames);
      part = py_slice(part, 2, c.frame_pre_padding(), part.size(2));
      if (j == 0) {
        if (overlap) part = blend(*overlap, part, c.frame_overlap(), -3);
        decoded.push_back(part);
      } else {
        overlap = part;
      }
    }
  }
  if (overlap) decoded.push_back(*overlap);
  at::Tensor dec = at::cat(decoded, 2);

  // 3. Drop the frames the repeated latents produced.
  if (pad_tokens > 0) {
    const int64_t intra_tail = c.clip_length % ratio_t;
    const int64_t before_pad = z.size(2) - pad_tokens;
    int64_t pad_frames = 0;
    for (int64_t k = 0; k < pad_tokens; ++k) {
      pad_frames += intra_tail != 0 && (before_pad + k) % chunk == 0 ? intra_tail : ratio_t;
    }
    dec = py_slice(dec, 2, 0, -pad_frames);
  }
  return dec.to(at::kFloat);
}

}  // namespace h3p::model
