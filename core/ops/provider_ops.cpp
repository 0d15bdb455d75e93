#include "core/ops/provider_ops.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <cmath>

#include "core/common/error.h"

namespace h3p::ops {
namespace {


// softmax(q·kᵀ·scale)·v as PyTorch's math SDPA computes it: q and k each scaled by
// sqrt(scale) before the product. Inputs (H, S, D).
at::Tensor math_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const double root = std::sqrt(scale);
  at::Tensor qs = at::mul(q, root);
  at::Tensor ks = at::mul(k.transpose(-2, -1), root);
  at::Tensor weights = at::softmax(at::matmul(qs, ks), -1);
  return at::matmul(weights, v);
}

class ProviderOps final : public OpSet {
 public:
  explicit ProviderOps(ProviderOptions options) : options_(std::move(options)) {}

  std::string name() const override {
    std::string n = "provider";
    if (!options_.attention_backend.empty()) n += "[attention=" + options_.attention_backend + "]";
    if (!options_.gemm_backend.empty()) n += "[gemm=" + options_.gemm_backend + "]";
    return n;
  }

  at::Tensor linear(const at::Tensor& x, const at::Tensor& w,
                    const std::optional<at::Tensor>& b) const override {
    if (options_.gemm_backend.empty()) return b ? at::linear(x, w, *b) : at::linear(x, w);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
    if (!x.is_cuda()) {
      throw InputError("provider gemm backend '" + options_.gemm_backend + "' needs a CUDA device");
    }
    // PyTorch's cuBLASLt path for matmuls (torch.backends.cuda.preferred_blas_library), restored
    // on every exit path.
    auto& ctx = at::globalContext();
    struct Restore {
      at::Context& ctx;
      at::BlasBackend before = ctx.blasPreferredBackend();
      ~Restore() { ctx.setBlasPreferredBackend(before); }
    } restore{ctx};
    ctx.setBlasPreferredBackend(at::BlasBackend::Cublaslt);
    return b ? at::linear(x, w, *b) : at::linear(x, w);
#else
    throw InputError("provider gemm backend '" + options_.gemm_backend +
                     "' needs LibTorch 2.3 or newer with CUDA");
#endif
  }

  at::Tensor attention(const at::Tensor& q, const at::Tensor& k,
                       const at::Tensor& v) const override {
    at::Tensor qh = heads_first_view(q), kh = heads_first_view(k), vh = heads_first_view(v);
    at::Tensor out;
    const std::string& backend = options_.attention_backend;
    if (backend == "math") {
      out = math_attention(qh, kh, vh);
    } else if (backend.empty()) {
      out = torch_sdpa(qh, kh, vh);
    } else {
#if TORCH_VERSION_MAJOR >= 2
      out = sdpa_with_backend(qh, kh, vh, backend);
#else
      throw InputError("attention backend '" + backend + "' needs LibTorch 2.x with CUDA");
#endif
    }
    return out.squeeze(0).permute({1, 0, 2});
  }

  at::Tensor swiglu(const at::Tensor& h) const override {
    auto halves = h.chunk(2, -1);
    return at::mul(halves[0], at::silu(halves[1]));
  }

  at::Tensor silu(const at::Tensor& x) const override { return at::silu(x); }

  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) const override {
    return torch_rms_norm(x, weight, eps);
  }

  at::Tensor norm_modulate(const at::Tensor& x, const at::Tensor& weight, double eps,
                           const at::Tensor& scale, const at::Tensor& shift) const override {
    at::Tensor n = rms_norm(x, weight, eps);
    return at::add(at::mul(n, at::add(scale, 1.0)), shift);
  }

  at::Tensor gather_rows(const at::Tensor& table, const at::Tensor& rows) const override {
    return table.index_select(0, rows);
  }

  at::Tensor rope(const at::Tensor& x, const at::Tensor& cos,
                  const at::Tensor& sin) const override {
    const int64_t rotary = cos.size(-1);
    const int64_t head_dim = x.size(-1);
    at::Tensor c = cos.to(x.scalar_type()).unsqueeze(1);  // (S, 1, R)
    at::Tensor s = sin.to(x.scalar_type()).unsqueeze(1);
    at::Tensor xr = x.narrow(-1, 0, rotary);
    at::Tensor xp = x.narrow(-1, rotary, head_dim - rotary);
    auto halves = xr.chunk(2, -1);
    at::Tensor rotated = at::cat({at::neg(halves[1]), halves[0]}, -1);
    at::Tensor out = at::add(at::mul(xr, c), at::mul(rotated, s));
    return at::cat({out, xp}, -1).contiguous();
  }

  at::Tensor gated_residual(const at::Tensor& x, const at::Tensor& gate,
                            const at::Tensor& y) const override {
    return at::add(x, at::mul(gate, y));
  }

  at::Tensor add(const at::Tensor& x, const at::Tensor& y) const override {
    return at::add(x, y);
  }

  at::Tensor timestep_sinusoid(const at::Tensor& t, int64_t dim) const override {
    const int64_t half = dim / 2;
    at::Tensor exponent = at::mul(
        at::arange(0, half, at::TensorOptions().dtype(at::kFloat).device(t.device())),
        -std::log(10000.0));
    exponent = at::div(exponent, half);
    at::Tensor freqs = at::exp(exponent);
    at::Tensor angles = at::mul(t.unsqueeze(1).to(at::kFloat), freqs.unsqueeze(0));
    angles = at::mul(angles, 1);
    at::Tensor emb = at::cat({at::sin(angles), at::cos(angles)}, -1);
    emb = at::cat({emb.narrow(1, half, half), emb.narrow(1, 0, half)}, -1);
    if (dim % 2 == 1) emb = at::constant_pad_nd(emb, {0, 1, 0, 0});
    return emb;
  }

 private:
#if TORCH_VERSION_MAJOR >= 2
  static at::Tensor sdpa_with_backend(const at::Tensor& q, const at::Tensor& k,
                                      const at::Tensor& v, const std::string& backend) {
    if (backend.empty()) return at::scaled_dot_product_attention(q, k, v);
    auto& ctx = at::globalContext();
    // Restores PyTorch's global SDPA switches on every exit path.
    struct Restore {
      at::Context& ctx;
      bool flash = ctx.userEnabledFlashSDP(), mem = ctx.userEnabledMemEfficientSDP(),
           math = ctx.userEnabledMathSDP(), cudnn = ctx.userEnabledCuDNNSDP();
      ~Restore() {
        ctx.setSDPUseFlash(flash);
        ctx.setSDPUseMemEfficient(mem);
        ctx.setSDPUseMath(math);
        ctx.setSDPUseCuDNN(cudnn);
      }
    } restore{ctx};
    ctx.setSDPUseFlash(backend == "flash");
    ctx.setSDPUseMemEfficient(backend == "efficient");
    ctx.setSDPUseMath(false);
    ctx.setSDPUseCuDNN(backend == "cudnn");
    return at::scaled_dot_product_attention(q, k, v);
  }
#endif

  ProviderOptions options_;
};

}  // namespace

std::vector<std::string> provider_variants(const at::Device& device) {
#if TORCH_VERSION_MAJOR >= 2
  if (device.is_cuda()) {
    return {"provider:attention=flash", "provider:attention=efficient",
            "provider:attention=cudnn", "provider:attention=math", "provider:gemm=cublaslt"};
  }
#else
  (void)device;
#endif
  return {"provider:attention=math"};
}

OpSetPtr make_provider_ops(const ProviderOptions& options) {
  const auto& a = options.attention_backend;
  if (!(a.empty() || a == "flash" || a == "efficient" || a == "math" || a == "cudnn")) {
    throw InputError("unknown provider attention backend '" + a + "'");
  }
  if (!(options.gemm_backend.empty() || options.gemm_backend == "cublaslt")) {
    throw InputError("unknown provider gemm backend '" + options.gemm_backend + "'");
  }
  return std::make_shared<ProviderOps>(options);
}

at::Tensor torch_rms_norm(const at::Tensor& x, const std::optional<at::Tensor>& weight,
                          double eps) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::rms_norm(x, {x.size(-1)}, weight, eps);
#else
  // The composite nn.RMSNorm runs on CPU: fp32 statistics, normalise, cast back, then weight.
  at::Tensor up = x.to(at::kFloat);
  at::Tensor inv = at::rsqrt(at::add(at::pow(up, 2).mean({-1}, /*keepdim=*/true), eps));
  at::Tensor normed = at::mul(up, inv).to(x.scalar_type());
  return weight ? at::mul(normed, *weight) : normed;
#endif
}

at::Tensor heads_first_view(const at::Tensor& shd) { return shd.permute({1, 0, 2}).unsqueeze(0); }

at::Tensor torch_sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v);
#else
  return math_attention(q, k, v);
#endif
}

std::string torch_version_string() {
  return "LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." +
         std::to_string(TORCH_VERSION_MINOR) + "." + std::to_string(TORCH_VERSION_PATCH);
}

}  // namespace h3p::ops
