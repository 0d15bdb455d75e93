#include <cuda_bf16.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fused.h"

namespace h3p::kernels::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kRowThreads = 256;  // one block per row
constexpr int kMaxVectors = 4;    // 16-byte vectors per thread: rows up to 8192 channels

// Eight bf16 values moved as one 16-byte vector.
struct Vec8 {
  float f[8];
  __device__ void load(const bf16* p) { unpack(*reinterpret_cast<const uint4*>(p)); }
  __device__ void unpack(uint4 raw) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 v = __bfloat1622float2(h[i]);
      f[2 * i] = v.x;
      f[2 * i + 1] = v.y;
    }
  }
  __device__ void store(bf16* p) const {
    uint4 raw;
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) h[i] = __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
    *reinterpret_cast<uint4*>(p) = raw;
  }
  __device__ void round_to_bf16() {
#pragma unroll
    for (int i = 0; i < 8; ++i) f[i] = __bfloat162float(__float2bfloat16_rn(f[i]));
  }
};

// bf16 rounding of an fp32 value, kept in fp32.
__device__ __forceinline__ float r16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

// Step-wise rounding as the provider's eager ops do it, or none (one rounding at the store).
template <Rounding kMode>
__device__ __forceinline__ float step(float v) {
  if constexpr (kMode == Rounding::once) {
    return v;
  } else {
    return r16(v);
  }
}

// x·rstd·weight with the mode's intermediate rounding.
template <Rounding kMode>
__device__ __forceinline__ float normalise(float x, float rstd, float weight) {
  if constexpr (kMode == Rounding::provider_composite_norm) {
    return r16(r16(x * rstd) * weight);
  } else {
    return step<kMode>(x * rstd * weight);
  }
}

// x + gate·y: fused in fp32, or the product rounded first as x + gate * y rounds it.
template <Rounding kMode>
__device__ __forceinline__ float gated_add(float x, float gate, float y) {
  if constexpr (kMode == Rounding::once) {
    return fmaf(gate, y, x);
  } else {
    return x + r16(gate * y);
  }
}

// Sum over the block in a fixed order: warp trees, then warp 0 adds the warp sums in order.
__device__ float block_sum(float v) {
  __shared__ float partial[kRowThreads / 32];
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int i = 0; i < kRowThreads / 32; ++i) total += partial[i];
  __syncthreads();
  return total;
}

template <bool kResidual, Rounding kMode>
__global__ void __launch_bounds__(kRowThreads)
    residual_norm_modulate_kernel(bf16* x, const bf16* y, int64_t y_stride, const bf16* weight,
                                  float eps, Modulation mod, bf16* h, int64_t cols,
                                  bf16* x_copy) {
  const int64_t r = blockIdx.x;
  const bf16* table = static_cast<const bf16*>(mod.table) + mod.rows[r] * mod.table_stride;
  bf16* xr = x + r * cols;
  Vec8 v[kMaxVectors];
  float squares = 0.0f;
#pragma unroll
  for (int i = 0; i < kMaxVectors; ++i) {
    const int c = 8 * (threadIdx.x + i * kRowThreads);
    if (c >= cols) break;
    v[i].load(xr + c);
    if constexpr (kResidual) {
      Vec8 yv, gate;
      yv.load(y + r * y_stride + c);
      gate.load(table + mod.gate_offset + c);
#pragma unroll
      for (int e = 0; e < 8; ++e) v[i].f[e] = gated_add<kMode>(v[i].f[e], gate.f[e], yv.f[e]);
      v[i].round_to_bf16();
      v[i].store(xr + c);
    } else {
      if (x_copy != nullptr) v[i].store(x_copy + r * cols + c);
    }
#pragma unroll
    for (int e = 0; e < 8; ++e) squares = fmaf(v[i].f[e], v[i].f[e], squares);
  }
  const float inv = rsqrtf(block_sum(squares) / static_cast<float>(cols) + eps);
#pragma unroll
  for (int i = 0; i < kMaxVectors; ++i) {
    const int c = 8 * (threadIdx.x + i * kRowThreads);
    if (c >= cols) break;
    Vec8 w, shift, scale, out;
    w.load(weight + c);
    shift.load(table + mod.shift_offset + c);
    scale.load(table + mod.scale_offset + c);
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      if constexpr (kMode == Rounding::once) {
        out.f[e] = fmaf(v[i].f[e] * inv * w.f[e], 1.0f + scale.f[e], shift.f[e]);
      } else {
        const float n = normalise<kMode>(v[i].f[e], inv, w.f[e]);
        out.f[e] = r16(n * r16(1.0f + scale.f[e])) + shift.f[e];
      }
    }
    out.store(h + r * cols + c);
  }
}

template <Rounding kMode>
__global__ void gated_residual_kernel(bf16* x, const bf16* y, int64_t y_stride, Modulation mod,
                                      int64_t rows, int64_t cols) {
  const int64_t vectors_per_row = cols / 8;
  const int64_t total = rows * vectors_per_row;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / vectors_per_row, c = 8 * (i % vectors_per_row);
    const bf16* table = static_cast<const bf16*>(mod.table) + mod.rows[r] * mod.table_stride;
    Vec8 xv, yv, gate;
    xv.load(x + r * cols + c);
    yv.load(y + r * y_stride + c);
    gate.load(table + mod.gate_offset + c);
#pragma unroll
    for (int e = 0; e < 8; ++e) xv.f[e] = gated_add<kMode>(xv.f[e], gate.f[e], yv.f[e]);
    xv.store(x + r * cols + c);
  }
}

// One warp per (row, head); each lane holds channels 4·lane .. 4·lane + 3. Heads below
// q_heads take q_weight, the rest k_weight; kNorm and kRope select the steps.
template <Rounding kMode, bool kNorm, bool kRope>
__global__ void __launch_bounds__(256)
    head_norm_rope_kernel(bf16* qkv, int64_t row_stride, int64_t rows, int heads, int q_heads,
                          const bf16* q_weight, const bf16* k_weight, float eps,
                          const float* cos, const float* sin, int rotary) {
  __shared__ float staged[8][128];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t item = blockIdx.x * int64_t{8} + warp;  // (row, head)
  if (item >= rows * heads) return;
  const int64_t r = item / heads;
  const int head = static_cast<int>(item % heads);
  bf16* p = qkv + r * row_stride + int64_t{head} * 128 + 4 * lane;
  const bf16* weight = kNorm ? (head < q_heads ? q_weight : k_weight) + 4 * lane : nullptr;
  float v[4];
  {
    const uint2 raw = *reinterpret_cast<const uint2*>(p);
    const __nv_bfloat162* hv = reinterpret_cast<const __nv_bfloat162*>(&raw);
    const float2 a = __bfloat1622float2(hv[0]), b = __bfloat1622float2(hv[1]);
    v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
  }
  if constexpr (kNorm) {
    float squares = 0.0f;
#pragma unroll
    for (int e = 0; e < 4; ++e) squares = fmaf(v[e], v[e], squares);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) squares += __shfl_xor_sync(0xffffffffu, squares, o);
    const float inv = rsqrtf(squares / 128.0f + eps);
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = normalise<kMode>(v[e], inv, __bfloat162float(weight[e]));
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) staged[warp][4 * lane + e] = v[e];
  __syncwarp();
  const int half = rotary / 2;
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const int c = 4 * lane + e;
    if (kRope && c < rotary) {
      const float partner = c < half ? -staged[warp][c + half] : staged[warp][c - half];
      if constexpr (kMode == Rounding::once) {
        v[e] = fmaf(v[e], cos[r * rotary + c], partner * sin[r * rotary + c]);
      } else {  // the tables cast to bf16 first, each product and the sum rounded
        v[e] = r16(v[e] * r16(cos[r * rotary + c])) + r16(partner * r16(sin[r * rotary + c]));
      }
    }
  }
  uint2 raw;
  __nv_bfloat162* hv = reinterpret_cast<__nv_bfloat162*>(&raw);
  hv[0] = __floats2bfloat162_rn(v[0], v[1]);
  hv[1] = __floats2bfloat162_rn(v[2], v[3]);
  *reinterpret_cast<uint2*>(p) = raw;
}

// The same per row: one block per row, 16 threads per head holding 8 channels each; RoPE
// partners (c ± rotary/2) are fetched by shuffles, so rotary/2 must be a multiple of 8. Three
// blocks an SM (80 registers) keep more rows' loads in flight than the two of 108 registers did.
template <Rounding kMode, bool kNorm, bool kRope>
__global__ void __launch_bounds__(256, 3)
    head_norm_rope_rows_kernel(bf16* qkv, int64_t row_stride, int heads, int q_heads,
                               const bf16* q_weight, const bf16* k_weight, float eps,
                               const float* cos, const float* sin, int rotary) {
  const int64_t r = blockIdx.x;
  const int lane16 = threadIdx.x % 16;
  const int group_base = (threadIdx.x % 32) - lane16;  // first lane of this head in the warp
  const int shift = rotary / 16;                        // partner distance in vectors
  const int c0 = 8 * lane16;                            // first channel this thread holds
  const int vectors = heads * 16;
  uint4 w_q{}, w_k{};  // the norm weights, packed until used
  if constexpr (kNorm) {
    w_q = *reinterpret_cast<const uint4*>(q_weight + c0);
    w_k = *reinterpret_cast<const uint4*>(k_weight + c0);
  }
  Vec8 c8, s8;
  const bool rotated = kRope && c0 < rotary;
  if (rotated) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      c8.f[e] = cos[r * rotary + c0 + e];
      s8.f[e] = sin[r * rotary + c0 + e];
      if constexpr (kMode != Rounding::once) c8.f[e] = r16(c8.f[e]), s8.f[e] = r16(s8.f[e]);
    }
  }
  // All of this thread's vectors are loaded before any is used (memory-level parallelism),
  // kept packed (4 registers a vector, not 8) so that more blocks fit an SM; whole warps share
  // a trip count, so the shuffles below see full warps.
  constexpr int kMaxPerThread = 8;  // up to 128 heads (64 q and 64 k)
  uint4 raw[kMaxPerThread];
#pragma unroll
  for (int i = 0; i < kMaxPerThread; ++i) {
    const int v = threadIdx.x + i * 256;
    if (v < vectors) {
      raw[i] = *reinterpret_cast<const uint4*>(qkv + r * row_stride + int64_t{v} * 8);
    }
  }
#pragma unroll
  for (int i = 0; i < kMaxPerThread; ++i) {
    const int v = threadIdx.x + i * 256;
    if (v >= vectors) break;
    bf16* p = qkv + r * row_stride + int64_t{v} * 8;
    const bool is_q = v < q_heads * 16;
    Vec8 x;
    x.unpack(raw[i]);
    if constexpr (kNorm) {
      float squares = 0.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) squares = fmaf(x.f[e], x.f[e], squares);
#pragma unroll
      for (int o = 8; o > 0; o /= 2) squares += __shfl_xor_sync(0xffffffffu, squares, o);
      const float inv = rsqrtf(squares / 128.0f + eps);
      Vec8 w;  // chosen word by word: a runtime pick of a whole uint4 goes through the stack
      w.unpack(make_uint4(is_q ? w_q.x : w_k.x, is_q ? w_q.y : w_k.y, is_q ? w_q.z : w_k.z,
                          is_q ? w_q.w : w_k.w));
#pragma unroll
      for (int e = 0; e < 8; ++e) x.f[e] = normalise<kMode>(x.f[e], inv, w.f[e]);
    }
    if constexpr (!kRope) {
      x.store(p);
      continue;
    }
    const int up = group_base + (lane16 + shift < 16 ? lane16 + shift : lane16);
    const int down = group_base + (lane16 >= shift ? lane16 - shift : lane16);
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const float above = __shfl_sync(0xffffffffu, x.f[e], up);
      const float below = __shfl_sync(0xffffffffu, x.f[e], down);
      if (rotated) {
        const float partner = c0 < rotary / 2 ? -above : below;
        if constexpr (kMode == Rounding::once) {
          x.f[e] = fmaf(x.f[e], c8.f[e], partner * s8.f[e]);
        } else {
          x.f[e] = r16(x.f[e] * c8.f[e]) + r16(partner * s8.f[e]);
        }
      }
    }
    x.store(p);
  }
}

__device__ __forceinline__ float silu_f(float g) { return g / (1.0f + expf(-g)); }

template <Rounding kMode>
__global__ void swiglu_kernel(const bf16* h, bf16* out, int64_t rows, int64_t features) {
  const int64_t vectors_per_row = features / 8;
  const int64_t total = rows * vectors_per_row;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / vectors_per_row, c = 8 * (i % vectors_per_row);
    Vec8 value, gate;
    value.load(h + r * 2 * features + c);
    gate.load(h + r * 2 * features + features + c);
#pragma unroll
    for (int e = 0; e < 8; ++e) value.f[e] *= step<kMode>(silu_f(gate.f[e]));
    value.store(out + r * features + c);
  }
}

__global__ void silu_kernel(const float* x, bf16* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = __float2bfloat16_rn(silu_f(x[i]));
  }
}

__global__ void silu_f32_kernel(const float* x, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    out[i] = silu_f(x[i]);
  }
}

// Calls f(std::integral_constant<Rounding, mode>) for the runtime mode.
template <typename F>
void with_rounding(Rounding rounding, F&& f) {
  switch (rounding) {
    case Rounding::once: f(std::integral_constant<Rounding, Rounding::once>{}); break;
    case Rounding::provider_fused_norm:
      f(std::integral_constant<Rounding, Rounding::provider_fused_norm>{});
      break;
    case Rounding::provider_composite_norm:
      f(std::integral_constant<Rounding, Rounding::provider_composite_norm>{});
      break;
  }
}

void require(bool ok, const char* op, const std::string& what) {
  if (!ok) throw std::invalid_argument(std::string(op) + ": " + what);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

unsigned grid_for(int64_t items, int threads) {
  const int64_t blocks = (items + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65536 * 8 ? (blocks > 0 ? blocks : 1) : 65536 * 8);
}

void check_modulation(const Modulation& m, const char* op, bool gate) {
  require(m.table && m.rows && aligned16(m.table) && m.table_stride % 8 == 0, op,
          "the modulation table must be 16-byte aligned with a stride multiple of 8");
  require(m.shift_offset % 8 == 0 && m.scale_offset % 8 == 0 && (!gate || m.gate_offset % 8 == 0),
          op, "modulation offsets must be multiples of 8");
}

}  // namespace

void residual_norm_modulate(void* x, const void* y, int64_t y_stride, const void* weight,
                            float eps, const Modulation& mod, void* h, int64_t rows,
                            int64_t cols, Rounding rounding, cudaStream_t stream,
                            void* x_copy) {
  const char* op = "residual_norm_modulate";
  require(!x_copy || (!y && aligned16(x_copy)), op,
          "x_copy needs no residual and 16-byte alignment");
  require(rows > 0 && cols > 0 && cols % 8 == 0 && cols <= 8 * kRowThreads * kMaxVectors, op,
          "channels must be a positive multiple of 8 up to 8192, got " + std::to_string(cols));
  require(aligned16(x) && aligned16(h) && aligned16(weight) && (!y || aligned16(y)), op,
          "operands must be 16-byte aligned");
  require(!y || y_stride % 8 == 0, op, "y's row stride must be a multiple of 8");
  check_modulation(mod, op, y != nullptr);
  with_rounding(rounding, [&](auto mode) {
    constexpr Rounding kMode = decltype(mode)::value;
    const unsigned grid = static_cast<unsigned>(rows);
    if (y) {
      residual_norm_modulate_kernel<true, kMode><<<grid, kRowThreads, 0, stream>>>(
          static_cast<bf16*>(x), static_cast<const bf16*>(y), y_stride,
          static_cast<const bf16*>(weight), eps, mod, static_cast<bf16*>(h), cols, nullptr);
    } else {
      residual_norm_modulate_kernel<false, kMode><<<grid, kRowThreads, 0, stream>>>(
          static_cast<bf16*>(x), nullptr, 0, static_cast<const bf16*>(weight), eps, mod,
          static_cast<bf16*>(h), cols, static_cast<bf16*>(x_copy));
    }
  });
  check_cuda(cudaGetLastError(), op);
}

void gated_residual(void* x, const void* y, int64_t y_stride, const Modulation& mod,
                    int64_t rows, int64_t cols, Rounding rounding, cudaStream_t stream) {
  const char* op = "gated_residual";
  require(rows > 0 && cols > 0 && cols % 8 == 0 && y_stride % 8 == 0, op,
          "channels and y's stride must be multiples of 8");
  require(aligned16(x) && aligned16(y), op, "operands must be 16-byte aligned");
  check_modulation(mod, op, true);
  with_rounding(rounding, [&](auto mode) {
    gated_residual_kernel<decltype(mode)::value><<<grid_for(rows * cols / 8, 256), 256, 0, stream>>>(
        static_cast<bf16*>(x), static_cast<const bf16*>(y), y_stride, mod, rows, cols);
  });
  check_cuda(cudaGetLastError(), op);
}

void head_norm_rope(void* x, int64_t row_stride, int64_t rows, int heads, int q_heads,
                    const void* q_weight, const void* k_weight, float eps, const float* cos,
                    const float* sin, int rotary, HeadSteps steps, Rounding rounding,
                    cudaStream_t stream) {
  const char* op = "head_norm_rope";
  const bool norm = steps != HeadSteps::rope, rope = steps != HeadSteps::norm;
  require(rows > 0 && heads > 0 && q_heads >= 0 && q_heads <= heads &&
              row_stride >= int64_t{heads} * 128 && row_stride % 4 == 0,
          op, "each row must hold `heads` heads of 128 channels");
  require(!norm || (q_weight && (k_weight || q_heads == heads)), op, "missing norm weights");
  require(!rope || (rotary >= 0 && rotary <= 128 && rotary % 2 == 0), op,
          "rotary channels must be even and at most 128, got " + std::to_string(rotary));
  require(!rope || rotary == 0 || (cos && sin), op, "missing RoPE tables");
  if (!k_weight) k_weight = q_weight;
  const int64_t items = rows * heads;
  with_rounding(rounding, [&](auto mode) {
    constexpr Rounding kMode = decltype(mode)::value;
    auto launch = [&](auto norm_c, auto rope_c) {
      constexpr bool kNorm = decltype(norm_c)::value, kRope = decltype(rope_c)::value;
      if ((!kRope || rotary % 16 == 0) && heads <= 128 && aligned16(x) && row_stride % 8 == 0 &&
          (!kNorm || (aligned16(q_weight) && aligned16(k_weight)))) {
        head_norm_rope_rows_kernel<kMode, kNorm, kRope>
            <<<static_cast<unsigned>(rows), 256, 0, stream>>>(
                static_cast<bf16*>(x), row_stride, heads, q_heads,
                static_cast<const bf16*>(q_weight), static_cast<const bf16*>(k_weight), eps, cos,
                sin, rotary);
      } else {
        head_norm_rope_kernel<kMode, kNorm, kRope>
            <<<static_cast<unsigned>((items + 7) / 8), 256, 0, stream>>>(
                static_cast<bf16*>(x), row_stride, rows, heads, q_heads,
                static_cast<const bf16*>(q_weight), static_cast<const bf16*>(k_weight), eps, cos,
                sin, rotary);
      }
    };
    using T = std::true_type;
    using F = std::false_type;
    if (norm && rope) launch(T{}, T{});
    else if (norm) launch(T{}, F{});
    else launch(F{}, T{});
  });
  check_cuda(cudaGetLastError(), op);
}

void qk_norm_rope(void* qkv, int64_t row_stride, int64_t rows, int heads, const void* q_weight,
                  const void* k_weight, float eps, const float* cos, const float* sin,
                  int rotary, Rounding rounding, cudaStream_t stream) {
  require(heads > 0 && row_stride >= int64_t{2} * heads * 128, "qk_norm_rope",
          "the QKV row must hold q and k of every head (head_dim 128)");
  head_norm_rope(qkv, row_stride, rows, 2 * heads, heads, q_weight, k_weight, eps, cos, sin,
                 rotary, HeadSteps::norm_rope, rounding, stream);
}

void swiglu(const void* h, void* out, int64_t rows, int64_t features, Rounding rounding,
            cudaStream_t stream) {
  const char* op = "swiglu";
  require(rows > 0 && features > 0 && features % 8 == 0, op,
          "features must be a positive multiple of 8");
  require(aligned16(h) && aligned16(out), op, "operands must be 16-byte aligned");
  with_rounding(rounding, [&](auto mode) {
    swiglu_kernel<decltype(mode)::value><<<grid_for(rows * features / 8, 256), 256, 0, stream>>>(
        static_cast<const bf16*>(h), static_cast<bf16*>(out), rows, features);
  });
  check_cuda(cudaGetLastError(), op);
}

void silu_f32(const float* x, float* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  silu_f32_kernel<<<grid_for(n, 256), 256, 0, stream>>>(x, out, n);
  check_cuda(cudaGetLastError(), "silu");
}

void silu_to_bf16(const float* x, void* out, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  silu_kernel<<<grid_for(n, 256), 256, 0, stream>>>(x, static_cast<bf16*>(out), n);
  check_cuda(cudaGetLastError(), "silu");
}

}  // namespace h3p::kernels::cuda
