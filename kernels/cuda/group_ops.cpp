// CandidateGroupOps: the candidate's CUDA kernels behind the OpSet interface (group_ops.h).
// Each primitive checks device, dtype and shape, makes its operands contiguous and 16-byte
// aligned (copies are exact), allocates the result as the provider does and launches the
// fused block's kernel for that step on the current CUDA stream.
#include "kernels/cuda/group_ops.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include <cmath>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/common/error.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/fused.h"
#include "kernels/cuda/gemm_lt.h"

namespace h3p::kernels::cuda {
namespace {

// The fused block's defaults (CandidateBlockOptions): what every group runs here.
constexpr Rounding kRounding = Rounding::provider_fused_norm;

[[noreturn]] void fail(const char* op, const std::string& what) {
  throw InputError(std::string("candidate ") + op + " (CUDA): " + what);
}

// `t` as a contiguous, 16-byte aligned bf16 CUDA tensor (a copy where it is not), or InputError.
at::Tensor operand(const char* op, const at::Tensor& t, const char* name,
                   at::ScalarType dtype = at::kBFloat16) {
  if (!t.defined()) fail(op, std::string(name) + " is undefined");
  if (!t.is_cuda()) {
    fail(op, std::string(name) + " is on " + t.device().str() +
                 ": the per-group CUDA candidate runs on CUDA tensors (the CPU candidate runs "
                 "with --device cpu)");
  }
  if (t.scalar_type() != dtype) {
    fail(op, std::string(name) + " is " + c10::toString(t.scalar_type()) + "; the candidate's " +
                 "CUDA kernels take " + c10::toString(dtype));
  }
  at::Tensor c = t.contiguous();
  if (reinterpret_cast<uintptr_t>(c.data_ptr()) % 16 != 0) c = c.clone();
  return c;
}

void require(bool ok, const char* op, const std::string& what) {
  if (!ok) fail(op, what);
}

// Runs a kernel launcher, turning the kernels' argument errors into InputError.
template <typename Launch>
void launch(const char* op, Launch&& body) {
  try {
    body();
  } catch (const std::invalid_argument& e) {
    fail(op, e.what());
  }
}

cudaStream_t stream() { return at::cuda::getCurrentCUDAStream(); }

// Identity row indices 0..rows-1 on x's device: per-row tables are read through them.
at::Tensor identity_rows(const at::Tensor& x, int64_t rows) {
  return at::arange(rows, x.options().dtype(at::kLong));
}

class CandidateGroupOps final : public ops::OpSet {
 public:
  std::string name() const override { return "candidate"; }
  std::string numerics_path() const override {
    return "kernels/cuda per group: attention sm90a pingpong-overlapped, 176-key tiles; gemm "
           "cuBLASLt (one algorithm per shape, no split-K); memory-bound kernels "
           "provider_fused_norm";
  }

  at::Tensor linear(const at::Tensor& x, const at::Tensor& w,
                    const std::optional<at::Tensor>& b) const override {
    const char* op = "linear";
    require(x.dim() >= 1 && w.dim() == 2, op, "x must be at least 1-D and w 2-D");
    const int64_t k = x.size(-1), n = w.size(0);
    require(w.size(1) == k, op,
            "x " + c10::str(x.sizes()) + " does not match w " + c10::str(w.sizes()));
    require(!b || (b->dim() == 1 && b->size(0) == n), op, "b does not match w");
    const at::Tensor xc = operand(op, x, "x"), wc = operand(op, w, "w");
    const at::Tensor bc = b ? operand(op, *b, "b") : at::Tensor();
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
    shape.back() = n;
    at::Tensor y = at::empty(shape, xc.options());
    if (y.numel() == 0) return y;
    GemmShape s;
    s.m = xc.numel() / k;
    s.n = n;
    s.k = k;
    s.bias = b.has_value();
    launch(op, [&] {
      std::lock_guard<std::mutex> lock(gemm_mutex_);
      if (!gemm_) gemm_ = std::make_unique<LtGemm>();
      gemm_->run(s, xc.data_ptr(), wc.data_ptr(), b ? bc.data_ptr() : nullptr, y.data_ptr(),
                 stream());
    });
    return y;
  }

  at::Tensor attention(const at::Tensor& q, const at::Tensor& k,
                       const at::Tensor& v) const override {
    const char* op = "attention";
    require(q.dim() == 3 && q.sizes() == k.sizes() && q.sizes() == v.sizes(), op,
            "q, k and v must share one (S, H, D) shape");
    require(q.size(2) == 128, op, "head dimension " + std::to_string(q.size(2)) +
                                      "; the attention kernel needs 128");
    const at::Tensor qc = operand(op, q, "q"), kc = operand(op, k, "k"), vc = operand(op, v, "v");
    at::Tensor out = at::empty(qc.sizes(), qc.options());
    const int64_t rows = q.size(0), heads = q.size(1), d = q.size(2);
    AttentionArgs a;
    a.q = qc.data_ptr();
    a.k = kc.data_ptr();
    a.v = vc.data_ptr();
    a.out = out.data_ptr();
    a.q_row_stride = a.k_row_stride = a.v_row_stride = a.out_row_stride = heads * d;
    a.seq_q = a.seq_kv = static_cast<int>(rows);
    a.heads = static_cast<int>(heads);
    a.head_dim = static_cast<int>(d);
    a.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    launch(op, [&] {
      attention_bf16(a, kDefaultAttentionSchedule, stream(), kDefaultAttentionKeyTile,
                     kDefaultAttentionCluster);
    });
    return out;
  }

  at::Tensor swiglu(const at::Tensor& h) const override {
    const char* op = "swiglu";
    require(h.dim() == 2 && h.size(1) % 2 == 0, op, "h must be (S, 2F)");
    const at::Tensor hc = operand(op, h, "h");
    at::Tensor out = at::empty({h.size(0), h.size(1) / 2}, hc.options());
    if (out.numel() == 0) return out;
    launch(op, [&] {
      cuda::swiglu(hc.data_ptr(), out.data_ptr(), out.size(0), out.size(1), kRounding, stream());
    });
    return out;
  }

  at::Tensor silu(const at::Tensor& x) const override {
    const char* op = "silu";
    if (x.scalar_type() == at::kFloat) {
      const at::Tensor xc = operand(op, x, "x", at::kFloat);
      at::Tensor out = at::empty_like(xc);
      launch(op, [&] {
        silu_f32(xc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(), stream());
      });
      return out;
    }
    // bf16: computed in fp32 and rounded once, as PyTorch's silu does.
    const at::Tensor xf = operand(op, x, "x").to(at::kFloat);
    at::Tensor out = at::empty(x.sizes(), xf.options().dtype(at::kBFloat16));
    launch(op, [&] { silu_to_bf16(xf.data_ptr<float>(), out.data_ptr(), xf.numel(), stream()); });
    return out;
  }

  // Per-head RMSNorm of (S, H, 128) q or k (the qk_norm group); other shapes are refused.
  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) const override {
    const char* op = "rms_norm";
    require(x.dim() == 3 && x.size(2) == 128 && weight.dim() == 1 && weight.size(0) == 128, op,
            "the CUDA candidate normalises (S, H, 128) heads with a (128) weight, got x " +
                c10::str(x.sizes()) + " (the per-row norms run in norm_modulate)");
    at::Tensor out = operand(op, x, "x").clone();
    const at::Tensor wc = operand(op, weight, "weight");
    if (out.numel() == 0) return out;
    launch(op, [&] {
      head_norm_rope(out.data_ptr(), out.size(1) * 128, out.size(0), static_cast<int>(out.size(1)),
                     static_cast<int>(out.size(1)), wc.data_ptr(), nullptr,
                     static_cast<float>(eps), nullptr, nullptr, 0, HeadSteps::norm, kRounding,
                     stream());
    });
    return out;
  }

  at::Tensor norm_modulate(const at::Tensor& x, const at::Tensor& weight, double eps,
                           const at::Tensor& scale, const at::Tensor& shift) const override {
    const char* op = "norm_modulate";
    require(x.dim() == 2 && scale.sizes() == x.sizes() && shift.sizes() == x.sizes() &&
                weight.dim() == 1 && weight.size(0) == x.size(1),
            op, "x, scale and shift must be (S, C) and weight (C)");
    const at::Tensor xc = operand(op, x, "x"), wc = operand(op, weight, "weight");
    const int64_t rows = x.size(0), cols = x.size(1);
    // The modulation table (S, 2C) = [shift | scale], read through identity rows.
    const at::Tensor table =
        at::cat({operand(op, shift, "shift"), operand(op, scale, "scale")}, 1).contiguous();
    const at::Tensor ids = identity_rows(xc, rows);
    at::Tensor h = at::empty_like(xc);
    if (h.numel() == 0) return h;
    Modulation mod;
    mod.table = table.data_ptr();
    mod.table_stride = 2 * cols;
    mod.rows = ids.data_ptr<int64_t>();
    mod.shift_offset = 0;
    mod.scale_offset = cols;
    launch(op, [&] {
      residual_norm_modulate(const_cast<void*>(xc.data_ptr()), nullptr, 0, wc.data_ptr(),
                             static_cast<float>(eps), mod, h.data_ptr(), rows, cols, kRounding,
                             stream());
    });
    return h;
  }

  // An exact copy of the selected rows.
  at::Tensor gather_rows(const at::Tensor& table, const at::Tensor& rows) const override {
    require(table.is_cuda() && rows.is_cuda(), "gather_rows", "table and rows must be on CUDA");
    return table.index_select(0, rows);
  }

  at::Tensor rope(const at::Tensor& x, const at::Tensor& cos,
                  const at::Tensor& sin) const override {
    const char* op = "rope";
    require(x.dim() == 3 && x.size(2) == 128 && cos.dim() == 2 && cos.sizes() == sin.sizes() &&
                cos.size(0) == x.size(0),
            op, "x must be (S, H, 128) and cos/sin (S, R)");
    at::Tensor out = operand(op, x, "x").clone();
    const at::Tensor cc = operand(op, cos, "cos", at::kFloat);
    const at::Tensor sc = operand(op, sin, "sin", at::kFloat);
    if (out.numel() == 0) return out;
    launch(op, [&] {
      head_norm_rope(out.data_ptr(), out.size(1) * 128, out.size(0), static_cast<int>(out.size(1)),
                     static_cast<int>(out.size(1)), nullptr, nullptr, 0.0f, cc.data_ptr<float>(),
                     sc.data_ptr<float>(), static_cast<int>(cos.size(1)), HeadSteps::rope,
                     kRounding, stream());
    });
    return out;
  }

  at::Tensor gated_residual(const at::Tensor& x, const at::Tensor& gate,
                            const at::Tensor& y) const override {
    const char* op = "gated_residual";
    require(x.dim() == 2 && gate.sizes() == x.sizes() && y.sizes() == x.sizes(), op,
            "x, gate and y must share one (S, C) shape");
    at::Tensor out = operand(op, x, "x").clone();
    const at::Tensor gc = operand(op, gate, "gate"), yc = operand(op, y, "y");
    const int64_t rows = x.size(0), cols = x.size(1);
    if (out.numel() == 0) return out;
    const at::Tensor ids = identity_rows(out, rows);
    Modulation mod;
    mod.table = gc.data_ptr();
    mod.table_stride = cols;
    mod.rows = ids.data_ptr<int64_t>();
    launch(op, [&] {
      cuda::gated_residual(out.data_ptr(), yc.data_ptr(), cols, mod, rows, cols, kRounding,
                           stream());
    });
    return out;
  }

  at::Tensor add(const at::Tensor&, const at::Tensor&) const override {
    fail("add", "the token refiner's residual belongs to the embed group, which runs the "
                "provider's ops on CUDA");
  }

  at::Tensor timestep_sinusoid(const at::Tensor&, int64_t) const override {
    fail("timestep_sinusoid",
         "the timestep embedding belongs to the embed group, which runs the provider's ops on "
         "CUDA");
  }

 private:
  mutable std::mutex gemm_mutex_;
  mutable std::unique_ptr<LtGemm> gemm_;  // created on first use, on the current device
};

}  // namespace

ops::OpSetPtr make_candidate_group_ops() { return std::make_shared<CandidateGroupOps>(); }

}  // namespace h3p::kernels::cuda
