// The candidate's CUDA kernels (kernels/cuda) exported through the candidate plugin ABI, one
// operator group per kernel: gemm through cuBLASLt (LtGemm, a fixed algorithm per shape),
// attention with the sm_90a kernel (pingpong-overlapped schedule, 176-key tiles, head dim
// 128), swiglu and the gated residual with the provider's rounding points. The groups whose
// kernels are fused across groups in the candidate block (qk_norm with rope, norm with
// modulation and residual) are not provided: a spec names where they come from
// (`plugin:h3p_cuda_candidate:rest=provider`). bf16 CUDA tensors only; every launch is ordered
// on the stream h3parity passes. Tested by tests/e2e/plugins_cuda.sh on a GPU.
#include <h3parity/candidate_plugin.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/fused.h"
#include "kernels/cuda/gemm_lt.h"

namespace {

namespace cuda = h3p::kernels::cuda;

// One per process: the cuBLASLt handle and plans, and the identity row indices the residual's
// modulation reads (grown on demand).
struct Context {
  std::unique_ptr<cuda::LtGemm> gemm;
  int64_t* identity_rows = nullptr;
  int64_t identity_size = 0;
  std::mutex mutex;
  ~Context() { cudaFree(identity_rows); }
};

int32_t fail(const H3pCall* call, int32_t status, const char* op, const char* what) {
  std::snprintf(call->error, call->error_size, "h3p-cuda-candidate %s: %s", op, what);
  return status;
}

bool is_bf16(const DLTensor* t) {
  return t->dtype.code == kDLBfloat && t->dtype.bits == 16 && t->dtype.lanes == 1;
}

int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

cudaStream_t stream_of(const H3pCall* call) { return static_cast<cudaStream_t>(call->stream); }

// The CUDA device and bf16, or a refusal.
#define H3P_REQUIRE_BF16_CUDA(op, t)                                                        \
  if (call->device.device_type != kDLCUDA) {                                                \
    return fail(call, H3P_ERROR_UNSUPPORTED, op, "CUDA tensors only");                      \
  }                                                                                         \
  if (!is_bf16(t)) return fail(call, H3P_ERROR_UNSUPPORTED, op, "bf16 only")

// Runs `body`, turning the kernels' exceptions into a status and message.
template <typename Body>
int32_t guarded(const H3pCall* call, const char* op, Body body) {
  try {
    body();
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return fail(call, H3P_ERROR, op, cudaGetErrorString(e));
    return H3P_OK;
  } catch (const std::invalid_argument& e) {
    return fail(call, H3P_ERROR_UNSUPPORTED, op, e.what());
  } catch (const std::exception& e) {
    return fail(call, H3P_ERROR, op, e.what());
  }
}

int32_t linear(const H3pCall* call, const DLTensor* x, const DLTensor* w, const DLTensor* b,
               DLTensor* out) {
  H3P_REQUIRE_BF16_CUDA("linear", x);
  auto* ctx = static_cast<Context*>(call->context);
  return guarded(call, "linear", [&] {
    cuda::GemmShape shape;
    shape.m = x->shape[0];
    shape.k = x->shape[1];
    shape.n = w->shape[0];
    shape.bias = b != nullptr;
    std::lock_guard<std::mutex> lock(ctx->mutex);
    if (!ctx->gemm) ctx->gemm = std::make_unique<cuda::LtGemm>();
    ctx->gemm->run(shape, x->data, w->data, b ? b->data : nullptr, out->data, stream_of(call));
  });
}

int32_t attention(const H3pCall* call, const DLTensor* q, const DLTensor* k, const DLTensor* v,
                  DLTensor* out) {
  H3P_REQUIRE_BF16_CUDA("attention", q);
  return guarded(call, "attention", [&] {
    const int64_t s = q->shape[0], h = q->shape[1], d = q->shape[2];
    cuda::AttentionArgs a;
    a.q = q->data;
    a.k = k->data;
    a.v = v->data;
    a.out = out->data;
    a.q_row_stride = a.k_row_stride = a.v_row_stride = a.out_row_stride = h * d;
    a.seq_q = a.seq_kv = static_cast<int>(s);
    a.heads = static_cast<int>(h);
    a.head_dim = static_cast<int>(d);
    a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    cuda::attention_bf16(a, cuda::kDefaultAttentionSchedule, stream_of(call),
                         cuda::kDefaultAttentionKeyTile, cuda::kDefaultAttentionCluster);
  });
}

int32_t swiglu(const H3pCall* call, const DLTensor* hidden, DLTensor* out) {
  H3P_REQUIRE_BF16_CUDA("swiglu", hidden);
  return guarded(call, "swiglu", [&] {
    cuda::swiglu(hidden->data, out->data, out->shape[0], out->shape[1],
                 cuda::Rounding::provider_fused_norm, stream_of(call));
  });
}

int32_t gated_residual(const H3pCall* call, const DLTensor* x, const DLTensor* gate,
                       const DLTensor* y, DLTensor* out) {
  H3P_REQUIRE_BF16_CUDA("gated_residual", x);
  auto* ctx = static_cast<Context*>(call->context);
  return guarded(call, "gated_residual", [&] {
    const int64_t rows = x->shape[0], cols = x->shape[1];
    const cudaStream_t stream = stream_of(call);
    {
      // The gate is a (rows, cols) table read through identity row indices.
      std::lock_guard<std::mutex> lock(ctx->mutex);
      if (ctx->identity_size < rows) {
        std::vector<int64_t> ids(static_cast<std::size_t>(rows));
        for (int64_t i = 0; i < rows; ++i) ids[static_cast<std::size_t>(i)] = i;
        int64_t* fresh = nullptr;
        if (cudaMalloc(&fresh, sizeof(int64_t) * rows) != cudaSuccess ||
            cudaMemcpy(fresh, ids.data(), sizeof(int64_t) * rows, cudaMemcpyHostToDevice) !=
                cudaSuccess) {
          cudaFree(fresh);
          throw std::runtime_error("cannot allocate the identity row indices");
        }
        cudaStreamSynchronize(stream);  // the old indices may still be read
        cudaFree(ctx->identity_rows);
        ctx->identity_rows = fresh;
        ctx->identity_size = rows;
      }
    }
    if (cudaMemcpyAsync(out->data, x->data, sizeof(uint16_t) * rows * cols,
                        cudaMemcpyDeviceToDevice, stream) != cudaSuccess) {
      throw std::runtime_error("copying x into out failed");
    }
    cuda::Modulation mod;
    mod.table = gate->data;
    mod.table_stride = cols;
    mod.rows = ctx->identity_rows;
    cuda::gated_residual(out->data, y->data, cols, mod, rows, cols,
                         cuda::Rounding::provider_fused_norm, stream);
  });
}

int32_t create(const H3pCreateInfo*, void** context, char* error, size_t error_size) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::snprintf(error, error_size, "h3p-cuda-candidate: no CUDA device");
    return H3P_ERROR;
  }
  *context = new Context();
  return H3P_OK;
}

void destroy(void* context) { delete static_cast<Context*>(context); }

H3pOps make_ops(bool gemm, bool attn, bool glu, bool residual) {
  H3pOps ops{};
  ops.struct_size = sizeof(H3pOps);
  if (gemm) ops.linear = linear;
  if (attn) ops.attention = attention;
  if (glu) ops.swiglu = swiglu;
  if (residual) ops.gated_residual = gated_residual;
  return ops;
}

const H3pOps kGemm = make_ops(true, false, false, false);
const H3pOps kAttention = make_ops(false, true, false, false);
const H3pOps kSwiglu = make_ops(false, false, true, false);
const H3pOps kResidual = make_ops(false, false, false, true);

H3pPlugin make_table() {
  H3pPlugin p{};
  p.struct_size = sizeof(H3pPlugin);
  p.abi_version = H3P_PLUGIN_ABI_VERSION;
  p.flags = 0;  // one call at a time: the cuBLASLt plans are shared
  p.name = "h3p-cuda-candidate";
  p.version = "1.0";
  p.create = create;
  p.destroy = destroy;
  p.gemm = &kGemm;
  p.attention = &kAttention;
  p.swiglu = &kSwiglu;
  p.residual = &kResidual;
  return p;
}

const H3pPlugin kPlugin = make_table();

}  // namespace

extern "C" H3P_PLUGIN_EXPORT const H3pPlugin* h3p_candidate_plugin(uint32_t host_abi_version) {
  return H3P_PLUGIN_ABI_VERSION_MAJOR(host_abi_version) == H3P_PLUGIN_ABI_MAJOR ? &kPlugin
                                                                                : nullptr;
}
