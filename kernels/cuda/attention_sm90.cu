// Hopper attention: one CTA per (128 query rows, head); a producer warpgroup streams K and V
// tiles of 128 or 176 keys through a ring of stages with TMA; two consumer warpgroups of 64
// query rows each run QKᵀ and PV on wgmma (Q and K from shared memory, P from registers, V read
// MN-major) with an fp32 online softmax in base 2. With clusters of two CTAs (neighbouring query
// tiles of one head), each CTA loads one 64-channel half of every K and V tile and multicasts it
// to both: the pair reads each tile from L2 once instead of twice.
#include <cuda.h>
#include <cuda_bf16.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/sm90/ptx.cuh"
#include "kernels/cuda/sm90/tensor_map.h"
#include "kernels/cuda/sm90/wgmma.cuh"

namespace h3p::kernels::cuda {
namespace {

using namespace sm90;

constexpr int kBlockM = 128;   // query rows per CTA
constexpr int kHeadDim = 128;
constexpr int kHalf = 64;      // channels per 128-byte swizzled box
constexpr int kThreads = 384;  // producer warpgroup + two consumer warpgroups

// A tile of kRows rows of one head as two 128-byte-swizzled halves of 64 channels.
template <int kRows>
struct alignas(1024) Tile {
  static constexpr uint32_t kBytes = kRows * kHeadDim * 2;
  __nv_bfloat16 half[2][kRows][kHalf];
};

// Shared memory of one CTA for key tiles of kN rows: Q, and a ring of K and V stages (three
// of 128 rows or two of 176 fit in 227 KiB). K and V stages are released separately: K as soon
// as QKᵀ has read it, V after PV.
template <int kN>
struct Shared {
  static constexpr int kStages = kN == 128 ? 3 : 2;
  Tile<kBlockM> q;
  Tile<kN> k[kStages];
  Tile<kN> v[kStages];
  uint64_t q_full;
  uint64_t k_full[kStages];
  uint64_t v_full[kStages];
  uint64_t k_empty[kStages];
  uint64_t v_empty[kStages];
};

template <int kN>
constexpr size_t kSharedBytes = sizeof(Shared<kN>) + 1024;  // + alignment slack

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Per-thread softmax state of the two rows a thread holds (lane/4 and lane/4 + 8).
struct RowState {
  float max[2] = {-INFINITY, -INFINITY};  // running maximum, already times scale·log2(e)
  float sum[2] = {0.0f, 0.0f};            // this thread's partial row sums
};

// 2^x for x <= 0 on the FMA and integer pipes, for when the MUFU unit is the bottleneck:
// x = i + f with i = round(x) (the 1.5·2^23 trick) and f in [-1/2, 1/2], 2^f by a degree-4
// Chebyshev fit (relative error 4e-6 in fp32), 2^i added to the exponent bits. Arguments
// under -127 (the -inf of masked keys included) give 0 or a denormal under 1e-38.
__device__ __forceinline__ float poly_exp2(float x) {
  constexpr float kRound = 12582912.0f;  // 1.5·2^23: x + kRound rounds x to an integer
  x = fmaxf(x, -127.0f);
  const float shifted = x + kRound;
  const float f = x - (shifted - kRound);
  float p = 0.00966636836528778f;
  p = fmaf(p, f, 0.055921975523233414f);
  p = fmaf(p, f, 0.2402234971523285f);
  p = fmaf(p, f, 0.6931210160255432f);
  p = fmaf(p, f, 1.0f);
  // The low bits of `shifted` hold round(x) in two's complement: shifted up 23, the exponent.
  return __uint_as_float(__float_as_uint(p) + (__float_as_uint(shifted) << 23));
}

// Turns the scores of key tile `tile` into probabilities in place, updates the running
// maximum and sums, and returns the factors that rescale the previous output. With
// kPolyEvery > 0 every kPolyEvery-th 8-key block's exponentials come from poly_exp2.
template <int kN, int kPolyEvery = 0>
__device__ __forceinline__ void online_softmax(float (&s)[kN / 2], RowState& st,
                                               float (&alpha)[2], int tile, int seq_kv,
                                               float scale_log2) {
  const int lane = threadIdx.x % 32;
  const int first_key = tile * kN;
  if (first_key + kN > seq_kv) {  // the ragged last tile: keys past the end get -inf
#pragma unroll
    for (int j = 0; j < kN / 8; ++j) {
      const int key = first_key + 8 * j + 2 * (lane % 4);
      if (key >= seq_kv) s[4 * j] = s[4 * j + 2] = -INFINITY;
      if (key + 1 >= seq_kv) s[4 * j + 1] = s[4 * j + 3] = -INFINITY;
    }
  }
  float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    mx[0] = fmaxf(mx[0], fmaxf(s[4 * j], s[4 * j + 1]));
    mx[1] = fmaxf(mx[1], fmaxf(s[4 * j + 2], s[4 * j + 3]));
  }
  float neg[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
    mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
    const float next = fmaxf(st.max[r], mx[r] * scale_log2);
    alpha[r] = fast_exp2(st.max[r] - next);
    st.max[r] = next;
    neg[r] = -next;
  }
  float sum[2] = {0.0f, 0.0f};
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) {
    const int r = (i / 2) % 2;
    const float x = fmaf(s[i], scale_log2, neg[r]);
    if constexpr (kPolyEvery > 0) {
      s[i] = (i / 4) % kPolyEvery == kPolyEvery - 1 ? poly_exp2(x) : fast_exp2(x);
    } else {
      s[i] = fast_exp2(x);
    }
    sum[r] += s[i];
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) st.sum[r] = st.sum[r] * alpha[r] + sum[r];
}

// Packs probabilities into the bf16 A fragments of PV: the accumulator layout of two adjacent
// 8-key blocks is the register layout of one 16-key A operand.
template <int kN>
__device__ __forceinline__ void pack_probabilities(const float (&s)[kN / 2],
                                                   uint32_t (&p)[kN / 4]) {
#pragma unroll
  for (int t = 0; t < kN / 16; ++t) {
    p[4 * t + 0] = pack_bf16(s[8 * t + 0], s[8 * t + 1]);
    p[4 * t + 1] = pack_bf16(s[8 * t + 2], s[8 * t + 3]);
    p[4 * t + 2] = pack_bf16(s[8 * t + 4], s[8 * t + 5]);
    p[4 * t + 3] = pack_bf16(s[8 * t + 6], s[8 * t + 7]);
  }
}

// A consumer warp is done with a K/V stage: one arrival per warp on the stage's barrier in
// every CTA of the cluster (lane r arrives on CTA r's), since each of them writes into it.
template <int kCluster>
__device__ __forceinline__ void release_stage(uint64_t* empty) {
  __syncwarp();
  const uint32_t lane = threadIdx.x % 32;
  if constexpr (kCluster == 1) {
    if (lane == 0) mbar_arrive(empty);
  } else {
    if (lane < kCluster) mbar_arrive_cluster(empty, lane);
  }
}

// Scales the output by the rows' factors. Once the running maxima settle most factors are
// exactly 1; with kSkipUnit a warp whose rows all kept their maxima skips the multiply
// (bitwise the same result).
template <bool kSkipUnit>
__device__ __forceinline__ void rescale(float (&o)[64], const float (&alpha)[2]) {
  if constexpr (kSkipUnit) {
    if (!__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) return;
  }
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] *= alpha[(i / 2) % 2];
}

// S = Q·Kᵀ for this warpgroup's 64 query rows against one key tile (issued, committed).
template <int kN>
__device__ __forceinline__ void issue_qk(float (&s)[kN / 2], const Tile<kBlockM>& q,
                                         const Tile<kN>& k, int row0) {
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) fence_register(s[i]);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    const int h = kk / 4, c = (kk % 4) * 16;
    const uint64_t da = smem_desc_sw128(&q.half[h][row0][c], 16, 1024);
    const uint64_t db = smem_desc_sw128(&k.half[h][0][c], 16, 1024);
    wgmma_qk<kN>(s, da, db, kk > 0 ? 1u : 0u);
  }
  wgmma_commit();
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) fence_register(s[i]);
}

// O += P·V for one key tile (issued, committed); V is read MN-major (channels contiguous).
template <int kN>
__device__ __forceinline__ void issue_pv(float (&o)[64], uint32_t (&p)[kN / 4],
                                         const Tile<kN>& v) {
#pragma unroll
  for (int i = 0; i < 64; ++i) fence_register(o[i]);
#pragma unroll
  for (int i = 0; i < kN / 4; ++i) fence_register(p[i]);
  wgmma_fence();
#pragma unroll
  for (int t = 0; t < kN / 16; ++t) {
    const uint64_t db = smem_desc_sw128(&v.half[0][16 * t][0], Tile<kN>::kBytes / 2, 1024);
    const uint32_t a[4] = {p[4 * t], p[4 * t + 1], p[4 * t + 2], p[4 * t + 3]};
    wgmma_m64n128k16_rs<1>(o, a, db, 1u);
  }
  wgmma_commit();
#pragma unroll
  for (int i = 0; i < 64; ++i) fence_register(o[i]);
}

template <AttentionSchedule kSchedule, int kN, int kCluster>
__global__ void __launch_bounds__(kThreads, 1)
    attention_kernel(const __grid_constant__ CUtensorMap q_map,
                     const __grid_constant__ CUtensorMap k_map,
                     const __grid_constant__ CUtensorMap v_map, __nv_bfloat16* out,
                     int64_t out_row_stride, int seq_q, int seq_kv, float scale_log2) {
  extern __shared__ uint8_t raw_shared[];
  Shared<kN>& sh = *reinterpret_cast<Shared<kN>*>(
      (reinterpret_cast<uintptr_t>(raw_shared) + 1023) & ~static_cast<uintptr_t>(1023));
  const int warpgroup = threadIdx.x / 128;
  const int m_tile = blockIdx.x, head = blockIdx.y;
  const int tiles = (seq_kv + kN - 1) / kN;
  constexpr int kStages = Shared<kN>::kStages;

  if (threadIdx.x == 0) {
    mbar_init(&sh.q_full, 1);
    for (int i = 0; i < kStages; ++i) {
      mbar_init(&sh.k_full[i], 1);
      mbar_init(&sh.v_full[i], 1);
      mbar_init(&sh.k_empty[i], 8 * kCluster);  // one arrival per consumer warp of the cluster
      mbar_init(&sh.v_empty[i], 8 * kCluster);
    }
    mbar_fence_init();
  }
  // Each CTA of a cluster writes into the others' stages: all barriers exist before any load.
  if constexpr (kCluster > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  if (warpgroup == 0) {  // producer
    regs_decrease<24>();
    if (threadIdx.x == 0) {
      tma_prefetch_descriptor(&q_map);
      tma_prefetch_descriptor(&k_map);
      tma_prefetch_descriptor(&v_map);
      // A cluster's padding tile (past the last query row) loads the last real tile's rows
      // instead, so that no box lies wholly outside the tensor; it stores nothing.
      const int q_row0 = min(m_tile, (seq_q - 1) / kBlockM) * kBlockM;
      mbar_arrive_expect_tx(&sh.q_full, Tile<kBlockM>::kBytes);
      tma_load_3d(sh.q.half[0], &q_map, &sh.q_full, 0, head, q_row0);
      tma_load_3d(sh.q.half[1], &q_map, &sh.q_full, kHalf, head, q_row0);
      // A stage is refilled once every consumer warp of the cluster has released it; each
      // CTA's full barrier expects the whole tile, half of it from each CTA of a cluster.
      auto load = [&](Tile<kN>& tile, const CUtensorMap* map, uint64_t* full, uint64_t* empty,
                      int n, uint32_t freed) {
        if (n >= kStages) mbar_wait<(kCluster > 1)>(empty, freed);
        mbar_arrive_expect_tx(full, Tile<kN>::kBytes);
        if constexpr (kCluster == 1) {
          tma_load_3d(tile.half[0], map, full, 0, head, n * kN);
          tma_load_3d(tile.half[1], map, full, kHalf, head, n * kN);
        } else {
          const uint32_t rank = cluster_cta_rank();
          tma_load_3d_multicast(tile.half[rank], map, full, static_cast<int>(rank) * kHalf, head,
                                n * kN, static_cast<uint16_t>((1u << kCluster) - 1));
        }
      };
      for (int n = 0; n < tiles; ++n) {
        const int stage = n % kStages;
        const uint32_t freed = ((n / kStages) & 1) ^ 1;  // the previous use's release
        load(sh.k[stage], &k_map, &sh.k_full[stage], &sh.k_empty[stage], n, freed);
        load(sh.v[stage], &v_map, &sh.v_full[stage], &sh.v_empty[stage], n, freed);
      }
    }
    // The other CTAs still arrive on this one's barriers until their last tile.
    if constexpr (kCluster > 1) cluster_sync();
    return;
  }

  regs_increase<240>();
  const int row0 = (warpgroup - 1) * 64;  // this warpgroup's rows within the query tile
  float o[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.0f;
  float s[kN / 2];
  uint32_t p[kN / 4];
  RowState state;
  float alpha[2];
  mbar_wait(&sh.q_full, 0);

  if constexpr (kSchedule == AttentionSchedule::serial) {
    for (int n = 0; n < tiles; ++n) {
      const int stage = n % kStages;
      const uint32_t phase = (n / kStages) & 1;
      mbar_wait(&sh.k_full[stage], phase);
      issue_qk(s, sh.q, sh.k[stage], row0);
      wgmma_wait<0>();
      release_stage<kCluster>(&sh.k_empty[stage]);
      online_softmax<kN>(s, state, alpha, n, seq_kv, scale_log2);
      pack_probabilities<kN>(s, p);
      rescale<false>(o, alpha);
      mbar_wait(&sh.v_full[stage], phase);
      issue_pv(o, p, sh.v[stage]);
      wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < kN / 4; ++i) fence_register(p[i]);
      release_stage<kCluster>(&sh.v_empty[stage]);
    }
  } else {
    // Steps 0..tiles: step n issues QKᵀ(n) (n < tiles) and PV(n−1) (n > 0). With pingpong the
    // warpgroups take turns: each waits for its turn before issuing and hands the turn over
    // right after, so the tensor cores alternate between them. The output is rescaled by
    // softmax(n−1)'s factors before PV(n−1) is issued: at the end of step n−1, or with
    // kEarlyRescale between step n's two issues, under QKᵀ(n).
    constexpr bool kEarlyRescale = kSchedule == AttentionSchedule::pingpong_early_rescale;
    constexpr int kPolyEvery = kSchedule == AttentionSchedule::pingpong_poly_exp2   ? 2
                               : kSchedule == AttentionSchedule::pingpong_poly_exp4 ? 4
                                                                                    : 0;
    constexpr bool kPingpong = kSchedule == AttentionSchedule::pingpong ||
                               kSchedule == AttentionSchedule::pingpong_overlapped ||
                               kEarlyRescale || kPolyEvery > 0;
    const int me = warpgroup - 1;
    auto take_turn = [&] {
      if constexpr (kPingpong) named_barrier_sync(1 + me, 256);
    };
    auto pass_turn = [&](bool last) {
      if constexpr (kPingpong) {
        if (!(last && me == 1)) named_barrier_arrive(2 - me, 256);
      }
    };
    if constexpr (kPingpong) {
      if (me == 1) named_barrier_arrive(1, 256);  // warpgroup 0 goes first
    }
    mbar_wait(&sh.k_full[0], 0);
    take_turn();
    issue_qk(s, sh.q, sh.k[0], row0);
    pass_turn(tiles == 0);
    wgmma_wait<0>();
    release_stage<kCluster>(&sh.k_empty[0]);
    online_softmax<kN, kPolyEvery>(s, state, alpha, 0, seq_kv, scale_log2);
    pack_probabilities<kN>(s, p);
    for (int n = 1; n < tiles; ++n) {
      const int stage = n % kStages, prev = (n - 1) % kStages;
      mbar_wait(&sh.k_full[stage], (n / kStages) & 1);
      mbar_wait(&sh.v_full[prev], ((n - 1) / kStages) & 1);
      take_turn();
      issue_qk(s, sh.q, sh.k[stage], row0);
      if constexpr (kEarlyRescale) {
        if (n > 1) rescale<true>(o, alpha);  // (n = 1: the output is still zero)
      }
      issue_pv(o, p, sh.v[prev]);
      pass_turn(false);
      if constexpr (kSchedule == AttentionSchedule::batched ||
                    kSchedule == AttentionSchedule::pingpong) {
        wgmma_wait<0>();  // both GEMMs done, then the softmax
#pragma unroll
        for (int i = 0; i < kN / 4; ++i) fence_register(p[i]);
        release_stage<kCluster>(&sh.k_empty[stage]);
        release_stage<kCluster>(&sh.v_empty[prev]);
        online_softmax<kN>(s, state, alpha, n, seq_kv, scale_log2);
      } else {
        wgmma_wait<1>();  // QKᵀ(n) done, PV(n−1) may still run
        release_stage<kCluster>(&sh.k_empty[stage]);
        online_softmax<kN, kPolyEvery>(s, state, alpha, n, seq_kv, scale_log2);
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < kN / 4; ++i) fence_register(p[i]);
        release_stage<kCluster>(&sh.v_empty[prev]);
      }
      if constexpr (!kEarlyRescale) rescale<false>(o, alpha);
      pack_probabilities<kN>(s, p);
    }
    const int last = (tiles - 1) % kStages;
    mbar_wait(&sh.v_full[last], ((tiles - 1) / kStages) & 1);
    take_turn();
    if constexpr (kEarlyRescale) {
      if (tiles > 1) rescale<true>(o, alpha);
    }
    issue_pv(o, p, sh.v[last]);
    pass_turn(true);
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kN / 4; ++i) fence_register(p[i]);
    release_stage<kCluster>(&sh.v_empty[last]);
  }

  // Epilogue: finish the row sums across the four lanes of a row, normalise, store bf16.
  const int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = state.sum[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    inv[r] = 1.0f / l;
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = m_tile * kBlockM + row0 + warp * 16 + lane / 4 + 8 * r;
    if (row >= seq_q) continue;
    __nv_bfloat16* dst = out + static_cast<int64_t>(row) * out_row_stride + head * kHeadDim;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int col = 8 * j + 2 * (lane % 4);
      *reinterpret_cast<uint32_t*>(dst + col) =
          pack_bf16(o[4 * j + 2 * r] * inv[r], o[4 * j + 2 * r + 1] * inv[r]);
    }
  }
  if constexpr (kCluster > 1) cluster_sync();
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("attention_bf16: " + what);
}

template <AttentionSchedule kSchedule, int kN, int kCluster>
void launch(const AttentionArgs& a, cudaStream_t stream) {
  const CUtensorMap q_map = sm90::head_tile_map(a.q, a.seq_q, a.heads, a.q_row_stride, kBlockM);
  const CUtensorMap k_map = sm90::head_tile_map(a.k, a.seq_kv, a.heads, a.k_row_stride, kN);
  const CUtensorMap v_map = sm90::head_tile_map(a.v, a.seq_kv, a.heads, a.v_row_stride, kN);
  auto kernel = attention_kernel<kSchedule, kN, kCluster>;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kSharedBytes<kN>)),
             "attention_bf16: shared memory attribute");
  // A cluster's CTAs take neighbouring query tiles of one head; a padding tile past the last
  // query row loads and multicasts its K/V halves like the others and stores nothing.
  const int m_tiles = (a.seq_q + kBlockM - 1) / kBlockM;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3((m_tiles + kCluster - 1) / kCluster * kCluster, a.heads);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSharedBytes<kN>;
  config.stream = stream;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kCluster;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = kCluster > 1 ? 1 : 0;
  const float scale_log2 = a.scale * static_cast<float>(M_LOG2E);
  check_cuda(cudaLaunchKernelEx(&config, kernel, q_map, k_map, v_map,
                                static_cast<__nv_bfloat16*>(a.out), a.out_row_stride, a.seq_q,
                                a.seq_kv, scale_log2),
             "attention_bf16: launch");
}

template <int kN, int kCluster>
void launch_schedule(const AttentionArgs& a, AttentionSchedule schedule, cudaStream_t stream) {
  switch (schedule) {
    case AttentionSchedule::serial:
      launch<AttentionSchedule::serial, kN, kCluster>(a, stream);
      break;
    case AttentionSchedule::overlapped:
      launch<AttentionSchedule::overlapped, kN, kCluster>(a, stream);
      break;
    case AttentionSchedule::pingpong:
      launch<AttentionSchedule::pingpong, kN, kCluster>(a, stream);
      break;
    case AttentionSchedule::batched:
      launch<AttentionSchedule::batched, kN, kCluster>(a, stream);
      break;
    case AttentionSchedule::pingpong_overlapped:
      launch<AttentionSchedule::pingpong_overlapped, kN, kCluster>(a, stream);
      break;
    case AttentionSchedule::pingpong_early_rescale:
      launch<AttentionSchedule::pingpong_early_rescale, kN, kCluster>(a, stream);
      break;
    case AttentionSchedule::pingpong_poly_exp2:
      launch<AttentionSchedule::pingpong_poly_exp2, kN, kCluster>(a, stream);
      break;
    case AttentionSchedule::pingpong_poly_exp4:
      launch<AttentionSchedule::pingpong_poly_exp4, kN, kCluster>(a, stream);
      break;
  }
}

}  // namespace

const char* attention_schedule_name(AttentionSchedule schedule) {
  switch (schedule) {
    case AttentionSchedule::serial: return "serial";
    case AttentionSchedule::overlapped: return "overlapped";
    case AttentionSchedule::batched: return "batched";
    case AttentionSchedule::pingpong: return "pingpong";
    case AttentionSchedule::pingpong_overlapped: return "pingpong-overlapped";
    case AttentionSchedule::pingpong_early_rescale: return "pingpong-early-rescale";
    case AttentionSchedule::pingpong_poly_exp2: return "pingpong-poly-exp2";
    case AttentionSchedule::pingpong_poly_exp4: return "pingpong-poly-exp4";
  }
  return "unknown";
}

AttentionArgs fused_qkv_attention(const void* qkv, void* out, int rows, int heads) {
  const int64_t inner = int64_t{heads} * kHeadDim;
  const auto* base = static_cast<const __nv_bfloat16*>(qkv);
  AttentionArgs a;
  a.q = base;
  a.k = base + inner;
  a.v = base + 2 * inner;
  a.out = out;
  a.q_row_stride = a.k_row_stride = a.v_row_stride = 3 * inner;
  a.out_row_stride = inner;
  a.seq_q = a.seq_kv = rows;
  a.heads = heads;
  a.scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  return a;
}

void attention_bf16(const AttentionArgs& a, AttentionSchedule schedule, cudaStream_t stream,
                    int key_tile, int cluster) {
  require(a.head_dim == kHeadDim, "head_dim must be 128, got " + std::to_string(a.head_dim));
  require(a.seq_q > 0 && a.seq_kv > 0 && a.heads > 0, "empty shape");
  require(a.heads <= 65535, "too many heads");
  for (int64_t stride : {a.q_row_stride, a.k_row_stride, a.v_row_stride, a.out_row_stride}) {
    require(stride % 8 == 0 && stride >= int64_t{a.heads} * kHeadDim,
            "row strides must be multiples of 8 elements covering all heads");
  }
  for (const void* ptr : {a.q, a.k, a.v, static_cast<const void*>(a.out)}) {
    require(ptr != nullptr && reinterpret_cast<uintptr_t>(ptr) % 16 == 0,
            "operands must be 16-byte aligned device pointers");
  }
  require(key_tile == 128 || key_tile == 176,
          "key tiles of 128 or 176 rows, got " + std::to_string(key_tile));
  require(cluster == 1 || cluster == 2,
          "clusters of 1 or 2 CTAs, got " + std::to_string(cluster));
  if (key_tile == 128) {
    if (cluster == 1) {
      launch_schedule<128, 1>(a, schedule, stream);
    } else {
      launch_schedule<128, 2>(a, schedule, stream);
    }
  } else if (cluster == 1) {
    launch_schedule<176, 1>(a, schedule, stream);
  } else {
    launch_schedule<176, 2>(a, schedule, stream);
  }
}

}  // namespace h3p::kernels::cuda
