// The candidate's CUDA kernels against the provider's ops (LibTorch on the same GPU) and an
// fp32 reference, at full-width head shapes and awkward lengths, plus bitwise run-to-run
// repeatability and NaN/Inf checks. A plain executable (GPU nodes have no Qt): exit 0 pass,
// 1 fail, 77 skip (no CUDA device).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/model/seeded_weights.h"
#include "core/model/weights.h"
#include "core/ops/group_ops.h"
#include "core/ops/impl_spec.h"
#include "core/ops/provider_ops.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/bench_setup.h"
#include "kernels/cuda/candidate_block.h"
#include "kernels/cuda/fused.h"
#include "kernels/cuda/gemm_lt.h"
#include "kernels/cuda/group_ops.h"

namespace {

using namespace h3p;
using kernels::cuda::rel_l2;

int failures = 0, checks = 0;

void expect(bool ok, const std::string& what) {
  ++checks;
  if (!ok) ++failures;
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
}

// The relative L2 error of `got` against the fp32 reference is within `bound`, and finite.
void expect_close(const at::Tensor& got, const at::Tensor& want, double bound,
                  const std::string& what) {
  const bool finite = at::isfinite(got.to(at::kFloat)).all().item<bool>();
  const double err = rel_l2(got, want);
  char text[64];
  std::snprintf(text, sizeof text, " (rel L2 %.3e, bound %.1e)", err, bound);
  expect(finite && err <= bound, what + text + (finite ? "" : " non-finite output"));
}

cudaStream_t stream() { return at::cuda::getCurrentCUDAStream(); }
const at::TensorOptions kBf16 = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
const at::TensorOptions kF32 = at::TensorOptions().dtype(at::kFloat).device(at::kCUDA);

at::Tensor reference_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  // (S, H, D) fp32 on the CPU, exact softmax.
  at::Tensor qf = q.cpu().to(at::kFloat).permute({1, 0, 2});
  at::Tensor kf = k.cpu().to(at::kFloat).permute({1, 2, 0});
  at::Tensor w = at::softmax(at::matmul(qf, kf) / std::sqrt(static_cast<double>(q.size(2))), -1);
  return at::matmul(w, v.cpu().to(at::kFloat).permute({1, 0, 2})).permute({1, 0, 2});
}

void test_attention() {
  for (auto [rows, heads] : {std::pair{1, 1}, {77, 2}, {128, 3}, {300, 2}, {1000, 4},
                             {2049, 2}}) {
    for (auto [schedule, key_tile] :
         {std::pair{kernels::cuda::AttentionSchedule::serial, 128},
          std::pair{kernels::cuda::AttentionSchedule::serial, 176},
          std::pair{kernels::cuda::AttentionSchedule::overlapped, 176},
          std::pair{kernels::cuda::AttentionSchedule::batched, 176},
          std::pair{kernels::cuda::AttentionSchedule::pingpong, 128},
          std::pair{kernels::cuda::AttentionSchedule::pingpong, 176},
          std::pair{kernels::cuda::AttentionSchedule::pingpong_overlapped, 128},
          std::pair{kernels::cuda::AttentionSchedule::pingpong_overlapped, 176},
          std::pair{kernels::cuda::AttentionSchedule::pingpong_early_rescale, 128},
          std::pair{kernels::cuda::AttentionSchedule::pingpong_early_rescale, 176},
          std::pair{kernels::cuda::AttentionSchedule::pingpong_poly_exp2, 128},
          std::pair{kernels::cuda::AttentionSchedule::pingpong_poly_exp2, 176},
          std::pair{kernels::cuda::AttentionSchedule::pingpong_poly_exp4, 176}}) {
      const int64_t inner = int64_t{heads} * 128;
      // q, k, v interleaved in one (S, 3·inner) buffer, as the fused QKV GEMM writes them.
      at::Tensor qkv = at::randn({rows, 3 * inner}, kBf16).mul_(2.0);
      auto part = [&](int i) { return qkv.narrow(1, i * inner, inner).view({rows, heads, 128}); };
      at::Tensor out = at::full({rows, inner}, NAN, kBf16);
      const auto a =
          kernels::cuda::fused_qkv_attention(qkv.data_ptr(), out.data_ptr(), rows, heads);
      kernels::cuda::attention_bf16(a, schedule, stream(), key_tile);
      const std::string name = "attention S=" + std::to_string(rows) + " H=" +
                               std::to_string(heads) + " tile " + std::to_string(key_tile) +
                               " " + kernels::cuda::attention_schedule_name(schedule);
      const at::Tensor want =
          reference_attention(part(0), part(1), part(2)).reshape({rows, inner}).to(at::kCUDA);
      expect_close(out, want, 1.2e-2, name + " vs fp32 reference (CPU)");
      const at::Tensor provider = at::scaled_dot_product_attention(
          part(0).permute({1, 0, 2}).unsqueeze(0), part(1).permute({1, 0, 2}).unsqueeze(0),
          part(2).permute({1, 0, 2}).unsqueeze(0));
      const double provider_err =
          rel_l2(provider.squeeze(0).permute({1, 0, 2}).reshape({rows, inner}), want);
      const double ours = rel_l2(out, want);
      char text[96];
      std::snprintf(text, sizeof text, " error %.3e within 2x the provider's %.3e", ours,
                    provider_err);
      expect(ours <= 2.0 * provider_err + 1e-4, name + text);
      const at::Tensor first = out.clone();
      kernels::cuda::attention_bf16(a, schedule, stream(), key_tile);
      expect(at::equal(first, out), name + " bitwise repeatable");
      // Pairs of CTAs sharing K/V through multicast (an odd tile count pads the last pair).
      out.fill_(NAN);
      kernels::cuda::attention_bf16(a, schedule, stream(), key_tile, 2);
      expect(at::equal(first, out), name + " in clusters of 2: bitwise the same");
      // Moving the rescale and skipping factors of 1 changes no arithmetic.
      if (schedule == kernels::cuda::AttentionSchedule::pingpong_early_rescale) {
        out.fill_(NAN);
        kernels::cuda::attention_bf16(a, kernels::cuda::AttentionSchedule::pingpong_overlapped,
                                      stream(), key_tile);
        expect(at::equal(first, out), name + ": bitwise pingpong-overlapped's output");
      }
    }
  }
  bool refused_cluster = false;
  try {
    at::Tensor qkv = at::randn({8, 3 * 128}, kBf16), out = at::empty({8, 128}, kBf16);
    const auto a = kernels::cuda::fused_qkv_attention(qkv.data_ptr(), out.data_ptr(), 8, 1);
    kernels::cuda::attention_bf16(a, kernels::cuda::AttentionSchedule::serial, stream(), 128, 4);
  } catch (const std::invalid_argument&) {
    refused_cluster = true;
  }
  expect(refused_cluster, "attention refuses clusters of 4");
  bool refused = false;
  try {
    kernels::cuda::AttentionArgs a;
    a.head_dim = 64;
    kernels::cuda::attention_bf16(a, kernels::cuda::AttentionSchedule::serial, stream());
  } catch (const std::invalid_argument&) {
    refused = true;
  }
  expect(refused, "attention refuses head_dim 64");
}

void test_gemm() {
  kernels::cuda::LtGemm gemm;
  for (auto [m, n, k] : {std::tuple{1, 8, 8}, {37, 264, 520}, {1000, 512, 768},
                         {4099, 1024, 256}}) {
    at::Tensor x = at::randn({m, k}, kBf16), w = at::randn({n, k}, kBf16).div_(std::sqrt(k));
    at::Tensor b = at::randn({n}, kBf16);
    at::Tensor y = at::empty({m, n}, kBf16);
    const std::string name = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                             std::to_string(k);
    kernels::cuda::GemmShape shape{m, n, k, 0, 0, true, false};
    gemm.run(shape, x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), stream());
    const at::Tensor want =
        at::linear(x.cpu().to(at::kFloat), w.cpu().to(at::kFloat), b.cpu().to(at::kFloat));
    expect_close(y.cpu(), want, 5e-3, name + " (+bias) vs fp32 on the CPU");
    expect_close(y, at::linear(x, w, b).to(at::kFloat), 5e-3, name + " vs provider at::linear");
    expect(gemm.split_k(shape) == 1, name + " keeps an algorithm without split-K");
    const at::Tensor first = y.clone();
    gemm.run(shape, x.data_ptr(), w.data_ptr(), b.data_ptr(), y.data_ptr(), stream());
    expect(at::equal(first, y), name + " bitwise repeatable");
  }
  // Without a bias, and with accumulate (Y += X·Wᵀ).
  for (auto [m, n, k] : {std::tuple{1000, 512, 768}, {4099, 1024, 256}}) {
    at::Tensor x = at::randn({m, k}, kBf16), w = at::randn({n, k}, kBf16).div_(std::sqrt(k));
    at::Tensor y = at::empty({m, n}, kBf16);
    const std::string name = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                             std::to_string(k) + " (no bias)";
    const kernels::cuda::GemmShape shape{m, n, k};
    gemm.run(shape, x.data_ptr(), w.data_ptr(), nullptr, y.data_ptr(), stream());
    expect_close(y, at::linear(x, w).to(at::kFloat), 5e-3, name + " vs provider at::linear");
    const kernels::cuda::GemmChoice kept = gemm.choice(shape);
    expect(kept.split_k == 1 && kept.timed >= 2,
           name + " timed its candidates and kept " + kept.describe());
    const at::Tensor first = y.clone();
    gemm.run(shape, x.data_ptr(), w.data_ptr(), nullptr, y.data_ptr(), stream());
    expect(at::equal(first, y), name + " bitwise repeatable");
    const kernels::cuda::GemmShape add{m, n, k, 0, 0, false, true};
    at::Tensor acc = first.clone();
    gemm.run(add, x.data_ptr(), w.data_ptr(), nullptr, acc.data_ptr(), stream());
    expect_close(acc, first.to(at::kFloat) + at::linear(x, w).to(at::kFloat), 1e-2,
                 name + " accumulated into Y");
  }
}

kernels::cuda::Modulation modulation(const at::Tensor& table, const at::Tensor& rows,
                                     int64_t c) {
  kernels::cuda::Modulation m;
  m.table = table.data_ptr();
  m.table_stride = table.size(1);
  m.rows = rows.data_ptr<int64_t>();
  m.shift_offset = 0;
  m.scale_offset = c;
  m.gate_offset = 2 * c;
  return m;
}

using kernels::cuda::Rounding;

const char* rounding_name(Rounding r) {
  return r == Rounding::once ? " [round once]"
         : r == Rounding::provider_fused_norm ? " [provider steps, fused norm]"
                                              : " [provider steps, composite norm]";
}

// Bound against the provider: tight when the kernel rounds where the provider does.
double provider_bound(Rounding r) { return r == Rounding::provider_fused_norm ? 4e-3 : 1e-2; }

void test_memory_bound(Rounding rounding) {
  const auto provider = ops::resolve_group_ops(ops::ImplSpec::parse("provider"), nullptr);
  const ops::OpSet& p = provider(ops::Group::norm);
  const double fp32_bound = rounding == Rounding::once ? 8e-3 : 1.2e-2;
  for (auto [s, c] : {std::pair{1, 8}, {33, 264}, {1000, 5376}, {257, 8192}}) {
    at::Tensor x = at::randn({s, c}, kBf16), y = at::randn({s, c}, kBf16);
    at::Tensor weight = at::add(at::randn({c}, kF32).mul(0.1), 1.0).to(at::kBFloat16);
    at::Tensor table = at::randn({5, 3 * c}, kF32).mul(0.3).to(at::kBFloat16);
    at::Tensor rows = at::randint(0, 5, {s}, at::TensorOptions().dtype(at::kLong).device(at::kCUDA));
    const auto mod = modulation(table, rows, c);
    at::Tensor shift = table.narrow(1, 0, c).index_select(0, rows);
    at::Tensor scale = table.narrow(1, c, c).index_select(0, rows);
    at::Tensor gate = table.narrow(1, 2 * c, c).index_select(0, rows);
    const std::string shape =
        " S=" + std::to_string(s) + " C=" + std::to_string(c) + rounding_name(rounding);

    at::Tensor h = at::empty_like(x), x1 = x.clone();
    kernels::cuda::residual_norm_modulate(x1.data_ptr(), nullptr, 0, weight.data_ptr(), 1e-5f,
                                          mod, h.data_ptr(), s, c, rounding, stream());
    auto fp32_norm_mod = [&](const at::Tensor& xs) {
      at::Tensor xf = xs.to(at::kFloat);
      at::Tensor n = xf * at::rsqrt(xf.pow(2).mean(-1, true) + 1e-5) * weight.to(at::kFloat);
      return n * (1 + scale.to(at::kFloat)) + shift.to(at::kFloat);
    };
    expect_close(h, fp32_norm_mod(x), fp32_bound, "norm_modulate" + shape + " vs fp32");
    expect_close(h, p.norm_modulate(x, weight, 1e-5, scale, shift).to(at::kFloat),
                 provider_bound(rounding), "norm_modulate" + shape + " vs provider");
    expect(at::equal(x1, x), "norm_modulate" + shape + " leaves x alone without a residual");
    at::Tensor copy = at::full_like(x, NAN), h_copy = at::empty_like(x);
    kernels::cuda::residual_norm_modulate(x1.data_ptr(), nullptr, 0, weight.data_ptr(), 1e-5f,
                                          mod, h_copy.data_ptr(), s, c, rounding, stream(),
                                          copy.data_ptr());
    expect(at::equal(copy, x) && at::equal(h_copy, h),
           "norm_modulate" + shape + " copies x in the same pass, h unchanged");

    at::Tensor x2 = x.clone();
    kernels::cuda::residual_norm_modulate(x2.data_ptr(), y.data_ptr(), c, weight.data_ptr(),
                                          1e-5f, mod, h.data_ptr(), s, c, rounding, stream());
    const at::Tensor want_x = x.to(at::kFloat) + gate.to(at::kFloat) * y.to(at::kFloat);
    expect_close(x2, want_x, fp32_bound, "gated residual + norm" + shape + " residual vs fp32");
    expect_close(h, fp32_norm_mod(x2), fp32_bound, "gated residual + norm" + shape + " h vs fp32");

    at::Tensor x3 = x.clone();
    kernels::cuda::gated_residual(x3.data_ptr(), y.data_ptr(), c, mod, s, c, rounding, stream());
    expect(at::equal(x3, x2), "gated_residual" + shape + " equals the fused residual bitwise");
    expect_close(x3, p.gated_residual(x, gate, y).to(at::kFloat), provider_bound(rounding),
                 "gated_residual" + shape + " vs provider");

    at::Tensor up = at::randn({s, 2 * c}, kBf16), g = at::empty({s, c}, kBf16);
    kernels::cuda::swiglu(up.data_ptr(), g.data_ptr(), s, c, rounding, stream());
    const at::Tensor uf = up.to(at::kFloat);
    expect_close(g, uf.narrow(1, 0, c) * at::silu(uf.narrow(1, c, c)), fp32_bound,
                 "swiglu" + shape + " vs fp32");
    expect_close(g, p.swiglu(up).to(at::kFloat), provider_bound(rounding),
                 "swiglu" + shape + " vs provider");
  }
}

void test_qk_norm_rope(Rounding rounding) {
  const auto provider = ops::resolve_group_ops(ops::ImplSpec::parse("provider"), nullptr);
  const ops::OpSet& p = provider(ops::Group::rope);
  for (auto [s, heads, rotary] : {std::tuple{1, 1, 96}, {77, 3, 96}, {500, 2, 128}, {64, 2, 0}, {50, 2, 20}}) {
    const int64_t inner = int64_t{heads} * 128;
    at::Tensor qkv = at::randn({s, 3 * inner}, kBf16).mul_(3.0);
    at::Tensor wq = at::add(at::randn({128}, kF32).mul(0.1), 1.0).to(at::kBFloat16);
    at::Tensor wk = at::add(at::randn({128}, kF32).mul(0.1), 1.0).to(at::kBFloat16);
    at::Tensor angles = at::rand({s, std::max(rotary / 2, 1)}, kF32).mul(50.0);
    angles = at::cat({angles, angles}, 1).narrow(1, 0, rotary).contiguous();
    at::Tensor cos = at::cos(angles), sin = at::sin(angles);
    at::Tensor before = qkv.clone();
    kernels::cuda::qk_norm_rope(qkv.data_ptr(), 3 * inner, s, heads, wq.data_ptr(),
                                wk.data_ptr(), 1e-5f, rotary ? cos.data_ptr<float>() : nullptr,
                                rotary ? sin.data_ptr<float>() : nullptr, rotary, rounding,
                                stream());
    const std::string shape = " S=" + std::to_string(s) + " H=" + std::to_string(heads) +
                              " R=" + std::to_string(rotary) + rounding_name(rounding);
    for (int which = 0; which < 2; ++which) {
      at::Tensor x = before.narrow(1, which * inner, inner).view({s, heads, 128});
      at::Tensor w = which == 0 ? wq : wk;
      at::Tensor n = p.rms_norm(x, w, 1e-5);
      at::Tensor want = rotary ? p.rope(n, cos, sin) : n;
      expect_close(qkv.narrow(1, which * inner, inner).view({s, heads, 128}),
                   want.to(at::kFloat), rounding == Rounding::provider_fused_norm ? 4e-3 : 1.2e-2,
                   std::string(which ? "k" : "q") + " norm+rope" + shape + " vs provider");
    }
    expect(at::equal(qkv.narrow(1, 2 * inner, inner), before.narrow(1, 2 * inner, inner)),
           "qk_norm_rope" + shape + " leaves v alone");
  }
}

// A narrow block over 1000 rows: 4 heads, 512 channels, video, audio and text rows.
kernels::cuda::BlockFixtureShape small_block_shape() {
  kernels::cuda::BlockFixtureShape shape;
  shape.rows = 1000;
  shape.heads = 4;
  shape.hidden = 512;
  shape.ffn = 1024;
  shape.temb_dim = 256;
  shape.text_rows = 64;
  shape.audio_rows = 100;
  return shape;
}

void test_block(Rounding rounding) {
  const kernels::cuda::BlockFixtureShape shape = small_block_shape();
  const auto f = kernels::cuda::BlockFixture::make(shape, at::Device(at::kCUDA, 0), 7);
  model::TransformerWeights tw;
  tw.blocks.push_back(f.weights);
  const model::Transformer transformer(f.config, tw);
  const auto provider = ops::resolve_group_ops(ops::ImplSpec::parse("provider"), nullptr);
  const auto efficient =
      ops::resolve_group_ops(ops::ImplSpec::parse("provider:attention=efficient"), nullptr);
  const at::Tensor want = transformer.block(0, f.x, f.context, provider);
  const at::Tensor spread_out = transformer.block(0, f.x, f.context, efficient);
  const auto cw = kernels::cuda::CandidateBlockWeights::from(f.weights);
  const kernels::cuda::CandidateBlockContext ctx{f.context.temb, f.context.adaln_rows,
                                                 f.context.cos, f.context.sin,
                                                 f.config.norm_eps, f.config.qk_norm_eps};
  for (auto schedule : {kernels::cuda::AttentionSchedule::serial,
                        kernels::cuda::AttentionSchedule::overlapped,
                        kernels::cuda::AttentionSchedule::pingpong,
                        kernels::cuda::AttentionSchedule::pingpong_overlapped,
                        kernels::cuda::AttentionSchedule::pingpong_early_rescale,
                        kernels::cuda::AttentionSchedule::pingpong_poly_exp2}) {
    kernels::cuda::CandidateBlock block({schedule, rounding, false, 176});
    const at::Tensor got = block.forward(cw, f.x, ctx);
    const at::Tensor x = f.x.to(at::kFloat);
    const double err = rel_l2(got.to(at::kFloat) - x, want.to(at::kFloat) - x);
    const double spread = rel_l2(spread_out.to(at::kFloat) - x, want.to(at::kFloat) - x);
    char text[128];
    std::snprintf(text, sizeof text,
                  "candidate block update vs provider: rel L2 %.3e (provider backend spread "
                  "%.3e)%s schedule %s",
                  err, spread, rounding_name(rounding),
                  kernels::cuda::attention_schedule_name(schedule));
    expect(err <= (rounding == Rounding::once ? 2e-2 : 1e-2) &&
               at::isfinite(got.to(at::kFloat)).all().item<bool>(),
           text);
    expect(at::equal(got, block.forward(cw, f.x, ctx)), "candidate block bitwise repeatable");
  }
}

// The candidate's CUDA kernels group by group (group_ops.h): with no group swapped the block
// equals the fused block bit for bit wherever q, k and v as three GEMMs equal the stacked QKV
// GEMM (cuBLASLt may pick another algorithm for the narrower shape: then within 1e-3); each
// group alone, the rest the provider's, stays within the bf16 class of the provider's block.
void test_group_ops() {
  const kernels::cuda::BlockFixtureShape shape = small_block_shape();
  const auto f = kernels::cuda::BlockFixture::make(shape, at::Device(at::kCUDA, 0), 11);
  model::TransformerWeights tw;
  tw.blocks.push_back(f.weights);
  const model::Transformer transformer(f.config, tw);
  const ops::OpSetPtr cuda_ops = kernels::cuda::make_candidate_group_ops();
  const ops::OpSetPtr provider_ops = ops::make_provider_ops();
  auto groups_with = [&](auto candidate_group) {
    std::array<ops::OpSetPtr, ops::kGroupCount> per_group;
    for (ops::Group g : ops::kAllGroups) {
      per_group[static_cast<std::size_t>(g)] = candidate_group(g) ? cuda_ops : provider_ops;
    }
    return ops::GroupOps(per_group);
  };
  const at::Tensor x = f.x.to(at::kFloat);
  const at::Tensor want = transformer.block(0, f.x, f.context, ops::GroupOps(provider_ops));

  // q, k and v one by one against the stacked GEMM the fused block runs.
  const auto cw = kernels::cuda::CandidateBlockWeights::from(f.weights);
  kernels::cuda::LtGemm gemm;
  const at::Tensor h = at::randn({shape.rows, shape.hidden}, kBf16);
  const int64_t inner = shape.heads * 128;
  at::Tensor stacked = at::empty({shape.rows, 3 * inner}, kBf16);
  gemm.run({shape.rows, 3 * inner, shape.hidden}, h.data_ptr(), cw.qkv.data_ptr(), nullptr,
           stacked.data_ptr(), stream());
  const at::Tensor one_by_one =
      at::cat({cuda_ops->linear(h, f.weights.attn.to_q, std::nullopt),
               cuda_ops->linear(h, f.weights.attn.to_k, std::nullopt),
               cuda_ops->linear(h, f.weights.attn.to_v, std::nullopt)}, 1);
  const bool qkv_same = at::equal(stacked, one_by_one);
  std::printf("note q, k, v GEMMs one by one %s the stacked QKV GEMM (rel L2 %.3e)\n",
              qkv_same ? "equal" : "differ from", rel_l2(one_by_one, stacked));

  kernels::cuda::CandidateBlock fused;
  const kernels::cuda::CandidateBlockContext ctx{f.context.temb, f.context.adaln_rows,
                                                 f.context.cos, f.context.sin,
                                                 f.config.norm_eps, f.config.qk_norm_eps};
  const at::Tensor fused_out = fused.forward(cw, f.x, ctx);
  const at::Tensor per_group =
      transformer.block(0, f.x, f.context, groups_with([](ops::Group g) { return ops::is_interim(g); }));
  const double diff = rel_l2(per_group.to(at::kFloat) - x, fused_out.to(at::kFloat) - x);
  char text[160];
  std::snprintf(text, sizeof text,
                "per-group block, nothing swapped, vs the fused block: %s (update rel L2 %.3e)",
                at::equal(per_group, fused_out) ? "bitwise equal" : "differs", diff);
  expect(qkv_same ? at::equal(per_group, fused_out) : diff <= 1e-3, text);
  expect(at::equal(per_group, transformer.block(0, f.x, f.context, groups_with([](ops::Group g) {
                     return ops::is_interim(g);
                   }))),
         "per-group block bitwise repeatable");

  for (ops::Group only : ops::kAllGroups) {
    if (!ops::is_interim(only)) continue;
    const at::Tensor got =
        transformer.block(0, f.x, f.context, groups_with([only](ops::Group g) { return g == only; }));
    const double err = rel_l2(got.to(at::kFloat) - x, want.to(at::kFloat) - x);
    std::snprintf(text, sizeof text, "group %s alone on the CUDA candidate: update rel L2 %.3e vs provider",
                  std::string(ops::group_name(only)).c_str(), err);
    expect(err <= 1e-2 && at::isfinite(got.to(at::kFloat)).all().item<bool>(), text);
  }

  bool refused = false;
  try {
    cuda_ops->linear(h.to(at::kFloat), f.weights.attn.to_q.to(at::kFloat), std::nullopt);
  } catch (const InputError& e) {
    refused = std::string(e.what()).find("candidate linear (CUDA)") != std::string::npos;
  }
  expect(refused, "fp32 operands refused with an InputError naming the primitive");
}

}  // namespace

// Seeded weights draw the same bits on the GPU as on the CPU (integer hashing and exactly
// rounded fp32 steps), across the chunk boundary and after the bf16 rounding of a parameter.
void test_seeded_weights() {
  for (const auto& [shape, stream] :
       std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{9'000'000}, "long"}, {{7168, 5376}, "transformer_blocks.0.attn.to_q.weight"},
           {{3, 5}, "short"}}) {
    const at::Tensor cpu = model::seeded_unit_normal(shape, 20261204, stream, at::kCPU);
    const at::Tensor gpu = model::seeded_unit_normal(shape, 20261204, stream, at::kCUDA);
    expect(at::equal(cpu, gpu.cpu()), "seeded draw '" + stream + "' " +
                                          std::to_string(cpu.numel()) + " values: CUDA = CPU");
  }
  const model::ParamSpec spec{"transformer_blocks.3.ff.net.0.proj.weight", {28672, 5376},
                              io::DType::BF16, model::ParamKind::weight, 5376};
  auto drawn = [&](const at::Device& device) {
    return model::param_value(spec, model::seeded_unit_normal(spec.shape, 9, spec.name, device))
        .to(at::kBFloat16);
  };
  expect(at::equal(drawn(at::kCPU), drawn(at::kCUDA).cpu()),
         "seeded bf16 parameter (28672x5376): CUDA = CPU");
}

// usage: test_cuda_kernels [SUITE...] (default: every suite)
int main(int argc, char** argv) {
  const std::vector<std::string> only(argv + 1, argv + argc);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skip: no CUDA device\n");
    return 77;
  }
  at::manual_seed(20261202);
  std::vector<std::pair<const char*, std::function<void()>>> suites = {
      {"attention", test_attention}, {"gemm", test_gemm}, {"group ops", test_group_ops},
      {"seeded weights", test_seeded_weights}};
  for (Rounding r : {Rounding::once, Rounding::provider_fused_norm,
                     Rounding::provider_composite_norm}) {
    suites.emplace_back("memory-bound", [r] { test_memory_bound(r); });
    suites.emplace_back("qk_norm_rope", [r] { test_qk_norm_rope(r); });
    suites.emplace_back("block", [r] { test_block(r); });
  }
  for (const auto& [name, run] : suites) {
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    try {
      run();
    } catch (const std::exception& e) {
      expect(false, std::string(name) + " threw: " + e.what());
    }
  }
  std::printf("%d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
