#include "core/model/transformer.h"

#include <ATen/ATen.h>

#include <tuple>

#include "core/common/error.h"

namespace h3p::model {
namespace {

using ops::Group;

// Rows of the AdaLN table per (timestep, modality): 0 video, 1 text, 2 audio.
constexpr int64_t kModalities = 3;

// RoPE tables (S, 6F) fp32 from (S, 3) positions, as MiniMaxH3RotaryPosEmbed computes them.
std::pair<at::Tensor, at::Tensor> rope_tables(const at::Tensor& position_ids,
                                              const TransformerConfig& c) {
  // inv_freq is a buffer computed on the CPU when the module is built, then moved.
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  at::Tensor exponents = at::div(at::arange(0, 2 * c.rope_freq_dim, 2, f32), 2 * c.rope_freq_dim);
  at::Tensor inv_freq = at::mul(at::reciprocal(at::pow(c.rope_theta, exponents)), 1.0)
                            .to(position_ids.device());
  at::Tensor pos = position_ids.to(at::kFloat);
  at::Tensor freqs = at::mul(pos.unsqueeze(-1), inv_freq.view({1, 1, -1}));  // (S, 3, F)
  auto axes = freqs.unbind(1);
  at::Tensor cat = at::cat({axes[0], axes[1], axes[2]}, -1);
  cat = at::cat({cat, cat}, -1);
  return {at::cos(cat), at::sin(cat)};
}

void check(bool ok, const std::string& origin, const std::string& what) {
  if (!ok) throw_input(origin, what);
}

}  // namespace

const std::vector<std::string>& call_input_names() {
  static const std::vector<std::string> names = {
      "hidden_states",  "audio_hidden_states", "encoder_hidden_states", "timestep",
      "timestep_indices", "token_tags",        "position_ids",          "video_indices",
      "audio_indices",  "text_indices"};
  return names;
}

const std::vector<std::string>& call_output_names() {
  static const std::vector<std::string> names = {"sample", "audio_sample"};
  return names;
}

void validate_call(const CallInputs& in, const TransformerConfig& c, const std::string& origin) {
  auto defined = [&](const at::Tensor& t, const char* name) {
    check(t.defined(), origin, std::string("missing input '") + name + "'");
  };
  defined(in.hidden_states, "hidden_states");
  defined(in.audio_hidden_states, "audio_hidden_states");
  defined(in.encoder_hidden_states, "encoder_hidden_states");
  defined(in.timestep, "timestep");
  defined(in.timestep_indices, "timestep_indices");
  defined(in.token_tags, "token_tags");
  defined(in.position_ids, "position_ids");
  defined(in.video_indices, "video_indices");
  defined(in.audio_indices, "audio_indices");
  defined(in.text_indices, "text_indices");
  auto shape = [&](const at::Tensor& t, const char* name, std::vector<int64_t> want) {
    bool ok = t.dim() == static_cast<int64_t>(want.size());
    for (std::size_t i = 0; ok && i < want.size(); ++i) ok = want[i] < 0 || t.size(i) == want[i];
    check(ok, origin, std::string("input '") + name + "' has shape " + c10::str(t.sizes()) +
                          ", expected " + c10::str(at::IntArrayRef(want)) + " (-1: any)");
  };
  auto index_type = [&](const at::Tensor& t, const char* name) {
    check(t.scalar_type() == at::kLong, origin, std::string("input '") + name + "' must be int64");
  };
  const int64_t nv = in.hidden_states.dim() == 3 ? in.hidden_states.size(1) : -1;
  const int64_t na = in.audio_hidden_states.dim() == 3 ? in.audio_hidden_states.size(1) : -1;
  const int64_t nt = in.encoder_hidden_states.dim() == 3 ? in.encoder_hidden_states.size(1) : -1;
  shape(in.hidden_states, "hidden_states", {1, -1, c.video_patch_dim()});
  shape(in.audio_hidden_states, "audio_hidden_states", {1, -1, c.audio_in_channels});
  shape(in.encoder_hidden_states, "encoder_hidden_states", {1, -1, c.text_dim});
  check(at::isFloatingType(in.hidden_states.scalar_type()) &&
            at::isFloatingType(in.audio_hidden_states.scalar_type()) &&
            at::isFloatingType(in.encoder_hidden_states.scalar_type()),
        origin, "latent and text inputs must be floating point");
  shape(in.position_ids, "position_ids", {-1, 3});
  const int64_t s = in.position_ids.size(0);
  check(s == nv + na + nt, origin,
        "position_ids has " + std::to_string(s) + " rows but video+audio+text rows are " +
            std::to_string(nv + na + nt));
  shape(in.timestep, "timestep", {-1});
  check(at::isFloatingType(in.timestep.scalar_type()), origin, "input 'timestep' must be float");
  shape(in.timestep_indices, "timestep_indices", {s});
  shape(in.token_tags, "token_tags", {s});
  shape(in.video_indices, "video_indices", {nv});
  shape(in.audio_indices, "audio_indices", {na});
  shape(in.text_indices, "text_indices", {nt});
  index_type(in.timestep_indices, "timestep_indices");
  index_type(in.token_tags, "token_tags");
  index_type(in.video_indices, "video_indices");
  index_type(in.audio_indices, "audio_indices");
  index_type(in.text_indices, "text_indices");
  auto range = [&](const at::Tensor& t, const char* name, int64_t hi) {
    if (t.numel() == 0) return;
    check(t.min().item<int64_t>() >= 0 && t.max().item<int64_t>() < hi, origin,
          std::string("input '") + name + "' has values outside [0, " + std::to_string(hi) + ")");
  };
  range(in.timestep_indices, "timestep_indices", in.timestep.size(0));
  range(in.token_tags, "token_tags", kModalities);
  range(in.video_indices, "video_indices", s);
  range(in.audio_indices, "audio_indices", s);
  range(in.text_indices, "text_indices", s);
  at::Tensor all = at::cat({in.video_indices, in.audio_indices, in.text_indices}).cpu();
  check(std::get<0>(at::_unique(all)).numel() == s, origin,
        "video_indices, audio_indices and text_indices must cover every row exactly once");
}

Transformer::Transformer(TransformerConfig config, TransformerWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {}

at::ScalarType Transformer::attention_dtype() const {
  if (weights_.blocks.empty()) return weights_.context_embedder_w.scalar_type();
  const AttentionWeights& a = weights_.blocks.front().attn;
  return at::promote_types(a.to_q.scalar_type(), a.norm_q.scalar_type());
}

at::Tensor Transformer::attention(const ops::OpSet& gemm_ops, const ops::GroupOps& ops,
                                  bool refiner, const AttentionWeights& w, const at::Tensor& x,
                                  const at::Tensor* cos, const at::Tensor* sin) const {
  const int64_t heads = config_.num_attention_heads, d = config_.attention_head_dim;
  // The refiner runs every op as part of `embed`; the blocks use the per-group OpSets.
  const ops::OpSet& qk_ops = refiner ? ops(Group::embed) : ops(Group::qk_norm);
  const ops::OpSet& attn_ops = refiner ? ops(Group::embed) : ops(Group::attention);
  at::Tensor q = gemm_ops.linear(x, w.to_q, std::nullopt).unflatten(-1, {heads, d});
  at::Tensor k = gemm_ops.linear(x, w.to_k, std::nullopt).unflatten(-1, {heads, d});
  at::Tensor v = gemm_ops.linear(x, w.to_v, std::nullopt).unflatten(-1, {heads, d});
  q = qk_ops.rms_norm(q, w.norm_q, config_.qk_norm_eps);
  k = qk_ops.rms_norm(k, w.norm_k, config_.qk_norm_eps);
  if (cos != nullptr) {
    q = ops(Group::rope).rope(q, *cos, *sin);
    k = ops(Group::rope).rope(k, *cos, *sin);
  }
  at::Tensor o = attn_ops.attention(q, k, v).flatten(1, 2).to(q.scalar_type());
  return gemm_ops.linear(o, w.to_out, std::nullopt);
}

CallOutputs Transformer::forward(const CallInputs& raw, const ops::GroupOps& ops,
                                 const CallTrace& trace) const {
  const CallContext context = prepare(raw, ops, trace);
  at::Tensor x = context.x;
  for (std::size_t i = 0; i < weights_.blocks.size(); ++i) x = block(i, x, context, ops, trace);
  return head(x, context, ops, trace);
}

CallContext Transformer::prepare(const CallInputs& raw, const ops::GroupOps& ops,
                                 const CallTrace& trace) const {
  auto emit = [&](const std::string& name, const at::Tensor& value) {
    if (trace) trace(name, value);
  };
  const TransformerConfig& c = config_;
  const TransformerWeights& w = weights_;
  const at::Device device = w.proj_in_w.device();
  auto dev = [&](const at::Tensor& t) { return t.to(device); };
  CallContext context;
  context.timestep_indices = dev(raw.timestep_indices);
  const at::Tensor token_tags = dev(raw.token_tags);
  context.video_indices = dev(raw.video_indices);
  context.audio_indices = dev(raw.audio_indices);
  const at::Tensor text_indices = dev(raw.text_indices);
  const int64_t seq = raw.position_ids.size(0);
  const ops::OpSet& embed = ops(Group::embed);

  // 1. RoPE tables in fp32.
  std::tie(context.cos, context.sin) = rope_tables(dev(raw.position_ids), c);

  // 2. Per-modality projections (rows only: the batch dimension is 1), token refiner.
  at::Tensor video = dev(raw.hidden_states).squeeze(0).to(w.proj_in_w.scalar_type());
  at::Tensor audio = dev(raw.audio_hidden_states).squeeze(0).to(w.audio_proj_in_w.scalar_type());
  at::Tensor text = dev(raw.encoder_hidden_states).squeeze(0).to(w.context_embedder_w.scalar_type());
  at::Tensor video_embeds = embed.linear(video, w.proj_in_w, w.proj_in_b);
  at::Tensor audio_embeds = embed.linear(audio, w.audio_proj_in_w, w.audio_proj_in_b);
  at::Tensor text_embeds = embed.linear(text, w.context_embedder_w, w.context_embedder_b);
  emit("video_embeds", video_embeds);
  emit("audio_embeds", audio_embeds);
  emit("text_embeds", text_embeds);
  for (std::size_t i = 0; i < w.refiner.size(); ++i) {
    const RefinerBlockWeights& b = w.refiner[i];
    const std::string name = "refiner." + std::to_string(i);
    at::Tensor attn = attention(embed, ops, /*refiner=*/true, b.attn,
                                embed.rms_norm(text_embeds, b.norm1, c.norm_eps), nullptr, nullptr);
    emit(name + ".attn", attn);
    text_embeds = embed.add(text_embeds, attn);
    at::Tensor h = embed.linear(embed.rms_norm(text_embeds, b.norm2, c.norm_eps), b.ff.proj,
                                std::nullopt);
    at::Tensor ff = embed.linear(embed.swiglu(h), b.ff.out, std::nullopt);
    emit(name + ".ff", ff);
    text_embeds = embed.add(text_embeds, ff);
    emit(name + ".out", text_embeds);
  }
  text_embeds = embed.rms_norm(text_embeds, w.refiner_final_norm, c.final_norm_eps);
  emit("refiner.final", text_embeds);

  // 3. The packed sequence, in the text stream's dtype.
  const auto stream_dtype = text_embeds.scalar_type();
  at::Tensor x = at::zeros({seq, text_embeds.size(-1)}, text_embeds.options());
  x = x.index_copy(0, text_indices, text_embeds);
  x = x.index_copy(0, context.video_indices, video_embeds.to(stream_dtype));
  x = x.index_copy(0, context.audio_indices, audio_embeds.to(stream_dtype));
  context.x = x;

  // 4. One timestep embedding per distinct noise level, kept at the time embedder's precision.
  at::Tensor temb = embed.timestep_sinusoid(dev(raw.timestep), c.freq_dim);
  temb = temb.to(w.time_linear_1_w.scalar_type());
  temb = embed.linear(temb, w.time_linear_1_w, w.time_linear_1_b);
  temb = embed.silu(temb);
  temb = embed.linear(temb, w.time_linear_2_w, w.time_linear_2_b);
  emit("temb", temb);
  context.temb = temb;

  // 5. Row -> AdaLN table row.
  context.adaln_rows = at::add(at::mul(context.timestep_indices, kModalities), token_tags);
  return context;
}

at::Tensor Transformer::block(std::size_t index, const at::Tensor& x_in,
                              const CallContext& context, const ops::GroupOps& ops,
                              const CallTrace& trace) const {
  if (index >= weights_.blocks.size()) {
    throw InputError("transformer block " + std::to_string(index) + ": the model has " +
                     std::to_string(weights_.blocks.size()) + " blocks");
  }
  auto emit = [&](const std::string& name, const at::Tensor& value) {
    if (trace) trace(name, value);
  };
  const TransformerConfig& c = config_;
  const ops::OpSet& adaln = ops(Group::adaln);
  const ops::OpSet& gemm = ops(Group::gemm);
  const ops::OpSet& norm = ops(Group::norm);
  const ops::OpSet& residual = ops(Group::residual);
  const BlockWeights& b = weights_.blocks[index];
  at::Tensor x = x_in;
  at::Tensor act = adaln.silu(context.temb).to(b.adaln_weight.scalar_type());
  at::Tensor table = adaln.linear(act, b.adaln_weight, b.adaln_bias).view({-1, 6 * c.hidden_size});
  auto mods = table.chunk(6, -1);  // shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp
  auto row = [&](int k) { return adaln.gather_rows(mods[k], context.adaln_rows); };

  at::Tensor n = norm.norm_modulate(x, b.norm1, c.norm_eps, row(1), row(0));
  at::Tensor attn = attention(gemm, ops, /*refiner=*/false, b.attn, n, &context.cos, &context.sin);
  const std::string name = "blocks." + std::to_string(index);
  emit(name + ".attn", attn);
  x = residual.gated_residual(x, row(2), attn);

  n = norm.norm_modulate(x, b.norm2, c.norm_eps, row(4), row(3));
  at::Tensor h = ops(Group::swiglu).swiglu(gemm.linear(n, b.ff.proj, std::nullopt));
  at::Tensor ff = gemm.linear(h, b.ff.out, std::nullopt);
  emit(name + ".ff", ff);
  x = residual.gated_residual(x, row(5), ff);
  emit(name + ".out", x);
  return x;
}

CallOutputs Transformer::head(const at::Tensor& x, const CallContext& context,
                              const ops::GroupOps& ops, const CallTrace& trace) const {
  auto emit = [&](const std::string& name, const at::Tensor& value) {
    if (trace) trace(name, value);
  };
  const TransformerConfig& c = config_;
  const TransformerWeights& w = weights_;
  // Output head: norm_out modulated per timestep (not per modality), both heads on all rows.
  const ops::OpSet& head = ops(Group::head);
  at::Tensor act = head.silu(context.temb).to(w.norm_out_linear_w.scalar_type());
  auto shift_scale = head.linear(act, w.norm_out_linear_w, w.norm_out_linear_b).chunk(2, -1);
  at::Tensor out = head.norm_modulate(x, w.norm_out_norm, c.final_norm_eps,
                                      head.gather_rows(shift_scale[1], context.timestep_indices),
                                      head.gather_rows(shift_scale[0], context.timestep_indices));
  emit("norm_out", out);
  out = out.to(w.proj_out_w.scalar_type());
  at::Tensor video_out =
      head.linear(out, w.proj_out_w, w.proj_out_b).index_select(0, context.video_indices);
  at::Tensor audio_out =
      head.linear(out, w.audio_proj_out_w, w.audio_proj_out_b).index_select(0, context.audio_indices);
  emit("sample", video_out);
  emit("audio_sample", audio_out);
  return {video_out.to(at::kFloat).unsqueeze(0), audio_out.to(at::kFloat).unsqueeze(0)};
}

}  // namespace h3p::model
