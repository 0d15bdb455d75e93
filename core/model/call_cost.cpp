#include "core/model/call_cost.h"

namespace h3p::model {

CallCost call_cost(const TransformerConfig& c, int64_t s, int64_t text, int64_t timesteps) {
  const double h = static_cast<double>(c.hidden_size);
  const double inner = static_cast<double>(c.inner_dim());
  const double f = static_cast<double>(c.ffn_dim);
  // Per row of one block: q, k, v, out, up (2F), down.
  const double block_row = 2.0 * (3 * h * inner + inner * h + h * 2 * f + f * h);
  auto attention = [&](double rows) { return 4.0 * rows * rows * inner; };
  CallCost cost;
  cost.gemm_flops = c.num_layers * s * block_row + c.num_refiner_layers * text * block_row;
  cost.gemm_flops += 2.0 * (s - text) * c.video_patch_dim() * h;  // proj_in / audio_proj_in (upper bound)
  cost.gemm_flops += 2.0 * text * c.text_dim * h;                  // context_embedder
  cost.gemm_flops += 2.0 * s * h * (c.video_patch_dim() + c.audio_in_channels);  // both heads
  cost.gemm_flops += 2.0 * timesteps *
                     (c.freq_dim * c.time_embed_hidden_dim +
                      c.time_embed_hidden_dim * c.time_embed_dim +
                      (c.num_layers * 18.0 + 2.0) * h * c.time_embed_dim);
  cost.attention_flops = c.num_layers * attention(static_cast<double>(s)) +
                         c.num_refiner_layers * attention(static_cast<double>(text));
  return cost;
}

}  // namespace h3p::model
