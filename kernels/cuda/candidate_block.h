#pragma once
// The candidate transformer block on the GPU: the MiniMax-H3 block (AdaLN-modulated RMSNorm,
// fused QKV GEMM, q/k RMSNorm + RoPE, attention, output GEMM, gated residual, SwiGLU FFN) in
// eleven launches: four cuBLASLt GEMMs, the sm_90a attention kernel and the fused
// memory-bound kernels. Needs a CUDA build of LibTorch (tensors only carry the memory).
#include <ATen/core/Tensor.h>
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "core/model/weights.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/fused.h"
#include "kernels/cuda/gemm_lt.h"

namespace h3p::kernels::cuda {

// One block's weights as the fused path reads them: bf16 on the GPU, q/k/v stacked.
struct CandidateBlockWeights {
  at::Tensor qkv;               // (3·H·128, C)
  at::Tensor norm_q, norm_k;    // (128)
  at::Tensor out;               // (C, H·128)
  at::Tensor ff_proj, ff_out;   // (2F, C), (C, F)
  at::Tensor norm1, norm2;      // (C)
  at::Tensor adaln_w, adaln_b;  // (18·C, E), (18·C)

  // Shares the provider's tensors; q/k/v are read in place when assemble_weights stacked them
  // (model::stacked_qkv), else copied into one stacked tensor.
  // Throws std::invalid_argument unless every tensor is bf16 on a CUDA device.
  static CandidateBlockWeights from(const model::BlockWeights& w);
};

// The per-call inputs every block shares (CallContext's fields on the GPU).
struct CandidateBlockContext {
  at::Tensor temb;        // (T, E) fp32
  at::Tensor adaln_rows;  // (S) int64
  at::Tensor cos, sin;    // (S, R) fp32
  double norm_eps = 1e-5, qk_norm_eps = 1e-5;
};

struct CandidateBlockOptions {
  AttentionSchedule schedule = kDefaultAttentionSchedule;
  Rounding rounding = Rounding::provider_fused_norm;
  bool profile = false;  // record the time of every stage (adds events, no synchronisation)
  int key_tile = kDefaultAttentionKeyTile;  // attention key rows per pipeline stage (128, 176)
  int attention_cluster = kDefaultAttentionCluster;  // CTAs sharing each K/V load (1 or 2)
};

class CandidateBlock {
 public:
  explicit CandidateBlock(CandidateBlockOptions options = {});
  ~CandidateBlock();
  CandidateBlock(const CandidateBlock&) = delete;
  CandidateBlock& operator=(const CandidateBlock&) = delete;

  // x (S, C) bf16 → the stream after the block (a new tensor), on the current CUDA stream.
  at::Tensor forward(const CandidateBlockWeights& w, const at::Tensor& x,
                     const CandidateBlockContext& context);

  // With options.profile: (stage, milliseconds) of the last forward; synchronises its stream.
  std::vector<std::pair<std::string, float>> last_profile() const;

 private:
  void mark(const char* stage, cudaStream_t stream);

  CandidateBlockOptions options_;
  LtGemm gemm_;
  std::vector<std::pair<std::string, cudaEvent_t>> marks_;
  std::vector<cudaEvent_t> events_;  // owned; reused across forwards
};

}  // namespace h3p::kernels::cuda
