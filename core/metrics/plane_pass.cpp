#include "core/metrics/plane_pass.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/common/error.h"
#include "core/metrics/plane_pass_kernel.h"
#include "core/metrics/ssim_gaussian.h"

namespace h3p::metrics {
namespace {

PassIsa isa_from_environment() {
  const char* value = std::getenv("H3P_METRICS_ISA");
  const PassIsa best = best_pass_isa();
  if (value == nullptr || *value == '\0') return best;
  const std::string v = value;
  PassIsa wanted;
  if (v == "scalar") {
    wanted = PassIsa::scalar;
  } else if (v == "avx2") {
    wanted = PassIsa::avx2;
  } else if (v == "avx512") {
    wanted = PassIsa::avx512;
  } else {
    throw InputError("environment: H3P_METRICS_ISA: unknown value '" + v +
                     "' (scalar, avx2, avx512)");
  }
  return static_cast<int>(wanted) < static_cast<int>(best) ? wanted : best;
}

pass_kernel::Side side_of(const PassPlane* p) {
  pass_kernel::Side s;
  if (p == nullptr) return s;
  s.data = p->data;
  s.source = p->source == PassSource::f16   ? pass_kernel::kF16
             : p->source == PassSource::f32 ? pass_kernel::kF32
                                            : pass_kernel::kRgb8;
  s.channel = p->channel;
  return s;
}

// i / 255 in fp32, the 8-bit rule of kernels::rgb_channel_to_float.
struct ByteScale {
  float values[256];
  ByteScale() {
    for (int i = 0; i < 256; ++i) values[i] = static_cast<float>(i) / 255.0f;
  }
};

// Floats in a 64-byte cache line.
constexpr std::size_t kLineFloats = 16;

}  // namespace

const char* pass_isa_name(PassIsa isa) {
  switch (isa) {
    case PassIsa::scalar:
      return "scalar";
    case PassIsa::avx2:
      return "avx2";
    case PassIsa::avx512:
      return "avx512";
  }
  return "unknown";
}

PassIsa best_pass_isa() {
  static const PassIsa best = [] {
#if defined(__x86_64__)
    __builtin_cpu_init();
    // Both vector paths use FMA3 (the 256-bit and scalar forms too), checked explicitly.
    const bool fma = __builtin_cpu_supports("fma");
    if (fma && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl")) {
      return PassIsa::avx512;
    }
    if (fma && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) {
      return PassIsa::avx2;
    }
#endif
    return PassIsa::scalar;
  }();
  return best;
}

PassIsa default_pass_isa() {
  static const PassIsa isa = isa_from_environment();
  return isa;
}

PlanePass::PlanePass(int width, int height, PassIsa isa)
    : width_(width), height_(height), isa_(isa) {
  if (width < kSsimWindow || height < kSsimWindow) {
    throw InputError("SSIM: frame " + std::to_string(width) + "x" + std::to_string(height) +
                     " is smaller than the " + std::to_string(kSsimWindow) + "x" +
                     std::to_string(kSsimWindow) + " window");
  }
  if (static_cast<int>(isa_) > static_cast<int>(best_pass_isa())) isa_ = best_pass_isa();
  gaussian_window(weights_);  // the weights of GaussianSsim
}

PassStats PlanePass::run(const PassPlane& a, const PassPlane& b, const PassPlane* prev_a,
                         const PassPlane* prev_b) {
  PassStats out;
  run_channels(1, &a, &b, prev_a, prev_b, &out);
  return out;
}

void PlanePass::run_channels(int n, const PassPlane* a, const PassPlane* b,
                             const PassPlane* prev_a, const PassPlane* prev_b, PassStats* out) {
  static_assert(kMaxPassChannels == pass_kernel::kMaxChannels);
  if (n < 1 || n > kMaxPassChannels) {
    throw InputError("plane pass: " + std::to_string(n) + " channels (1 .. " +
                     std::to_string(kMaxPassChannels) + ")");
  }
  static const ByteScale byte_scale;
  pass_kernel::Args args;
  args.width = width_;
  args.height = height_;
  args.weights = weights_;
  args.byte_scale = byte_scale.values;
  args.channels = n;
  args.temporal = prev_a != nullptr && prev_b != nullptr;
  for (int c = 0; c < n; ++c) {
    args.a[c] = side_of(&a[c]);
    args.b[c] = side_of(&b[c]);
    if (args.temporal) {
      args.prev_a[c] = side_of(&prev_a[c]);
      args.prev_b[c] = side_of(&prev_b[c]);
    }
  }
  // One cache line more, so that the pass can start on a line boundary.
  const std::size_t floats = pass_kernel::buffer_floats(width_, n) + kLineFloats;
  if (buffer_.size() < floats) buffer_.resize(floats);
  // Rows are whole lines apart (plane_pass_impl.h): aligned, no vector access splits a line.
  const auto at = reinterpret_cast<std::uintptr_t>(buffer_.data());
  args.buffer = buffer_.data() + (-at / sizeof(float)) % kLineFloats;
  pass_kernel::Out raw[pass_kernel::kMaxChannels];
  switch (isa_) {
    case PassIsa::avx512:
      pass_kernel::run_avx512(args, raw);
      break;
    case PassIsa::avx2:
      pass_kernel::run_avx2(args, raw);
      break;
    case PassIsa::scalar:
      pass_kernel::run_scalar(args, raw);
      break;
  }
  for (int c = 0; c < n; ++c) out[c] = {raw[c].sse, raw[c].temporal_sse, raw[c].ssim};
}

}  // namespace h3p::metrics
