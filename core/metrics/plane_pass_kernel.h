#pragma once
// Private to plane_pass*.cpp: the entry points of the per-ISA pass (plane_pass.h), with plain
// arguments only. The per-ISA files are compiled with their own -m flags, so they must not
// include headers with inline library code (another copy of it could be picked at link time
// and run on a CPU without those instructions).
#include <cstddef>
#include <cstdint>

namespace h3p::metrics::pass_kernel {

// PassSource as an integer.
enum Source : int { kF16 = 0, kF32 = 1, kRgb8 = 2 };

struct Side {
  const void* data = nullptr;  // null: absent (previous frame only)
  int source = kF32;
  int channel = 0;
};

// Channels one pass takes at most.
constexpr int kMaxChannels = 3;

struct Args {
  int width = 0, height = 0;  // both >= 11
  const float* weights;       // 11 normalised Gaussian weights
  const float* byte_scale;    // 256 values: i / 255.0f
  int channels = 1;           // 1 .. kMaxChannels
  bool temporal = false;      // prev_a and prev_b hold the previous frame
  Side a[kMaxChannels], b[kMaxChannels], prev_a[kMaxChannels], prev_b[kMaxChannels];
  float* buffer;  // buffer_floats(width, channels) floats, 64-byte aligned
};

struct Out {
  double sse, temporal_sse, ssim;
};

// Output columns filtered together (a multiple of 16), and the floats of one filtered row of
// such a chunk (its 10 extra input columns, rounded up to whole vectors).
constexpr int kChunk = 256;
constexpr int kChunkStride = kChunk + 32;

constexpr int kBlock = 4;       // output rows filtered vertically together
constexpr int kRing = 16;       // ring rows per quantity (>= 11 + kBlock - 1, a power of two)
constexpr int kQuantities = 4;  // a, b, a² + b², a·b
constexpr int kByteRows = 4;    // rows of 8-bit sources converted to fp32 (a, b, prev_a, prev_b)
static_assert(kRing >= 10 + kBlock && (kRing & (kRing - 1)) == 0);

// Floats of scratch one pass over `channels` planes of this width needs (plane_pass_impl.h
// run_pass): a ring per channel, the filtered chunk rows, the byte rows, e2, t2 and one row of
// SSIM values. Every row starts a multiple of 16 floats from `Args::buffer`.
inline std::size_t buffer_floats(int width, int channels) {
  const std::size_t stride = (static_cast<std::size_t>(width) + 15) / 16 * 16;
  return (static_cast<std::size_t>(channels) * kQuantities * kRing + kByteRows + 3) * stride +
         static_cast<std::size_t>(kBlock) * kQuantities * kChunkStride;
}

// out[c] for each of args.channels channels.
void run_scalar(const Args& args, Out* out);
void run_avx2(const Args& args, Out* out);
void run_avx512(const Args& args, Out* out);

}  // namespace h3p::metrics::pass_kernel
