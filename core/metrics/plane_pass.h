#pragma once
// One pass over one channel of one frame pair computing everything compare needs from it: the
// squared-error sum, the temporal squared-error sum against the previous frame, and the
// Gaussian SSIM (ssim_gaussian.h). Rows are converted to fp32 once (fp16, fp32 or one channel
// of 8-bit RGB / 255), kept in a ring that stays in the L2 cache, filtered vertically four
// output rows at a time and horizontally in the same sweep. Up to three channels of one frame
// go through one sweep together (run_channels), so that an interleaved RGB row is fetched from
// memory once rather than once per channel. Explicit AVX-512 and AVX2 paths
// and a portable one, chosen at runtime; every path evaluates the same fp32 expressions in the
// same order as pixel_kernels.h, with fused multiply-adds at the same places (the vector FMA
// instructions and the portable path's correctly rounded fmaf round identically), and adds the
// double sums in the same lanes and order, so all paths give bit-identical results, equal to
// GaussianSsim::plane and kernels::error_sse.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/metrics/ssim_gaussian.h"

namespace h3p::metrics {

// Paths of the pass, lowest to highest.
enum class PassIsa { scalar, avx2, avx512 };

// "scalar", "avx2" or "avx512".
const char* pass_isa_name(PassIsa isa);

// The highest path this CPU runs (avx2 needs AVX2 + F16C + FMA3; avx512 needs AVX-512 F/BW/VL
// and FMA3).
PassIsa best_pass_isa();

// The path used by default: best_pass_isa(), lowered by the environment variable
// H3P_METRICS_ISA (scalar | avx2 | avx512; read once; an unknown value throws InputError).
PassIsa default_pass_isa();

// Element type of one side's plane.
enum class PassSource { f16, f32, rgb8 };

// One channel of one frame of one side, not owned. f16 / f32: `data` is the plane (height x
// width, row-major); rgb8: `data` is the frame (height x width x 3 interleaved) and `channel`
// picks the channel, read as value / 255.
struct PassPlane {
  const void* data = nullptr;
  PassSource source = PassSource::f32;
  int channel = 0;
};

// Results of one pass.
struct PassStats {
  double sse = 0;           // Σ (a - b)², as kernels::error_sse returns it
  double temporal_sse = 0;  // Σ ((a - b) - (a' - b'))² against the previous frame; 0 without it
  double ssim = 0;          // mean Gaussian SSIM, as GaussianSsim::plane returns it
};

// Channels run_channels takes at most.
constexpr int kMaxPassChannels = 3;

// Scratch space for one plane size; one object per thread. Throws InputError when a side is
// shorter than the SSIM window.
class PlanePass {
 public:
  PlanePass(int width, int height, PassIsa isa = default_pass_isa());

  // a against b; prev_a / prev_b (both or neither) are the previous frame's planes for the
  // temporal term.
  PassStats run(const PassPlane& a, const PassPlane& b, const PassPlane* prev_a = nullptr,
                const PassPlane* prev_b = nullptr);

  // run() on channels a[c] against b[c] for c < n (1 .. kMaxPassChannels) in one sweep over
  // the rows, into out[c]; prev_a / prev_b (both or neither) hold n planes each. Each out[c]
  // has the bits run() gives for that channel alone.
  void run_channels(int n, const PassPlane* a, const PassPlane* b, const PassPlane* prev_a,
                    const PassPlane* prev_b, PassStats* out);

  PassIsa isa() const { return isa_; }

 private:
  int width_ = 0, height_ = 0;
  PassIsa isa_;
  float weights_[kSsimWindow];
  std::vector<float> buffer_;  // rings, filtered rows, per-row values (plane_pass_impl.h)
};

}  // namespace h3p::metrics
