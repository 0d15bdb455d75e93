#pragma once
// Candidate attention on the GPU: softmax(q·kᵀ·scale)·v for bf16 (S, H, 128) operands laid
// out row by row with any row stride (so q, k and v can be read straight out of a fused QKV
// GEMM output), fp32 online softmax, bf16 output. Hopper (sm_90a) only.
#include <cuda_runtime.h>

#include <cstdint>

namespace h3p::kernels::cuda {

// Element (row r, head h, channel c) of an operand lives at base + r·row_stride + h·128 + c
// (strides in elements). The output is written the same way.
struct AttentionArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  int64_t q_row_stride = 0, k_row_stride = 0, v_row_stride = 0, out_row_stride = 0;
  int seq_q = 0, seq_kv = 0, heads = 0, head_dim = 128;
  float scale = 0.0f;  // softmax scale, usually 1/sqrt(head_dim)
};

// Self-attention over a fused QKV buffer (S, 3·H·128) holding q, k, v side by side per row,
// written to `out` (S, H·128); scale 1/sqrt(128).
AttentionArgs fused_qkv_attention(const void* qkv, void* out, int rows, int heads);

// How the consumer warpgroups schedule their two GEMMs and the softmax.
enum class AttentionSchedule {
  serial,      // QKᵀ, softmax, PV one after the other
  overlapped,  // QKᵀ(n) and PV(n−1) in flight while softmax(n) runs
  batched,     // QKᵀ(n) and PV(n−1) issued together, both awaited, then softmax(n)
  pingpong,    // batched, and the two warpgroups take turns issuing their GEMMs so that one's
               // softmax runs under the other's GEMMs
  pingpong_overlapped,  // pingpong, and within each warpgroup softmax(n) runs while its own
                        // PV(n−1) is still in flight (FlashAttention-3's two overlaps together)
  pingpong_early_rescale,  // pingpong_overlapped with the output rescaled under QKᵀ(n), between
                           // the two issues, and skipped by warps whose factors are all 1
                           // (bitwise the same output)
  pingpong_poly_exp2,  // pingpong_overlapped with every 2nd 8-key block's exponentials taken
                       // by a polynomial on the FMA pipe instead of the MUFU unit (relative
                       // error 4e-6 against MUFU's 2e-7, both far under bf16's 4e-3)
  pingpong_poly_exp4,  // the same for every 4th block
};

// What the candidate runs (the fused block, the per-group OpSet and the CUDA plugin): the
// fastest measured configuration at the released widths (docs/benchmarks.md).
inline constexpr AttentionSchedule kDefaultAttentionSchedule =
    AttentionSchedule::pingpong_overlapped;
inline constexpr int kDefaultAttentionKeyTile = 176;
inline constexpr int kDefaultAttentionCluster = 1;

// "serial", "overlapped", "batched", "pingpong", "pingpong-overlapped",
// "pingpong-early-rescale", "pingpong-poly-exp2" or "pingpong-poly-exp4".
const char* attention_schedule_name(AttentionSchedule schedule);

// Runs on `stream` with key tiles of `key_tile` rows (128 or 176), in thread-block clusters of
// `cluster` CTAs (1 or 2; 2: two neighbouring query tiles share every K/V load through TMA
// multicast; measured slower, docs/benchmarks.md version 11). Throws std::invalid_argument for
// unsupported shapes or alignments and std::runtime_error for CUDA failures. Deterministic:
// fixed key order, no atomics; the cluster size changes where tiles are loaded from, not the
// result.
void attention_bf16(const AttentionArgs& args, AttentionSchedule schedule, cudaStream_t stream,
                    int key_tile = 128, int cluster = 1);

}  // namespace h3p::kernels::cuda
