// bench_kernels: times the candidate gemm and attention kernels against the provider ops
// (at::linear, the provider attention) at the `small` preset's shapes for the demo geometry
// (S = 12 text + 414 audio + 444 video = 870 rows; hidden 256, ffn 704, heads 4 x 64) and
// prints GFLOP/s and the speedup. Both sides use the same thread count (the core count, or
// --threads N). Not a test: timings are printed, never asserted.
//
// usage: bench_kernels [--threads N] [--isa scalar|avx2|avx512|amx] [--min-seconds X]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/ops/provider_ops.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_dispatch.h"

namespace cpu = h3p::kernels::cpu;

namespace {

double min_seconds = 0.5;

// Median seconds per call of fn over enough calls to fill min_seconds (at least 5), after 2
// warm-up calls.
double time_call(const std::function<void()>& fn) {
  fn();
  fn();
  std::vector<double> times;
  double total = 0;
  while (times.size() < 5 || total < min_seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const double dt =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    times.push_back(dt);
    total += dt;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void print_row(const std::string& name, double flops, double provider_s, double candidate_s) {
  std::printf("%-34s %9.3f %9.2f %9.3f %9.2f %8.2fx\n", name.c_str(), provider_s * 1e3,
              flops / provider_s * 1e-9, candidate_s * 1e3, flops / candidate_s * 1e-9,
              provider_s / candidate_s);
}

void bench_linear(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
                  bool bias, at::ScalarType dtype) {
  const auto opts = at::TensorOptions().dtype(dtype);
  const at::Tensor x = at::randn({m, k}).to(dtype);
  const at::Tensor w = at::mul(at::randn({n, k}), 0.05).to(dtype);
  const std::optional<at::Tensor> b =
      bias ? std::optional<at::Tensor>(at::randn({n}).to(dtype)) : std::nullopt;
  const auto provider = h3p::ops::make_provider_ops();
  const double tp = time_call([&] { (void)provider->linear(x, w, b); });
  const double tc = time_call([&] {
    at::Tensor y = at::empty({m, n}, opts);
    if (dtype == at::kBFloat16) {
      cpu::gemm_bf16(static_cast<const cpu::Bf16*>(x.data_ptr()),
                     static_cast<const cpu::Bf16*>(w.data_ptr()),
                     b ? static_cast<const cpu::Bf16*>(b->data_ptr()) : nullptr,
                     static_cast<cpu::Bf16*>(y.data_ptr()), m, n, k);
    } else {
      cpu::gemm_f32(x.data_ptr<float>(), w.data_ptr<float>(),
                    b ? b->data_ptr<float>() : nullptr, y.data_ptr<float>(), m, n, k);
    }
  });
  const std::string label = name + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                            std::to_string(k) + (dtype == at::kBFloat16 ? " bf16" : " f32");
  print_row(label, 2.0 * m * n * k, tp, tc);
}

void bench_attention(std::int64_t s, std::int64_t h, std::int64_t d, at::ScalarType dtype) {
  const auto opts = at::TensorOptions().dtype(dtype);
  const at::Tensor q = at::mul(at::randn({s, h, d}), 1.5).to(dtype);
  const at::Tensor k = at::mul(at::randn({s, h, d}), 1.5).to(dtype);
  const at::Tensor v = at::randn({s, h, d}).to(dtype);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const auto provider = h3p::ops::make_provider_ops();
  const double tp = time_call([&] { (void)provider->attention(q, k, v).contiguous(); });
  const double tc = time_call([&] {
    at::Tensor out = at::empty({s, h, d}, opts);
    if (dtype == at::kBFloat16) {
      cpu::attention_bf16(static_cast<const cpu::Bf16*>(q.data_ptr()),
                          static_cast<const cpu::Bf16*>(k.data_ptr()),
                          static_cast<const cpu::Bf16*>(v.data_ptr()),
                          static_cast<cpu::Bf16*>(out.data_ptr()), s, h, d, scale);
    } else {
      cpu::attention_f32(q.data_ptr<float>(), k.data_ptr<float>(), v.data_ptr<float>(),
                         out.data_ptr<float>(), s, h, d, scale);
    }
  });
  const std::string label = "attention " + std::to_string(s) + "x" + std::to_string(h) + "x" +
                            std::to_string(d) + (dtype == at::kBFloat16 ? " bf16" : " f32");
  print_row(label, 4.0 * s * s * h * d, tp, tc);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = cpu::kernel_threads();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) {
      threads = std::max(1, std::atoi(argv[i + 1]));
    } else if (std::strcmp(argv[i], "--isa") == 0) {
      const std::string v = argv[i + 1];
      cpu::set_isa_for_tests(v == "scalar"   ? cpu::Isa::scalar
                             : v == "avx2"   ? cpu::Isa::avx2
                             : v == "avx512" ? cpu::Isa::avx512
                                             : cpu::Isa::amx);
    } else if (std::strcmp(argv[i], "--min-seconds") == 0) {
      min_seconds = std::atof(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: bench_kernels [--threads N] [--isa I] [--min-seconds X]\n");
      return 2;
    }
  }
  cpu::set_threads_for_tests(threads);
  at::set_num_threads(threads);
  at::manual_seed(1);
  std::printf("%s; threads %d; candidate isa %s\n", h3p::ops::torch_version_string().c_str(),
              threads, cpu::isa_name(cpu::active_isa()));
  std::printf("%-34s %9s %9s %9s %9s %9s\n", "op (m x n x k | s x h x d)", "prov ms",
              "prov GF/s", "cand ms", "cand GF/s", "speedup");
  const auto bf16 = at::kBFloat16;
  bench_linear("q/k/v/out proj", 870, 256, 256, false, bf16);
  bench_linear("ff.proj (SwiGLU in)", 870, 1408, 256, false, bf16);
  bench_linear("ff.out", 870, 256, 704, false, bf16);
  bench_linear("refiner q/k/v/out (text)", 12, 256, 256, false, bf16);
  bench_linear("adaln projection (GEMV)", 1, 4608, 128, true, bf16);
  bench_linear("adaln projection (GEMV)", 4, 4608, 128, true, bf16);
  bench_linear("fp32 linear (proj_in/out size)", 870, 256, 256, true, at::kFloat);
  bench_attention(870, 4, 64, bf16);
  bench_attention(870, 4, 64, at::kFloat);
  return 0;
}
