// The built-in CPU candidate (kernels/cpu) exported through the candidate plugin ABI. Each
// primitive calls the very kernel CandidateOps (kernels/candidate_ops.cpp) calls, with the
// same arguments, writing straight into h3parity's preallocated output: `plugin:h3p_candidate`
// is bitwise `candidate` (tests/e2e/plugins.sh), and `bench` of the two measures what the ABI
// costs per call (docs/benchmarks.md). h3parity has checked shapes and dtypes before a call
// (core/ops/plugin/plugin_ops.cpp); this file checks the device and dtype it dispatches on.
#include <h3parity/candidate_plugin.h>

#include <cmath>
#include <cstdio>

#include "kernels/cpu/activation.h"
#include "kernels/cpu/adaln.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/embed.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/norm.h"
#include "kernels/cpu/qk_norm.h"
#include "kernels/cpu/residual.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/swiglu.h"

namespace {

namespace cpu = h3p::kernels::cpu;
using cpu::Bf16;

enum class Kind { f32, bf16, other };

Kind kind(const DLTensor* t) {
  if (t->dtype.lanes != 1) return Kind::other;
  if (t->dtype.code == kDLFloat && t->dtype.bits == 32) return Kind::f32;
  if (t->dtype.code == kDLBfloat && t->dtype.bits == 16) return Kind::bf16;
  return Kind::other;
}

int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

template <typename T>
const T* in(const DLTensor* t) {
  return t ? static_cast<const T*>(t->data) : nullptr;
}
template <typename T>
T* out_ptr(DLTensor* t) {
  return static_cast<T*>(t->data);
}

int32_t refuse(const H3pCall* call, const char* op, const char* what) {
  std::snprintf(call->error, call->error_size, "h3p-candidate %s: %s", op, what);
  return H3P_ERROR_UNSUPPORTED;
}

// The CPU and one float dtype, or the error status to return.
#define H3P_DISPATCH_CHECK(op, t)                                                     \
  if (call->device.device_type != kDLCPU) return refuse(call, op, "CPU tensors only"); \
  const Kind k = kind(t);                                                             \
  if (k == Kind::other) return refuse(call, op, "bf16 or f32 only")

int32_t linear(const H3pCall* call, const DLTensor* x, const DLTensor* w, const DLTensor* b,
               DLTensor* out) {
  H3P_DISPATCH_CHECK("linear", x);
  const int64_t m = x->shape[0], kk = x->shape[1], n = w->shape[0];
  if (k == Kind::bf16) {
    cpu::gemm_bf16(in<Bf16>(x), in<Bf16>(w), in<Bf16>(b), out_ptr<Bf16>(out), m, n, kk);
  } else {
    cpu::gemm_f32(in<float>(x), in<float>(w), in<float>(b), out_ptr<float>(out), m, n, kk);
  }
  return H3P_OK;
}

int32_t attention(const H3pCall* call, const DLTensor* q, const DLTensor* kt, const DLTensor* v,
                  DLTensor* out) {
  H3P_DISPATCH_CHECK("attention", q);
  const int64_t s = q->shape[0], h = q->shape[1], d = q->shape[2];
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  if (k == Kind::bf16) {
    cpu::attention_bf16(in<Bf16>(q), in<Bf16>(kt), in<Bf16>(v), out_ptr<Bf16>(out), s, h, d,
                        scale);
  } else {
    cpu::attention_f32(in<float>(q), in<float>(kt), in<float>(v), out_ptr<float>(out), s, h, d,
                       scale);
  }
  return H3P_OK;
}

int32_t swiglu(const H3pCall* call, const DLTensor* hidden, DLTensor* out) {
  H3P_DISPATCH_CHECK("swiglu", hidden);
  const int64_t rows = out->shape[0], f = out->shape[1];
  if (k == Kind::bf16) {
    cpu::swiglu_bf16(in<Bf16>(hidden), out_ptr<Bf16>(out), rows, f);
  } else {
    cpu::swiglu_f32(in<float>(hidden), out_ptr<float>(out), rows, f);
  }
  return H3P_OK;
}

int32_t silu(const H3pCall* call, const DLTensor* x, DLTensor* out) {
  H3P_DISPATCH_CHECK("silu", x);
  if (k == Kind::bf16) {
    cpu::silu_bf16(in<Bf16>(x), out_ptr<Bf16>(out), numel(x));
  } else {
    cpu::silu_f32(in<float>(x), out_ptr<float>(out), numel(x));
  }
  return H3P_OK;
}

int32_t rms_norm(const H3pCall* call, const DLTensor* x, const DLTensor* w, double eps,
                 DLTensor* out) {
  H3P_DISPATCH_CHECK("rms_norm", x);
  const int64_t c = x->shape[x->ndim - 1];
  // (S, H, D) is the per-head q/k norm; (S, C) row-wise, as CandidateOps dispatches.
  if (x->ndim == 3) {
    const int64_t s = x->shape[0], h = x->shape[1];
    if (k == Kind::bf16) {
      cpu::qk_norm_bf16(in<Bf16>(x), in<Bf16>(w), out_ptr<Bf16>(out), s, h, c, eps);
    } else {
      cpu::qk_norm_f32(in<float>(x), in<float>(w), out_ptr<float>(out), s, h, c, eps);
    }
    return H3P_OK;
  }
  const int64_t rows = numel(x) / c;
  if (k == Kind::bf16) {
    cpu::rms_norm_bf16(in<Bf16>(x), in<Bf16>(w), out_ptr<Bf16>(out), rows, c, eps);
  } else {
    cpu::rms_norm_f32(in<float>(x), in<float>(w), out_ptr<float>(out), rows, c, eps);
  }
  return H3P_OK;
}

int32_t norm_modulate(const H3pCall* call, const DLTensor* x, const DLTensor* w, double eps,
                      const DLTensor* scale, const DLTensor* shift, DLTensor* out) {
  H3P_DISPATCH_CHECK("norm_modulate", x);
  const int64_t rows = x->shape[0], c = x->shape[1];
  if (k == Kind::bf16) {
    cpu::norm_modulate_bf16(in<Bf16>(x), in<Bf16>(w), in<Bf16>(scale), in<Bf16>(shift),
                            out_ptr<Bf16>(out), rows, c, eps);
  } else {
    cpu::norm_modulate_f32(in<float>(x), in<float>(w), in<float>(scale), in<float>(shift),
                           out_ptr<float>(out), rows, c, eps);
  }
  return H3P_OK;
}

int32_t gather_rows(const H3pCall* call, const DLTensor* table, const DLTensor* rows,
                    DLTensor* out) {
  H3P_DISPATCH_CHECK("gather_rows", table);
  const int64_t n = rows->shape[0], cols = table->shape[1];
  const auto* ids = static_cast<const int64_t*>(rows->data);
  if (k == Kind::bf16) {
    cpu::gather_rows_bf16(in<Bf16>(table), cols, ids, out_ptr<Bf16>(out), n, cols);
  } else {
    cpu::gather_rows_f32(in<float>(table), cols, ids, out_ptr<float>(out), n, cols);
  }
  return H3P_OK;
}

int32_t rope(const H3pCall* call, const DLTensor* x, const DLTensor* cos, const DLTensor* sin,
             DLTensor* out) {
  H3P_DISPATCH_CHECK("rope", x);
  const int64_t s = x->shape[0], h = x->shape[1], d = x->shape[2], r = cos->shape[1];
  if (k == Kind::bf16) {
    cpu::rope_bf16(in<Bf16>(x), in<float>(cos), in<float>(sin), out_ptr<Bf16>(out), s, h, d, r);
  } else {
    cpu::rope_f32(in<float>(x), in<float>(cos), in<float>(sin), out_ptr<float>(out), s, h, d, r);
  }
  return H3P_OK;
}

int32_t gated_residual(const H3pCall* call, const DLTensor* x, const DLTensor* gate,
                       const DLTensor* y, DLTensor* out) {
  H3P_DISPATCH_CHECK("gated_residual", x);
  if (k == Kind::bf16) {
    cpu::gated_residual_bf16(in<Bf16>(x), in<Bf16>(gate), in<Bf16>(y), out_ptr<Bf16>(out),
                             numel(x));
  } else {
    cpu::gated_residual_f32(in<float>(x), in<float>(gate), in<float>(y), out_ptr<float>(out),
                            numel(x));
  }
  return H3P_OK;
}

int32_t add(const H3pCall* call, const DLTensor* x, const DLTensor* y, DLTensor* out) {
  H3P_DISPATCH_CHECK("add", x);
  if (k == Kind::bf16) {
    cpu::add_bf16(in<Bf16>(x), in<Bf16>(y), out_ptr<Bf16>(out), numel(x));
  } else {
    cpu::add_f32(in<float>(x), in<float>(y), out_ptr<float>(out), numel(x));
  }
  return H3P_OK;
}

int32_t timestep_sinusoid(const H3pCall* call, const DLTensor* t, DLTensor* out) {
  if (call->device.device_type != kDLCPU) {
    return refuse(call, "timestep_sinusoid", "CPU tensors only");
  }
  cpu::timestep_sinusoid_f32(in<float>(t), out_ptr<float>(out), t->shape[0], out->shape[1]);
  return H3P_OK;
}

const H3pOps kOps = {sizeof(H3pOps), linear,        attention,      swiglu, silu,
                     rms_norm,       norm_modulate, gather_rows,    rope,   gated_residual,
                     add,            timestep_sinusoid};

// The kernels are thread-safe (each call owns its output); h3parity may call concurrently.
const H3pPlugin kPlugin = {
    sizeof(H3pPlugin), H3P_PLUGIN_ABI_VERSION, H3P_PLUGIN_THREAD_SAFE, "h3p-candidate", "1.0",
    nullptr,           nullptr,                nullptr,
    &kOps, &kOps, &kOps, &kOps, &kOps, &kOps, &kOps, &kOps, &kOps, &kOps};

}  // namespace

extern "C" H3P_PLUGIN_EXPORT const H3pPlugin* h3p_candidate_plugin(uint32_t host_abi_version) {
  return H3P_PLUGIN_ABI_VERSION_MAJOR(host_abi_version) == H3P_PLUGIN_ABI_MAJOR ? &kPlugin
                                                                                : nullptr;
}
