#include "kernels/cuda/candidate_block.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/fused.h"

namespace h3p::kernels::cuda {
namespace {

void require_gpu_bf16(const at::Tensor& t, const char* name) {
  if (!t.defined() || !t.is_cuda() || t.scalar_type() != at::kBFloat16 || !t.is_contiguous()) {
    throw std::invalid_argument(std::string("candidate block: ") + name +
                                " must be a contiguous bf16 CUDA tensor");
  }
}

}  // namespace

CandidateBlockWeights CandidateBlockWeights::from(const model::BlockWeights& w) {
  CandidateBlockWeights c;
  c.qkv = model::stacked_qkv(w.attn);
  if (!c.qkv.defined()) c.qkv = at::cat({w.attn.to_q, w.attn.to_k, w.attn.to_v}, 0);
  c.norm_q = w.attn.norm_q.contiguous();
  c.norm_k = w.attn.norm_k.contiguous();
  c.out = w.attn.to_out.contiguous();
  c.ff_proj = w.ff.proj.contiguous();
  c.ff_out = w.ff.out.contiguous();
  c.norm1 = w.norm1.contiguous();
  c.norm2 = w.norm2.contiguous();
  c.adaln_w = w.adaln_weight.contiguous();
  c.adaln_b = w.adaln_bias.contiguous();
  for (auto [t, name] : {std::pair{&c.qkv, "to_q/to_k/to_v"}, {&c.norm_q, "norm_q"},
                         {&c.norm_k, "norm_k"}, {&c.out, "to_out"}, {&c.ff_proj, "ff.proj"},
                         {&c.ff_out, "ff.out"}, {&c.norm1, "norm1"}, {&c.norm2, "norm2"},
                         {&c.adaln_w, "adaln weight"}, {&c.adaln_b, "adaln bias"}}) {
    require_gpu_bf16(*t, name);
  }
  return c;
}

CandidateBlock::CandidateBlock(CandidateBlockOptions options) : options_(options) {}

CandidateBlock::~CandidateBlock() {
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
}

void CandidateBlock::mark(const char* stage, cudaStream_t stream) {
  if (!options_.profile) return;
  if (marks_.size() == events_.size()) {
    cudaEvent_t e = nullptr;
    check_cuda(cudaEventCreate(&e), "candidate block: profile event");
    events_.push_back(e);
  }
  cudaEvent_t e = events_[marks_.size()];
  check_cuda(cudaEventRecord(e, stream), "candidate block: profile event");
  marks_.emplace_back(stage, e);
}

std::vector<std::pair<std::string, float>> CandidateBlock::last_profile() const {
  std::vector<std::pair<std::string, float>> out;
  if (marks_.empty()) return out;
  check_cuda(cudaEventSynchronize(marks_.back().second), "candidate block: profile");
  for (std::size_t i = 1; i < marks_.size(); ++i) {
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, marks_[i - 1].second, marks_[i].second);
    out.emplace_back(marks_[i].first, ms);
  }
  return out;
}

at::Tensor CandidateBlock::forward(const CandidateBlockWeights& w, const at::Tensor& x_in,
                                   const CandidateBlockContext& ctx) {
  require_gpu_bf16(x_in, "x");
  const int64_t rows = x_in.size(0), hidden = x_in.size(1);
  const int64_t inner = w.out.size(1), heads = inner / 128, ffn = w.ff_out.size(1);
  const int64_t temb_rows = ctx.temb.size(0), temb_dim = ctx.temb.size(1);
  const int rotary = static_cast<int>(ctx.cos.size(1));
  if (w.qkv.size(0) != 3 * inner || w.qkv.size(1) != hidden || inner % 128 != 0 ||
      w.adaln_w.size(0) != 18 * hidden || w.adaln_w.size(1) != temb_dim) {
    throw std::invalid_argument("candidate block: weight shapes do not match x (S, " +
                                std::to_string(hidden) + ") and temb (T, " +
                                std::to_string(temb_dim) + ")");
  }
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const auto bf16 = x_in.options();
  const Rounding rounding = options_.rounding;
  marks_.clear();
  mark("start", stream);

  // AdaLN table: (T, 18C) viewed as (3T, 6C): shift, scale, gate (attention), then (FFN).
  at::Tensor act = at::empty({temb_rows, temb_dim}, bf16);
  const at::Tensor temb = ctx.temb.to(at::kFloat).contiguous();
  silu_to_bf16(temb.data_ptr<float>(), act.data_ptr(), temb.numel(), stream);
  at::Tensor table = at::empty({temb_rows, 18 * hidden}, bf16);
  gemm_.run({temb_rows, 18 * hidden, temb_dim, 0, 0, true, false}, act.data_ptr(),
            w.adaln_w.data_ptr(), w.adaln_b.data_ptr(), table.data_ptr(), stream);
  const at::Tensor adaln_rows = ctx.adaln_rows.to(at::kLong).contiguous();
  mark("adaln table", stream);
  auto modulation = [&](int64_t shift, int64_t scale, int64_t gate) {
    Modulation m;
    m.table = table.data_ptr();
    m.table_stride = 6 * hidden;
    m.rows = adaln_rows.data_ptr<int64_t>();
    m.shift_offset = shift * hidden;
    m.scale_offset = scale * hidden;
    m.gate_offset = gate * hidden;
    return m;
  };

  // The stream is updated out of place: the first pass copies x while it normalises it.
  at::Tensor x = at::empty_like(x_in);
  at::Tensor h = at::empty({rows, hidden}, bf16);
  residual_norm_modulate(x_in.data_ptr(), nullptr, 0, w.norm1.data_ptr(),
                         static_cast<float>(ctx.norm_eps), modulation(0, 1, 2), h.data_ptr(),
                         rows, hidden, rounding, stream, x.data_ptr());
  mark("copy x + norm1 + modulation", stream);
  at::Tensor qkv = at::empty({rows, 3 * inner}, bf16);
  gemm_.run({rows, 3 * inner, hidden}, h.data_ptr(), w.qkv.data_ptr(), nullptr, qkv.data_ptr(),
            stream);
  mark("gemm qkv", stream);
  const at::Tensor cos = ctx.cos.to(at::kFloat).contiguous(), sin = ctx.sin.to(at::kFloat).contiguous();
  qk_norm_rope(qkv.data_ptr(), 3 * inner, rows, static_cast<int>(heads), w.norm_q.data_ptr(),
               w.norm_k.data_ptr(), static_cast<float>(ctx.qk_norm_eps), cos.data_ptr<float>(),
               sin.data_ptr<float>(), rotary, rounding, stream);
  mark("q/k norm + rope", stream);
  at::Tensor o = at::empty({rows, inner}, bf16);
  const auto a = fused_qkv_attention(qkv.data_ptr(), o.data_ptr(), static_cast<int>(rows),
                                     static_cast<int>(heads));
  attention_bf16(a, options_.schedule, stream, options_.key_tile, options_.attention_cluster);
  mark("attention", stream);
  at::Tensor y = at::empty({rows, hidden}, bf16);
  gemm_.run({rows, hidden, inner}, o.data_ptr(), w.out.data_ptr(), nullptr, y.data_ptr(), stream);
  mark("gemm out", stream);
  residual_norm_modulate(x.data_ptr(), y.data_ptr(), hidden, w.norm2.data_ptr(),
                         static_cast<float>(ctx.norm_eps), modulation(3, 4, 2), h.data_ptr(),
                         rows, hidden, rounding, stream);
  mark("gated residual + norm2 + modulation", stream);
  qkv.reset();
  o.reset();
  at::Tensor up = at::empty({rows, 2 * ffn}, bf16);
  gemm_.run({rows, 2 * ffn, hidden}, h.data_ptr(), w.ff_proj.data_ptr(), nullptr, up.data_ptr(),
            stream);
  mark("gemm ff.proj", stream);
  at::Tensor gated = at::empty({rows, ffn}, bf16);
  swiglu(up.data_ptr(), gated.data_ptr(), rows, ffn, rounding, stream);
  mark("swiglu", stream);
  up.reset();
  gemm_.run({rows, hidden, ffn}, gated.data_ptr(), w.ff_out.data_ptr(), nullptr, y.data_ptr(),
            stream);
  mark("gemm ff.out", stream);
  gated_residual(x.data_ptr(), y.data_ptr(), hidden, modulation(3, 4, 5), rows, hidden,
                 rounding, stream);
  mark("gated residual", stream);
  return x;
}

}  // namespace h3p::kernels::cuda
