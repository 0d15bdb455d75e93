// CandidateOps: adapts the CPU kernels to the OpSet interface. Each primitive checks device,
// dtype, shape and the operand contract of its provider counterpart (core/ops/provider_ops.cpp),
// makes operands contiguous, allocates the result with the provider's shape and dtype, and
// calls one kernel. bf16 and fp32 are supported where all operands share the dtype (as the
// graph uses them); anything else is an InputError naming the primitive.
#include "kernels/candidate_ops.h"

#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "kernels/cpu/activation.h"
#include "kernels/cpu/adaln.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/bf16.h"
#include "kernels/cpu/embed.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_dispatch.h"
#include "kernels/cpu/norm.h"
#include "kernels/cpu/qk_norm.h"
#include "kernels/cpu/residual.h"
#include "kernels/cpu/rope.h"
#include "kernels/cpu/swiglu.h"

namespace h3p::kernels {
namespace {

using cpu::Bf16;

[[noreturn]] void fail(const char* op, const std::string& what) {
  throw InputError(std::string("candidate ") + op + ": " + what);
}

// The operand's storage as a kernel pointer (T is Bf16 or float; dtype checked by the caller).
template <typename T>
const T* ptr(const at::Tensor& t) {
  return static_cast<const T*>(t.data_ptr());
}
template <typename T>
T* mut(at::Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

void require_cpu(const char* op, const at::Tensor& t, const char* name) {
  if (!t.defined()) fail(op, std::string(name) + " is undefined");
  if (t.is_cuda()) {
    fail(op, std::string(name) + " is on CUDA: these are the candidate's CPU kernels; on a "
             "GPU the candidate runs as fused blocks or, group by group, as its CUDA kernels");
  }
  if (!t.device().is_cpu()) fail(op, std::string(name) + " is on " + t.device().str());
}

// The shared floating dtype of the operands (bf16 or f32), or InputError naming the op.
at::ScalarType float_dtype(const char* op, std::initializer_list<const at::Tensor*> ts) {
  const at::ScalarType dtype = (*ts.begin())->scalar_type();
  if (dtype != at::kBFloat16 && dtype != at::kFloat) {
    fail(op, std::string("unsupported dtype ") + c10::toString(dtype) + " (bf16 or f32 only)");
  }
  for (const at::Tensor* t : ts) {
    if (t->scalar_type() != dtype) {
      fail(op, std::string("mixed dtypes ") + c10::toString(dtype) + " and " +
                   c10::toString(t->scalar_type()) + " are not supported");
    }
  }
  return dtype;
}

void require_dim(const char* op, const at::Tensor& t, const char* name, int64_t dim) {
  if (t.dim() != dim) {
    fail(op, std::string(name) + " must be " + std::to_string(dim) + "-D, got " +
                 c10::str(t.sizes()));
  }
}

void require_same_shape(const char* op, const at::Tensor& a, const char* an, const at::Tensor& b,
                        const char* bn) {
  if (a.sizes() != b.sizes()) {
    fail(op, std::string(an) + " " + c10::str(a.sizes()) + " and " + bn + " " +
                 c10::str(b.sizes()) + " differ in shape");
  }
}

class CandidateOps final : public ops::OpSet {
 public:
  explicit CandidateOps(ops::OpSetPtr on_cuda) : on_cuda_(std::move(on_cuda)) {}
  std::string name() const override { return "candidate"; }
  ops::OpSetPtr for_device(const at::Device& device) const override {
    return device.is_cuda() ? on_cuda_ : nullptr;
  }
  std::string numerics_path() const override {
    return std::string("kernels/cpu isa=") + cpu::isa_name(cpu::active_isa());
  }

  at::Tensor linear(const at::Tensor& x, const at::Tensor& w,
                    const std::optional<at::Tensor>& b) const override {
    const char* op = "linear";
    require_cpu(op, x, "x");
    require_cpu(op, w, "w");
    if (b) require_cpu(op, *b, "b");
    const auto dtype = b ? float_dtype(op, {&x, &w, &*b}) : float_dtype(op, {&x, &w});
    require_dim(op, w, "w", 2);
    if (x.dim() < 1) fail(op, "x must have at least one dimension");
    const int64_t k = x.size(-1), n = w.size(0);
    if (w.size(1) != k) {
      fail(op, "x " + c10::str(x.sizes()) + " does not match w " + c10::str(w.sizes()));
    }
    if (b && (b->dim() != 1 || b->size(0) != n)) {
      fail(op, "b " + c10::str(b->sizes()) + " does not match w " + c10::str(w.sizes()));
    }
    const at::Tensor xc = x.contiguous(), wc = w.contiguous();
    const at::Tensor bc = b ? b->contiguous() : at::Tensor();
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape.back() = n;
    at::Tensor y = at::empty(shape, x.options().memory_format(at::MemoryFormat::Contiguous));
    int64_t m = 1;
    for (int64_t i = 0; i + 1 < x.dim(); ++i) m *= x.size(i);
    if (y.numel() == 0) return y;
    if (dtype == at::kBFloat16) {
      cpu::gemm_bf16(ptr<Bf16>(xc), ptr<Bf16>(wc), b ? ptr<Bf16>(bc) : nullptr, mut<Bf16>(y), m,
                     n, k);
    } else {
      cpu::gemm_f32(ptr<float>(xc), ptr<float>(wc), b ? ptr<float>(bc) : nullptr,
                    mut<float>(y), m, n, k);
    }
    return y;
  }

  at::Tensor attention(const at::Tensor& q, const at::Tensor& k,
                       const at::Tensor& v) const override {
    const char* op = "attention";
    require_cpu(op, q, "q");
    require_cpu(op, k, "k");
    require_cpu(op, v, "v");
    const auto dtype = float_dtype(op, {&q, &k, &v});
    require_dim(op, q, "q", 3);
    require_same_shape(op, q, "q", k, "k");
    require_same_shape(op, q, "q", v, "v");
    const int64_t s = q.size(0), h = q.size(1), d = q.size(2);
    const at::Tensor qc = q.contiguous(), kc = k.contiguous(), vc = v.contiguous();
    at::Tensor out = at::empty({s, h, d}, q.options());
    if (out.numel() == 0) return out;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    if (dtype == at::kBFloat16) {
      cpu::attention_bf16(ptr<Bf16>(qc), ptr<Bf16>(kc), ptr<Bf16>(vc), mut<Bf16>(out), s, h, d,
                          scale);
    } else {
      cpu::attention_f32(ptr<float>(qc), ptr<float>(kc), ptr<float>(vc), mut<float>(out), s, h,
                         d, scale);
    }
    return out;
  }

  at::Tensor swiglu(const at::Tensor& h) const override {
    const char* op = "swiglu";
    require_cpu(op, h, "h");
    const auto dtype = float_dtype(op, {&h});
    if (h.dim() < 1 || h.size(-1) % 2 != 0) {
      fail(op, "h " + c10::str(h.sizes()) + " must have an even last dimension");
    }
    const int64_t f = h.size(-1) / 2;
    const at::Tensor hc = h.contiguous();
    std::vector<int64_t> shape(h.sizes().begin(), h.sizes().end());
    shape.back() = f;
    at::Tensor y = at::empty(shape, h.options());
    if (y.numel() == 0) return y;
    const int64_t rows = y.numel() / f;
    if (dtype == at::kBFloat16) {
      cpu::swiglu_bf16(ptr<Bf16>(hc), mut<Bf16>(y), rows, f);
    } else {
      cpu::swiglu_f32(ptr<float>(hc), mut<float>(y), rows, f);
    }
    return y;
  }

  at::Tensor silu(const at::Tensor& x) const override {
    const char* op = "silu";
    require_cpu(op, x, "x");
    const auto dtype = float_dtype(op, {&x});
    const at::Tensor xc = x.contiguous();
    at::Tensor y = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
    if (dtype == at::kBFloat16) {
      cpu::silu_bf16(ptr<Bf16>(xc), mut<Bf16>(y), y.numel());
    } else {
      cpu::silu_f32(ptr<float>(xc), mut<float>(y), y.numel());
    }
    return y;
  }

  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) const override {
    const char* op = "rms_norm";
    require_cpu(op, x, "x");
    require_cpu(op, weight, "weight");
    const auto dtype = float_dtype(op, {&x, &weight});
    if (x.dim() < 1) fail(op, "x must have at least one dimension");
    const int64_t c = x.size(-1);
    if (weight.dim() != 1 || weight.size(0) != c) {
      fail(op, "weight " + c10::str(weight.sizes()) + " does not match x " + c10::str(x.sizes()));
    }
    const at::Tensor xc = x.contiguous(), wc = weight.contiguous();
    at::Tensor y = at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
    if (y.numel() == 0) return y;
    // (S, H, D) is the per-head q/k norm; anything else is row-wise over the last dim.
    if (x.dim() == 3) {
      const int64_t s = x.size(0), h = x.size(1);
      if (dtype == at::kBFloat16) {
        cpu::qk_norm_bf16(ptr<Bf16>(xc), ptr<Bf16>(wc), mut<Bf16>(y), s, h, c, eps);
      } else {
        cpu::qk_norm_f32(ptr<float>(xc), ptr<float>(wc), mut<float>(y), s, h, c, eps);
      }
      return y;
    }
    const int64_t rows = y.numel() / c;
    if (dtype == at::kBFloat16) {
      cpu::rms_norm_bf16(ptr<Bf16>(xc), ptr<Bf16>(wc), mut<Bf16>(y), rows, c, eps);
    } else {
      cpu::rms_norm_f32(ptr<float>(xc), ptr<float>(wc), mut<float>(y), rows, c, eps);
    }
    return y;
  }

  at::Tensor norm_modulate(const at::Tensor& x, const at::Tensor& weight, double eps,
                           const at::Tensor& scale, const at::Tensor& shift) const override {
    const char* op = "norm_modulate";
    require_cpu(op, x, "x");
    require_cpu(op, weight, "weight");
    require_cpu(op, scale, "scale");
    require_cpu(op, shift, "shift");
    const auto dtype = float_dtype(op, {&x, &weight, &scale, &shift});
    require_dim(op, x, "x", 2);
    const int64_t rows = x.size(0), c = x.size(1);
    if (weight.dim() != 1 || weight.size(0) != c) {
      fail(op, "weight " + c10::str(weight.sizes()) + " does not match x " + c10::str(x.sizes()));
    }
    require_same_shape(op, x, "x", scale, "scale");
    require_same_shape(op, x, "x", shift, "shift");
    const at::Tensor xc = x.contiguous(), wc = weight.contiguous();
    const at::Tensor sc = scale.contiguous(), shc = shift.contiguous();
    at::Tensor y = at::empty({rows, c}, x.options());
    if (y.numel() == 0) return y;
    if (dtype == at::kBFloat16) {
      cpu::norm_modulate_bf16(ptr<Bf16>(xc), ptr<Bf16>(wc), ptr<Bf16>(sc), ptr<Bf16>(shc),
                              mut<Bf16>(y), rows, c, eps);
    } else {
      cpu::norm_modulate_f32(ptr<float>(xc), ptr<float>(wc), ptr<float>(sc), ptr<float>(shc),
                             mut<float>(y), rows, c, eps);
    }
    return y;
  }

  at::Tensor gather_rows(const at::Tensor& table, const at::Tensor& rows) const override {
    const char* op = "gather_rows";
    require_cpu(op, table, "table");
    require_cpu(op, rows, "rows");
    const auto dtype = float_dtype(op, {&table});
    require_dim(op, table, "table", 2);
    require_dim(op, rows, "rows", 1);
    if (rows.scalar_type() != at::kLong) {
      fail(op, std::string("rows must be int64, got ") + c10::toString(rows.scalar_type()));
    }
    // A column slice of a wider table (the AdaLN chunks) is read in place.
    const at::Tensor tc = table.stride(1) == 1 ? table : table.contiguous();
    const at::Tensor rc = rows.contiguous();
    const int64_t n = rc.size(0), cols = tc.size(1), limit = tc.size(0);
    const int64_t* ids = rc.data_ptr<int64_t>();
    for (int64_t r = 0; r < n; ++r) {
      if (ids[r] < 0 || ids[r] >= limit) {
        fail(op, "row index " + std::to_string(ids[r]) + " at position " + std::to_string(r) +
                     " is outside [0, " + std::to_string(limit) + ")");
      }
    }
    at::Tensor out = at::empty({n, cols}, table.options());
    if (out.numel() == 0) return out;
    if (dtype == at::kBFloat16) {
      cpu::gather_rows_bf16(ptr<Bf16>(tc), tc.stride(0), ids, mut<Bf16>(out), n, cols);
    } else {
      cpu::gather_rows_f32(ptr<float>(tc), tc.stride(0), ids, mut<float>(out), n, cols);
    }
    return out;
  }

  at::Tensor rope(const at::Tensor& x, const at::Tensor& cos,
                  const at::Tensor& sin) const override {
    const char* op = "rope";
    require_cpu(op, x, "x");
    require_cpu(op, cos, "cos");
    require_cpu(op, sin, "sin");
    const auto dtype = float_dtype(op, {&x});
    require_dim(op, x, "x", 3);
    require_dim(op, cos, "cos", 2);
    require_same_shape(op, cos, "cos", sin, "sin");
    if (cos.scalar_type() != at::kFloat || sin.scalar_type() != at::kFloat) {
      fail(op, "cos and sin must be f32");
    }
    const int64_t s = x.size(0), h = x.size(1), d = x.size(2), r = cos.size(1);
    if (cos.size(0) != s) {
      fail(op, "cos " + c10::str(cos.sizes()) + " does not match x " + c10::str(x.sizes()));
    }
    if (r % 2 != 0 || r > d) {
      fail(op, "rotary width " + std::to_string(r) + " must be even and at most head_dim " +
                   std::to_string(d));
    }
    const at::Tensor xc = x.contiguous(), cc = cos.contiguous(), sc = sin.contiguous();
    at::Tensor y = at::empty({s, h, d}, x.options());
    if (y.numel() == 0) return y;
    if (dtype == at::kBFloat16) {
      cpu::rope_bf16(ptr<Bf16>(xc), ptr<float>(cc), ptr<float>(sc), mut<Bf16>(y), s, h, d, r);
    } else {
      cpu::rope_f32(ptr<float>(xc), ptr<float>(cc), ptr<float>(sc), mut<float>(y), s, h, d, r);
    }
    return y;
  }

  at::Tensor gated_residual(const at::Tensor& x, const at::Tensor& gate,
                            const at::Tensor& y) const override {
    const char* op = "gated_residual";
    require_cpu(op, x, "x");
    require_cpu(op, gate, "gate");
    require_cpu(op, y, "y");
    const auto dtype = float_dtype(op, {&x, &gate, &y});
    require_same_shape(op, x, "x", gate, "gate");
    require_same_shape(op, x, "x", y, "y");
    const at::Tensor xc = x.contiguous(), gc = gate.contiguous(), yc = y.contiguous();
    at::Tensor out =
        at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
    if (dtype == at::kBFloat16) {
      cpu::gated_residual_bf16(ptr<Bf16>(xc), ptr<Bf16>(gc), ptr<Bf16>(yc), mut<Bf16>(out),
                               out.numel());
    } else {
      cpu::gated_residual_f32(ptr<float>(xc), ptr<float>(gc), ptr<float>(yc), mut<float>(out),
                              out.numel());
    }
    return out;
  }

  at::Tensor add(const at::Tensor& x, const at::Tensor& y) const override {
    const char* op = "add";
    require_cpu(op, x, "x");
    require_cpu(op, y, "y");
    const auto dtype = float_dtype(op, {&x, &y});
    require_same_shape(op, x, "x", y, "y");
    const at::Tensor xc = x.contiguous(), yc = y.contiguous();
    at::Tensor out =
        at::empty(x.sizes(), x.options().memory_format(at::MemoryFormat::Contiguous));
    if (dtype == at::kBFloat16) {
      cpu::add_bf16(ptr<Bf16>(xc), ptr<Bf16>(yc), mut<Bf16>(out), out.numel());
    } else {
      cpu::add_f32(ptr<float>(xc), ptr<float>(yc), mut<float>(out), out.numel());
    }
    return out;
  }

  at::Tensor timestep_sinusoid(const at::Tensor& t, int64_t dim) const override {
    const char* op = "timestep_sinusoid";
    require_cpu(op, t, "t");
    require_dim(op, t, "t", 1);
    if (dim < 0) fail(op, "dim must be >= 0, got " + std::to_string(dim));
    if (t.scalar_type() != at::kFloat) {
      fail(op, std::string("t must be f32, got ") + c10::toString(t.scalar_type()));
    }
    const at::Tensor tc = t.contiguous();
    at::Tensor out = at::empty({t.size(0), dim}, t.options());
    if (out.numel() == 0) return out;
    cpu::timestep_sinusoid_f32(ptr<float>(tc), mut<float>(out), t.size(0), dim);
    return out;
  }

 private:
  ops::OpSetPtr on_cuda_;
};

}  // namespace

ops::OpSetPtr make_candidate_ops(ops::OpSetPtr on_cuda) {
  return std::make_shared<CandidateOps>(std::move(on_cuda));
}

}  // namespace h3p::kernels
