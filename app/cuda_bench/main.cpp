// h3parity-cuda-bench: one MiniMax-H3 transformer block at the released widths on the GPU,
// provider (default backends and each forced variant) against the candidate, in one run:
// time per block, TFLOP/s, candidate/provider ratio, and each one's first-step relative L2
// against the default provider; then attention alone. Thin: fixtures and kernels live in
// kernels/cuda.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "core/ops/group_ops.h"
#include "core/ops/impl_spec.h"
#include "kernels/cuda/bench_setup.h"
#include "core/contract/contract.h"
#include "core/model/presets.h"
#include "core/sampling/conditioning.h"
#include "core/sampling/denoise_loop.h"
#include "core/sampling/geometry.h"
#include "core/sampling/noise.h"
#include "kernels/cuda/candidate_block.h"
#include "kernels/cuda/full_call.h"

namespace {

using namespace h3p;
using kernels::cuda::rel_l2;

// The candidate attention rows: schedule, key tile, cluster size, and the name a row and
// --attention-variant use.
struct AttentionVariant {
  kernels::cuda::AttentionSchedule schedule;
  int key_tile, cluster;
  const char* name;
};
using enum kernels::cuda::AttentionSchedule;
constexpr AttentionVariant kAttentionVariants[] = {
    {serial, 176, 1, "serial/176"},
    {serial, 128, 1, "serial/128"},
    {pingpong, 176, 1, "pingpong/176"},
    {pingpong, 176, 2, "pingpong/176 x2"},
    {pingpong_overlapped, 176, 1, "pingpong-overlapped/176"},
    {pingpong_overlapped, 176, 2, "pingpong-overlapped/176 x2"},
    {pingpong_overlapped, 128, 1, "pingpong-overlapped/128"},
    {pingpong_overlapped, 128, 2, "pingpong-overlapped/128 x2"},
    {pingpong_early_rescale, 176, 1, "pingpong-early-rescale/176"},
    {pingpong_early_rescale, 176, 2, "pingpong-early-rescale/176 x2"},
    {pingpong_poly_exp2, 176, 1, "pingpong-poly-exp2/176"},
    {pingpong_poly_exp4, 176, 1, "pingpong-poly-exp4/176"},
    {batched, 176, 1, "batched/176"},
    {batched, 176, 2, "batched/176 x2"},
    {overlapped, 176, 1, "overlapped/176"},
};

// Median milliseconds of `repeats` timed runs after `warmup` untimed ones (CUDA events).
double median_ms(const std::function<void()>& fn, int repeats, int warmup = 1) {
  for (int i = 0; i < warmup; ++i) fn();
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  std::vector<double> times;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < repeats; ++i) {
    cudaEventRecord(start, stream);
    fn();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Medians of `repeats` timed runs of each of `fns`, taken in interleaved rounds (each once a
// round) after one untimed run of each, so that clocks and cache state favour none of them.
std::vector<double> interleaved_median_ms(const std::vector<std::function<void()>>& fns,
                                          int repeats) {
  for (const auto& fn : fns) fn();
  std::vector<std::vector<double>> times(fns.size());
  for (int i = 0; i < repeats; ++i) {
    for (size_t f = 0; f < fns.size(); ++f) times[f].push_back(median_ms(fns[f], 1, 0));
  }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

struct Row;
void full_call_rows(const std::string& contract_path, int64_t text_tokens, int repeats,
                    const std::vector<std::string>& variants, std::vector<Row>& rows);

struct Row {
  std::string what;
  double ms = 0, tflops = 0, ratio = 0, rel_l2 = -1, rel_l2_out = -1;
  bool repeatable = true;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("h3parity-cuda-bench: candidate vs provider, one MiniMax-H3 block on the GPU");
  kernels::cuda::BlockFixtureShape shape;
  int repeats = 8;
  std::string json_path;
  std::vector<std::string> variants{"attention=flash", "attention=efficient", "attention=cudnn",
                                    "gemm=cublaslt"};
  bool skip_block = false;
  std::string contract_path;
  int64_t text_tokens = 512;
  int call_repeats = 2;
  std::vector<std::string> attention_variants;
  app.add_option("--rows", shape.rows, "packed sequence rows")->capture_default_str();
  app.add_option("--heads", shape.heads, "attention heads (x128 channels)")->capture_default_str();
  app.add_option("--hidden", shape.hidden, "hidden width")->capture_default_str();
  app.add_option("--ffn", shape.ffn, "FFN width")->capture_default_str();
  app.add_option("--repeats", repeats, "timed repetitions (median)")->capture_default_str();
  app.add_option("--provider-variant", variants,
                 "provider overrides to time and compare (impl-spec overrides)")
      ->capture_default_str();
  app.add_flag("--attention-only", skip_block, "time attention alone");
  app.add_option("--attention-variant", attention_variants,
                 "time only these candidate attention rows, e.g. pingpong-overlapped/176 "
                 "(a profiler then sees one kernel); all when not given");
  app.add_option("--json", json_path, "write the table as JSON");
  app.add_option("--full-call", contract_path,
                 "also time one whole call (50 blocks, released widths) at this contract's "
                 "geometry, e.g. resources/contracts/h3-reference.json");
  app.add_option("--text-tokens", text_tokens, "text rows of the full call")
      ->capture_default_str();
  app.add_option("--call-repeats", call_repeats, "timed full calls per implementation")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  for (const std::string& v : attention_variants) {
    if (std::none_of(std::begin(kAttentionVariants), std::end(kAttentionVariants),
                     [&](const AttentionVariant& a) { return v == a.name; })) {
      std::cerr << "h3parity-cuda-bench: --attention-variant: unknown variant '" << v
                << "' (names as in the attention rows, e.g. pingpong-overlapped/176)\n";
      return 2;
    }
  }
  // Growable segments, unless the caller chose: the whole call's 50 blocks of weights, drawn in
  // fp32 and kept in bf16, otherwise strand ~14 GB in half-used segments on an 80 GB card.
  ::setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", 0);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::cerr << "h3parity-cuda-bench: no CUDA device\n";
    return 2;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const at::Device device(at::kCUDA, 0);
  std::printf("device %s; rows %lld, hidden %lld, heads %lld x 128, ffn %lld; median of %d\n",
              prop.name, static_cast<long long>(shape.rows), static_cast<long long>(shape.hidden),
              static_cast<long long>(shape.heads), static_cast<long long>(shape.ffn), repeats);

  // The whole call first, while nothing else holds device memory: the 50 blocks' weights take
  // most of an 80 GB card. Its rows are printed last.
  int status = 0;
  std::vector<Row> call_rows;
  if (!contract_path.empty()) {
    try {
      full_call_rows(contract_path, text_tokens, call_repeats, variants, call_rows);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "h3parity-cuda-bench: full call failed: %s\n", e.what());
      status = 1;
    }
    c10::cuda::CUDACachingAllocator::emptyCache();
  }

  auto f = kernels::cuda::BlockFixture::make(shape, device, 1234);

  std::vector<Row> rows;
  model::TransformerWeights tw;
  tw.blocks.push_back(f.weights);
  const model::Transformer transformer(f.config, tw);
  at::Tensor reference_update, reference_out;
  double provider_ms = 0;

  if (!skip_block) {
    auto provider_row = [&](const std::string& spec) {
      const ops::GroupOps group_ops = ops::resolve_group_ops(ops::ImplSpec::parse(spec), nullptr);
      at::Tensor out;
      Row r;
      r.what = "block " + spec;
      r.ms = median_ms([&] { out = transformer.block(0, f.x, f.context, group_ops); }, repeats);
      at::Tensor again = transformer.block(0, f.x, f.context, group_ops);
      r.repeatable = at::equal(out, again);
      const at::Tensor update = at::sub(out.to(at::kFloat), f.x.to(at::kFloat));
      if (!reference_update.defined()) {
        reference_update = update;
        reference_out = out;
        provider_ms = r.ms;
      }
      r.rel_l2 = rel_l2(update, reference_update);
      r.rel_l2_out = rel_l2(out, reference_out);
      r.tflops = f.block_flops() / (r.ms * 1e9);
      r.ratio = r.ms / provider_ms;
      rows.push_back(r);
      c10::cuda::CUDACachingAllocator::emptyCache();
    };
    provider_row("provider");
    for (const std::string& v : variants) provider_row("provider:" + v);

    const auto cw = kernels::cuda::CandidateBlockWeights::from(f.weights);
    kernels::cuda::CandidateBlockContext cctx{f.context.temb, f.context.adaln_rows, f.context.cos,
                                              f.context.sin, f.config.norm_eps,
                                              f.config.qk_norm_eps};
    using kernels::cuda::AttentionSchedule;
    using kernels::cuda::Rounding;
    struct Config {
      AttentionSchedule schedule;
      Rounding rounding;
      int key_tile, cluster;
      const char* name;
    };
    const std::vector<Config> configs = {
        {AttentionSchedule::pingpong_overlapped, Rounding::provider_fused_norm, 176, 1,
         "pingpong-overlapped/176, default"},
        {AttentionSchedule::pingpong_overlapped, Rounding::provider_fused_norm, 176, 2,
         "pingpong-overlapped/176 x2"},
        {AttentionSchedule::pingpong_early_rescale, Rounding::provider_fused_norm, 176, 1,
         "pingpong-early-rescale/176"},
        {AttentionSchedule::pingpong_poly_exp2, Rounding::provider_fused_norm, 176, 1,
         "pingpong-poly-exp2/176"},
        {AttentionSchedule::pingpong_poly_exp4, Rounding::provider_fused_norm, 176, 1,
         "pingpong-poly-exp4/176"},
        {AttentionSchedule::pingpong, Rounding::provider_fused_norm, 176, 1, "pingpong/176"},
        {AttentionSchedule::pingpong_overlapped, Rounding::provider_fused_norm, 128, 1,
         "pingpong-overlapped/128"},
        {AttentionSchedule::batched, Rounding::provider_fused_norm, 176, 1, "batched/176"},
        {AttentionSchedule::serial, Rounding::provider_fused_norm, 176, 1, "serial/176"},
        {AttentionSchedule::serial, Rounding::provider_fused_norm, 128, 1, "serial/128"},
        {AttentionSchedule::pingpong_overlapped, Rounding::once, 176, 1,
         "pingpong-overlapped/176, rounding once"}};
    for (const auto& [schedule, rounding, key_tile, cluster, name] : configs) {
      kernels::cuda::CandidateBlock block({schedule, rounding, false, key_tile, cluster});
      at::Tensor out;
      Row r;
      r.what = std::string("block candidate (") + name + ")";
      r.ms = median_ms([&] { out = block.forward(cw, f.x, cctx); }, repeats);
      r.repeatable = at::equal(out, block.forward(cw, f.x, cctx));
      r.rel_l2 = rel_l2(at::sub(out.to(at::kFloat), f.x.to(at::kFloat)), reference_update);
      r.rel_l2_out = rel_l2(out, reference_out);
      r.tflops = f.block_flops() / (r.ms * 1e9);
      r.ratio = r.ms / provider_ms;
      rows.push_back(r);
    }
    // Where the candidate's time goes (first configuration).
    kernels::cuda::CandidateBlock profiled(
        {configs[0].schedule, configs[0].rounding, true, configs[0].key_tile, configs[0].cluster});
    profiled.forward(cw, f.x, cctx);
    profiled.forward(cw, f.x, cctx);
    std::printf("candidate stages (%s):\n", configs[0].name);
    for (const auto& [stage, ms] : profiled.last_profile()) {
      std::printf("  %-40s %8.3f ms\n", stage.c_str(), ms);
    }
  }

  // The block's GEMMs alone: at::linear (the provider) against the candidate's cuBLASLt plans,
  // timed in interleaved rounds after the candidate's search has run.
  if (!skip_block) {
    const int64_t s = shape.rows, c = shape.hidden, inner = shape.heads * 128, ff = shape.ffn;
    kernels::cuda::LtGemm lt;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    for (auto [n, k, name] : {std::tuple{3 * inner, c, "qkv"}, {c, inner, "out"},
                              {2 * ff, c, "ff.proj"}, {c, ff, "ff.out"}}) {
      at::Tensor x = at::randn({s, k}, f.x.options()), w = at::randn({n, k}, f.x.options());
      at::Tensor y = at::empty({s, n}, f.x.options());
      const double flops = 2.0 * s * n * k;
      const kernels::cuda::GemmShape gs{s, n, k};
      const std::vector<double> ms = interleaved_median_ms(
          {[&] { at::linear(x, w); },
           [&] { lt.run(gs, x.data_ptr(), w.data_ptr(), nullptr, y.data_ptr(), stream); }},
          std::max(repeats, 7));
      Row p;
      p.what = std::string("gemm ") + name + " provider (at::linear)";
      p.ms = ms[0];
      p.tflops = flops / (p.ms * 1e9);
      p.ratio = 1.0;
      rows.push_back(p);
      Row r;
      r.what = std::string("gemm ") + name + " candidate (cuBLASLt)";
      r.ms = ms[1];
      r.tflops = flops / (r.ms * 1e9);
      r.ratio = r.ms / p.ms;
      r.rel_l2 = rel_l2(y, at::linear(x, w));
      rows.push_back(r);
      const kernels::cuda::GemmChoice kept = lt.choice(gs);
      std::printf("gemm %s kept: %s (%d candidates timed, %.3f ms in the search)\n", name,
                  kept.describe().c_str(), kept.timed, kept.ms);
    }
  }

  // Attention alone on the same q, k, v (S, H, 128): PyTorch's SDPA vs the candidate kernel,
  // on unit-normal q, k, v, then on q and k RMS-normalised and rotated as the block feeds them.
  const int64_t s = shape.rows, h = shape.heads, inner = h * 128;
  at::Tensor qkv = at::randn({s, 3 * inner}, f.x.options()).contiguous();
  auto attention_rows = [&](const std::string& data) {
    auto head_view = [&](int i) { return qkv.narrow(1, i * inner, inner).view({s, h, 128}); };
    auto bhsd = [&](int i) { return head_view(i).permute({1, 0, 2}).unsqueeze(0); };
    at::Tensor ref;
    Row sdpa;
    sdpa.what = "attention provider (SDPA default" + data + ")";
    sdpa.ms = median_ms([&] { ref = at::scaled_dot_product_attention(bhsd(0), bhsd(1), bhsd(2)); },
                        repeats);
    sdpa.tflops = f.attention_flops() / (sdpa.ms * 1e9);
    sdpa.ratio = 1.0;
    sdpa.rel_l2 = 0.0;
    rows.push_back(sdpa);
    const at::Tensor ref_rows = ref.squeeze(0).permute({1, 0, 2}).reshape({s, inner});
    for (const auto& [schedule, key_tile, cluster, name] : kAttentionVariants) {
      if (!attention_variants.empty() &&
          std::find(attention_variants.begin(), attention_variants.end(), name) ==
              attention_variants.end()) {
        continue;
      }
      at::Tensor out = at::empty({s, inner}, f.x.options());
      const auto a = kernels::cuda::fused_qkv_attention(qkv.data_ptr(), out.data_ptr(),
                                                        static_cast<int>(s), static_cast<int>(h));
      cudaStream_t stream = at::cuda::getCurrentCUDAStream();
      Row r;
      r.what = std::string("attention candidate (") + name + data + ")";
      r.ms = median_ms(
          [&] { kernels::cuda::attention_bf16(a, schedule, stream, key_tile, cluster); }, repeats);
      const at::Tensor first = out.clone();
      kernels::cuda::attention_bf16(a, schedule, stream, key_tile, cluster);
      r.repeatable = at::equal(first, out);
      r.tflops = f.attention_flops() / (r.ms * 1e9);
      r.ratio = r.ms / sdpa.ms;
      r.rel_l2 = rel_l2(out, ref_rows);
      rows.push_back(r);
    }
  };
  attention_rows("");
  {
    const at::Tensor unit = at::ones({128}, f.x.options());
    kernels::cuda::qk_norm_rope(qkv.data_ptr(), 3 * inner, s, static_cast<int>(h), unit.data_ptr(),
                                unit.data_ptr(), 1e-5f, f.context.cos.data_ptr<float>(),
                                f.context.sin.data_ptr<float>(),
                                static_cast<int>(f.context.cos.size(1)),
                                kernels::cuda::Rounding::provider_fused_norm,
                                at::cuda::getCurrentCUDAStream());
  }
  attention_rows(", normalised q/k");

  rows.insert(rows.end(), call_rows.begin(), call_rows.end());

  std::printf("%-44s %10s %9s %8s %12s %12s %5s\n", "what", "ms", "TFLOP/s", "ratio",
              "relL2 update", "relL2 out", "rep");
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    std::printf("%-44s %10.3f %9.1f %8.3f %12.3e %12.3e %5s\n", r.what.c_str(), r.ms, r.tflops,
                r.ratio, r.rel_l2, r.rel_l2_out, r.repeatable ? "yes" : "NO");
    out.push_back({{"what", r.what}, {"ms", r.ms}, {"tflops", r.tflops}, {"ratio", r.ratio},
                   {"rel_l2_update", r.rel_l2}, {"rel_l2_out", r.rel_l2_out},
                   {"bitwise_repeatable", r.repeatable}});
  }
  if (!json_path.empty()) {
    std::ofstream(json_path) << nlohmann::json{{"device", prop.name},
                                               {"rows", shape.rows},
                                               {"hidden", shape.hidden},
                                               {"heads", shape.heads},
                                               {"ffn", shape.ffn},
                                               {"repeats", repeats},
                                               {"results", out}}
                                    .dump(2)
                             << "\n";
  }
  return status;
}

namespace {

// Provider forward against prepare + candidate blocks + head, for the full model at the
// contract's geometry; then each provider variant once, for its first-step drift.
void full_call_rows(const std::string& contract_path, int64_t text_tokens, int repeats,
                    const std::vector<std::string>& variants, std::vector<Row>& rows) {
  const at::Device device(at::kCUDA, 0);
  const auto c = contract::load_contract(contract_path);
  model::ModelPreset preset = model::find_preset("full-shape", 50);
  const model::Transformer transformer(
      preset.config, kernels::cuda::random_transformer_weights(preset.config, device, 2026));
  // The fp32 draws and the per-block q/k/v stacking leave freed segments behind: hand them
  // back before the activations need room.
  c10::cuda::CUDACachingAllocator::emptyCache();
  const auto geometry = sampling::resolve_geometry(c.frames, c.height, c.width, c.fps);
  const auto conditioning =
      sampling::synthesize_conditioning(c.prompt, text_tokens, preset.config.text_dim);
  const auto plan = sampling::make_plan(geometry, conditioning, c.sampling_steps, c.video_shift,
                                        c.audio_shift);
  const auto noise = sampling::draw_initial_noise(
      42, {}, {1, sampling::kLatentChannels, geometry.num_latent_frames, geometry.latent_height,
               geometry.latent_width},
      {plan.layout.audio_indices.size(0), sampling::kAudioLatentChannels});
  const auto inputs =
      sampling::step_inputs(plan, sampling::initial_state(plan, conditioning, noise), 0);
  const int64_t seq = plan.layout.sequence_length;
  std::printf("full call: %lld layers, %lld rows (%lld text), contract %s\n",
              static_cast<long long>(preset.config.num_layers), static_cast<long long>(seq),
              static_cast<long long>(text_tokens), contract_path.c_str());
  const double inner = static_cast<double>(preset.config.inner_dim());
  const double hidden = static_cast<double>(preset.config.hidden_size);
  const double ffn = static_cast<double>(preset.config.ffn_dim);
  const double sd = static_cast<double>(seq);
  const double flops = preset.config.num_layers *
                       (2 * sd * hidden * 4 * inner + 2 * sd * hidden * 3 * ffn + 4 * sd * sd * inner);

  model::CallOutputs reference;
  double provider_ms = 0;
  auto add = [&](const std::string& what, double ms, const model::CallOutputs& out) {
    Row r;
    r.what = what;
    r.ms = ms;
    r.tflops = flops / (ms * 1e9);
    if (provider_ms == 0) provider_ms = ms, reference = out;
    r.ratio = ms / provider_ms;
    r.rel_l2 = rel_l2(out.sample, reference.sample);
    r.rel_l2_out = rel_l2(out.audio_sample, reference.audio_sample);
    rows.push_back(r);
  };
  {
    const auto provider = ops::resolve_group_ops(ops::ImplSpec::parse("provider"), nullptr);
    model::CallOutputs out;
    const double ms = median_ms([&] { out = transformer.forward(inputs, provider); }, repeats);
    add("call provider (video | audio relL2)", ms, out);
  }
  c10::cuda::CUDACachingAllocator::emptyCache();  // the provider's activations, for 80 GB cards
  {
    kernels::cuda::CandidateCall call(transformer);
    model::CallOutputs out;
    const double ms = median_ms([&] { out = call.forward(inputs); }, repeats);
    add("call candidate blocks (video | audio relL2)", ms, out);
  }
  for (const std::string& v : variants) {
    const auto ops = ops::resolve_group_ops(ops::ImplSpec::parse("provider:" + v), nullptr);
    model::CallOutputs out;
    const double ms = median_ms([&] { out = transformer.forward(inputs, ops); }, 1, 0);
    add("call provider:" + v + " (1 run)", ms, out);
    c10::cuda::CUDACachingAllocator::emptyCache();
  }
}

}  // namespace
