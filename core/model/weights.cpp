#include "core/model/weights.h"

#include <ATen/ATen.h>

#include <cmath>

#include "core/common/error.h"
#include "core/io/aten_bridge.h"
#include "core/io/tensor_store.h"
#include "core/model/seeded_weights.h"
#include "core/model/tensor_map.h"

namespace h3p::model {
namespace {

constexpr const char* kWeightsStem = "diffusion_pytorch_model";

void add_attention(std::vector<ParamSpec>& out, const std::string& prefix,
                   const TransformerConfig& c) {
  const int64_t h = c.hidden_size, inner = c.inner_dim(), d = c.attention_head_dim;
  out.push_back({prefix + "to_q.weight", {inner, h}, io::DType::BF16, ParamKind::weight, h});
  out.push_back({prefix + "to_k.weight", {inner, h}, io::DType::BF16, ParamKind::weight, h});
  out.push_back({prefix + "to_v.weight", {inner, h}, io::DType::BF16, ParamKind::weight, h});
  out.push_back({prefix + "norm_q.weight", {d}, io::DType::BF16, ParamKind::norm_weight, d});
  out.push_back({prefix + "norm_k.weight", {d}, io::DType::BF16, ParamKind::norm_weight, d});
  out.push_back({prefix + "to_out.0.weight", {h, inner}, io::DType::BF16, ParamKind::weight, inner});
}

void add_block_common(std::vector<ParamSpec>& out, const std::string& prefix,
                      const TransformerConfig& c) {
  const int64_t h = c.hidden_size, f = c.ffn_dim;
  out.push_back({prefix + "norm1.weight", {h}, io::DType::BF16, ParamKind::norm_weight, h});
  add_attention(out, prefix + "attn.", c);
  out.push_back({prefix + "norm2.weight", {h}, io::DType::BF16, ParamKind::norm_weight, h});
  out.push_back({prefix + "ff.net.0.proj.weight", {2 * f, h}, io::DType::BF16, ParamKind::weight, h});
  out.push_back({prefix + "ff.net.2.weight", {h, f}, io::DType::BF16, ParamKind::weight, f});
}

// Removes `name` from `t`; InputError naming it when absent.
at::Tensor take_weight(std::map<std::string, at::Tensor>& t, const std::string& name) {
  return take_tensor(t, name, "transformer: missing tensor");
}

AttentionWeights take_attention(std::map<std::string, at::Tensor>& t, const std::string& p) {
  return {take_weight(t, p + "to_q.weight"),   take_weight(t, p + "to_k.weight"),
          take_weight(t, p + "to_v.weight"),   take_weight(t, p + "to_out.0.weight"),
          take_weight(t, p + "norm_q.weight"), take_weight(t, p + "norm_k.weight")};
}

// Moves to_q, to_k, to_v into one allocation, rows stacked, and makes each a view of its rows:
// a fused QKV GEMM then reads them in place (stacked_qkv) instead of holding a stacked copy,
// which at full size is 8.7 GB over the 50 blocks. Left apart where dtypes or devices differ
// or a block would start off a 256-byte boundary (a GEMM's kernel choice can depend on it).
void share_qkv_storage(AttentionWeights& a) {
  const at::Tensor& q = a.to_q;
  if (q.dim() != 2 || (q.numel() * q.element_size()) % 256 != 0) return;
  for (const at::Tensor* t : {&a.to_k, &a.to_v}) {
    if (t->scalar_type() != q.scalar_type() || t->device() != q.device() ||
        t->sizes() != q.sizes()) {
      return;
    }
  }
  const at::Tensor stacked = at::cat({a.to_q, a.to_k, a.to_v}, 0);
  const int64_t rows = q.size(0);
  a.to_q = stacked.narrow(0, 0, rows);
  a.to_k = stacked.narrow(0, rows, rows);
  a.to_v = stacked.narrow(0, 2 * rows, rows);
}

FeedForwardWeights take_ff(std::map<std::string, at::Tensor>& t, const std::string& p) {
  return {take_weight(t, p + "ff.net.0.proj.weight"), take_weight(t, p + "ff.net.2.weight")};
}

}  // namespace

std::vector<ParamSpec> parameter_specs(const TransformerConfig& c) {
  using io::DType;
  const int64_t h = c.hidden_size;
  std::vector<ParamSpec> out;
  out.push_back({"proj_in.weight", {h, c.video_patch_dim()}, DType::F32, ParamKind::weight,
                 c.video_patch_dim()});
  out.push_back({"proj_in.bias", {h}, DType::F32, ParamKind::bias, c.video_patch_dim()});
  out.push_back({"audio_proj_in.weight", {h, c.audio_in_channels}, DType::F32, ParamKind::weight,
                 c.audio_in_channels});
  out.push_back({"audio_proj_in.bias", {h}, DType::F32, ParamKind::bias, c.audio_in_channels});
  out.push_back({"context_embedder.weight", {h, c.text_dim}, DType::BF16, ParamKind::weight,
                 c.text_dim});
  out.push_back({"context_embedder.bias", {h}, DType::BF16, ParamKind::bias, c.text_dim});
  out.push_back({"time_embedder.linear_1.weight", {c.time_embed_hidden_dim, c.freq_dim},
                 DType::F32, ParamKind::weight, c.freq_dim});
  out.push_back({"time_embedder.linear_1.bias", {c.time_embed_hidden_dim}, DType::F32,
                 ParamKind::bias, c.freq_dim});
  out.push_back({"time_embedder.linear_2.weight", {c.time_embed_dim, c.time_embed_hidden_dim},
                 DType::F32, ParamKind::weight, c.time_embed_hidden_dim});
  out.push_back({"time_embedder.linear_2.bias", {c.time_embed_dim}, DType::F32, ParamKind::bias,
                 c.time_embed_hidden_dim});
  for (int64_t i = 0; i < c.num_refiner_layers; ++i) {
    add_block_common(out, "token_refiner.refiner_blocks." + std::to_string(i) + ".", c);
  }
  out.push_back({"token_refiner.final_norm.weight", {h}, DType::BF16, ParamKind::norm_weight, h});
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "transformer_blocks." + std::to_string(i) + ".";
    add_block_common(out, p, c);
    out.push_back({p + "adaln_proj.linear.weight", {18 * h, c.time_embed_dim}, DType::BF16,
                   ParamKind::weight, c.time_embed_dim});
    out.push_back({p + "adaln_proj.linear.bias", {18 * h}, DType::BF16, ParamKind::bias,
                   c.time_embed_dim});
  }
  out.push_back({"norm_out.norm.weight", {h}, DType::BF16, ParamKind::norm_weight, h});
  out.push_back({"norm_out.linear.weight", {2 * h, c.time_embed_dim}, DType::BF16,
                 ParamKind::weight, c.time_embed_dim});
  out.push_back({"norm_out.linear.bias", {2 * h}, DType::BF16, ParamKind::bias, c.time_embed_dim});
  out.push_back({"proj_out.weight", {c.video_patch_dim(), h}, DType::F32, ParamKind::weight, h});
  out.push_back({"proj_out.bias", {c.video_patch_dim()}, DType::F32, ParamKind::bias, h});
  out.push_back({"audio_proj_out.weight", {c.audio_in_channels, h}, DType::F32, ParamKind::weight,
                 h});
  out.push_back({"audio_proj_out.bias", {c.audio_in_channels}, DType::F32, ParamKind::bias, h});
  return out;
}

TransformerWeights assemble_weights(const TransformerConfig& config,
                                    std::map<std::string, at::Tensor> tensors,
                                    const std::string& origin) {
  for (const ParamSpec& spec : parameter_specs(config)) {
    auto it = tensors.find(spec.name);
    if (it == tensors.end()) throw_input(origin, "missing parameter '" + spec.name + "'");
    const at::Tensor& t = it->second;
    if (t.sizes().vec() != spec.shape) {
      throw_input(origin, "parameter '" + spec.name + "' has shape " + c10::str(t.sizes()) +
                              ", the config implies " + c10::str(at::IntArrayRef(spec.shape)));
    }
    if (!at::isFloatingType(t.scalar_type())) {
      throw_input(origin, "parameter '" + spec.name + "' is not floating point");
    }
  }
  if (tensors.size() != parameter_specs(config).size()) {
    for (const auto& [name, t] : tensors) {
      bool known = false;
      for (const ParamSpec& spec : parameter_specs(config)) known = known || spec.name == name;
      if (!known) throw_input(origin, "unexpected parameter '" + name + "' for this config");
    }
  }
  TransformerWeights w;
  w.proj_in_w = take_weight(tensors, "proj_in.weight");
  w.proj_in_b = take_weight(tensors, "proj_in.bias");
  w.audio_proj_in_w = take_weight(tensors, "audio_proj_in.weight");
  w.audio_proj_in_b = take_weight(tensors, "audio_proj_in.bias");
  w.context_embedder_w = take_weight(tensors, "context_embedder.weight");
  w.context_embedder_b = take_weight(tensors, "context_embedder.bias");
  w.time_linear_1_w = take_weight(tensors, "time_embedder.linear_1.weight");
  w.time_linear_1_b = take_weight(tensors, "time_embedder.linear_1.bias");
  w.time_linear_2_w = take_weight(tensors, "time_embedder.linear_2.weight");
  w.time_linear_2_b = take_weight(tensors, "time_embedder.linear_2.bias");
  for (int64_t i = 0; i < config.num_refiner_layers; ++i) {
    const std::string p = "token_refiner.refiner_blocks." + std::to_string(i) + ".";
    RefinerBlockWeights b;
    b.norm1 = take_weight(tensors, p + "norm1.weight");
    b.norm2 = take_weight(tensors, p + "norm2.weight");
    b.attn = take_attention(tensors, p + "attn.");
    b.ff = take_ff(tensors, p);
    w.refiner.push_back(std::move(b));
  }
  w.refiner_final_norm = take_weight(tensors, "token_refiner.final_norm.weight");
  for (int64_t i = 0; i < config.num_layers; ++i) {
    const std::string p = "transformer_blocks." + std::to_string(i) + ".";
    BlockWeights b;
    b.norm1 = take_weight(tensors, p + "norm1.weight");
    b.norm2 = take_weight(tensors, p + "norm2.weight");
    b.attn = take_attention(tensors, p + "attn.");
    share_qkv_storage(b.attn);
    b.ff = take_ff(tensors, p);
    b.adaln_weight = take_weight(tensors, p + "adaln_proj.linear.weight");
    b.adaln_bias = take_weight(tensors, p + "adaln_proj.linear.bias");
    w.blocks.push_back(std::move(b));
  }
  w.norm_out_norm = take_weight(tensors, "norm_out.norm.weight");
  w.norm_out_linear_w = take_weight(tensors, "norm_out.linear.weight");
  w.norm_out_linear_b = take_weight(tensors, "norm_out.linear.bias");
  w.proj_out_w = take_weight(tensors, "proj_out.weight");
  w.proj_out_b = take_weight(tensors, "proj_out.bias");
  w.audio_proj_out_w = take_weight(tensors, "audio_proj_out.weight");
  w.audio_proj_out_b = take_weight(tensors, "audio_proj_out.bias");
  return w;
}

at::Tensor stacked_qkv(const AttentionWeights& a) {
  const at::Tensor& q = a.to_q;
  if (!q.defined() || q.dim() != 2 || !q.is_contiguous()) return {};
  const int64_t bytes = q.numel() * q.element_size();
  auto* const base = static_cast<const char*>(q.data_ptr());
  for (int i = 1; i < 3; ++i) {
    const at::Tensor& t = i == 1 ? a.to_k : a.to_v;
    if (!t.defined() || t.scalar_type() != q.scalar_type() || t.device() != q.device() ||
        t.sizes() != q.sizes() || !t.is_contiguous() || !t.storage().is_alias_of(q.storage()) ||
        static_cast<const char*>(t.data_ptr()) != base + i * bytes) {
      return {};
    }
  }
  return q.as_strided({3 * q.size(0), q.size(1)}, {q.size(1), 1});
}

at::Tensor param_value(const ParamSpec& spec, const at::Tensor& unit_normal) {
  switch (spec.kind) {
    case ParamKind::weight:
      return at::mul(unit_normal, 1.0 / std::sqrt(static_cast<double>(spec.fan_in)));
    case ParamKind::bias:
      return at::mul(unit_normal, 0.02);
    case ParamKind::norm_weight:
      return at::add(at::mul(unit_normal, 0.05), 1.0);
  }
  throw InputError("no initialisation rule for parameter '" + spec.name + "'");
}

LoadedTransformer load_transformer(const std::filesystem::path& transformer_dir,
                                   const at::Device& device) {
  LoadedTransformer out;
  out.dir = transformer_dir;
  out.config = load_transformer_config(transformer_dir / "config.json");
  if (const auto record = io::read_seed_record(transformer_dir)) {
    std::map<std::string, at::Tensor> tensors;
    for (const ParamSpec& spec : parameter_specs(out.config)) {
      const at::Tensor unit = seeded_unit_normal(spec.shape, record->seed, spec.name, device);
      const io::DType dtype = record->all_fp32 ? io::DType::F32 : spec.checkpoint_dtype;
      tensors.emplace(spec.name, param_value(spec, unit).to(io::to_scalar_type(dtype)));
    }
    out.weights = assemble_weights(out.config, std::move(tensors), transformer_dir.string());
    return out;
  }
  io::TensorStore store = io::TensorStore::open(transformer_dir, kWeightsStem);
  std::map<std::string, at::Tensor> tensors;
  for (const std::string& name : store.names()) {
    io::StoredTensor st = store.at(name);
    tensors.emplace(name, io::load_tensor(*st.file, *st.info).to(device));
  }
  out.weights = assemble_weights(out.config, std::move(tensors), transformer_dir.string());
  return out;
}

}  // namespace h3p::model
