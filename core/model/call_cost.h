#pragma once
// Arithmetic cost of one transformer call, for benchmarks (GFLOP/s) and capacity planning.
#include <cstdint>

#include "core/model/config.h"

namespace h3p::model {

struct CallCost {
  double gemm_flops = 0;       // every linear layer (blocks, refiner, embeddings, heads)
  double attention_flops = 0;  // q·kᵀ and p·v of the blocks and the refiner
  double total() const { return gemm_flops + attention_flops; }
};

// For a packed sequence of `sequence_length` rows of which `text_rows` are text, with
// `timesteps` distinct timesteps. Multiply-adds count as two flops.
CallCost call_cost(const TransformerConfig& config, int64_t sequence_length, int64_t text_rows,
                   int64_t timesteps = 1);

}  // namespace h3p::model
