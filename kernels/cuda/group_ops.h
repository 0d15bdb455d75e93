#pragma once
// The candidate's CUDA kernels as an OpSet, one operator group at a time, so that any group can
// be swapped back to the provider on a GPU (`candidate:attention=provider --device cuda`,
// `ablate --device cuda`). Each primitive is the kernel the fused block (candidate_block.h)
// runs for that step, with the same options (pingpong-overlapped attention, 176-key tiles,
// cuBLASLt with one algorithm per shape, the provider_fused_norm rounding points):
//   gemm       linear            LtGemm (q, k and v as three GEMMs, the fused block stacks them)
//   attention  attention         attention_bf16
//   swiglu     swiglu            swiglu
//   norm       norm_modulate     residual_norm_modulate without a residual
//   residual   gated_residual    gated_residual
//   qk_norm    rms_norm (heads)  head_norm_rope, norm step
//   rope       rope              head_norm_rope, rope step
//   adaln      silu, linear,     silu_f32, LtGemm with bias, and the row gather (an exact copy,
//              gather_rows       done by index_select)
// bf16 CUDA tensors only (silu also fp32), head dimension 128; anything else is an InputError
// naming the primitive. The embedding and output-head groups have no kernels of their own:
// on CUDA they run the provider's ops (runs/call_runner.h), as in the fused call.
#include "core/ops/op_set.h"

namespace h3p::kernels::cuda {

// The per-group CUDA candidate (name "candidate"). Thread-safe to share; calls are ordered on
// the current CUDA stream.
ops::OpSetPtr make_candidate_group_ops();

}  // namespace h3p::kernels::cuda
