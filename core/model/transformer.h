#pragma once
// The MiniMax-H3 transformer forward (one call), written once over GroupOps: every arithmetic
// step runs through the OpSet of its operator group; this file only does structural work
// (views, index_copy/index_select, casts the diffusers code performs).
#include <ATen/core/Tensor.h>

#include <functional>

#include "core/model/weights.h"
#include "core/ops/group_ops.h"

namespace h3p::model {

// The forward arguments under diffusers' names, batch dimension 1 as diffusers has it.
struct CallInputs {
  at::Tensor hidden_states;          // (1, Nv, C*4) video rows, any float dtype
  at::Tensor audio_hidden_states;    // (1, Na, audio_in_channels)
  at::Tensor encoder_hidden_states;  // (1, L, text_dim)
  at::Tensor timestep;               // (n,) f32, distinct values in [0, 1]
  at::Tensor timestep_indices;       // (S,) i64
  at::Tensor token_tags;             // (S,) i64: 0 video, 1 text, 2 audio
  at::Tensor position_ids;           // (S, 3), f64 in the pipeline
  at::Tensor video_indices;          // (Nv,) i64
  at::Tensor audio_indices;          // (Na,) i64
  at::Tensor text_indices;           // (L,) i64
};

struct CallOutputs {
  at::Tensor sample;        // (1, Nv, C*4) f32
  at::Tensor audio_sample;  // (1, Na, audio_in_channels) f32
};

// The diffusers names of the inputs, in the canonical order used for digests and call files.
const std::vector<std::string>& call_input_names();
// The names of the outputs in a call file: sample, audio_sample.
const std::vector<std::string>& call_output_names();

// Checks shapes, dtypes and index ranges of a call against `config`; throws InputError
// naming `origin` and the argument.
void validate_call(const CallInputs& inputs, const TransformerConfig& config,
                   const std::string& origin);

// Observes named intermediate tensors of one forward, in order: "video_embeds",
// "audio_embeds", "text_embeds" (context_embedder), "refiner.<i>.attn|ff|out",
// "refiner.final", "temb", "blocks.<i>.attn|ff|out" (attention and feed-forward branch
// outputs and the residual stream after the block), "norm_out", "sample", "audio_sample".
// The names match diffusers module outputs (see tools/golden/trace_diffusers.py), so two
// implementations can be compared stage by stage.
using CallTrace = std::function<void(const std::string& name, const at::Tensor& value)>;

// What every block of one call shares, computed once by Transformer::prepare(). All tensors
// live on the weights' device.
struct CallContext {
  at::Tensor cos, sin;           // RoPE tables (S, 6F) fp32
  at::Tensor temb;               // one timestep embedding per distinct noise level (n, D)
  at::Tensor adaln_rows;         // (S,) i64: row -> AdaLN table row (timestep * 3 + modality)
  at::Tensor timestep_indices;   // (S,) i64
  at::Tensor video_indices;      // (Nv,) i64
  at::Tensor audio_indices;      // (Na,) i64
  at::Tensor x;                  // (S, hidden) the packed residual stream entering block 0
};

class Transformer {
 public:
  Transformer(TransformerConfig config, TransformerWeights weights);

  const TransformerConfig& config() const { return config_; }
  const TransformerWeights& weights() const { return weights_; }
  // The dtype the blocks' attention runs in: q = x·Wq in the projections' dtype, then RMSNorm
  // with norm_q (which promotes). The stream's dtype where the model has no blocks.
  at::ScalarType attention_dtype() const;

  // One forward: prepare(), every block() in order, head(). Inputs are moved to the weights'
  // device; outputs stay there.
  CallOutputs forward(const CallInputs& inputs, const ops::GroupOps& ops,
                      const CallTrace& trace = {}) const;

  // The part of a forward before the blocks: RoPE tables, embeddings, token refiner, packed
  // sequence, timestep embedding and AdaLN row map (emits the stages up to "temb").
  CallContext prepare(const CallInputs& inputs, const ops::GroupOps& ops,
                      const CallTrace& trace = {}) const;
  // Block `index` (0-based, < config().num_layers) on the residual stream `x` (S, hidden);
  // returns the stream after the block (emits "blocks.<index>.attn|ff|out").
  at::Tensor block(std::size_t index, const at::Tensor& x, const CallContext& context,
                   const ops::GroupOps& ops, const CallTrace& trace = {}) const;
  // The output head on the stream after the last block (emits "norm_out", "sample",
  // "audio_sample"); outputs fp32 with the batch dimension.
  CallOutputs head(const at::Tensor& x, const CallContext& context, const ops::GroupOps& ops,
                   const CallTrace& trace = {}) const;

 private:
  at::Tensor attention(const ops::OpSet& gemm_ops, const ops::GroupOps& ops, bool refiner,
                       const AttentionWeights& w, const at::Tensor& x, const at::Tensor* cos,
                       const at::Tensor* sin) const;

  TransformerConfig config_;
  TransformerWeights weights_;
};

}  // namespace h3p::model
