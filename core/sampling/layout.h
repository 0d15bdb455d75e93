#pragma once
// The packed sequence of the t2va / fl2va tasks: `[text | keyframe rows | target audio |
// target video]`, with the fp64 (t, h, w) rotary coordinate of every row, its modality tag
// (0 video, 1 text, 2 audio) and the row indices the transformer reads each stream through.
// Bit-exact with the reference layout step, including its numpy arithmetic.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/sampling/geometry.h"

namespace h3p::sampling {

inline constexpr int64_t kVideoTag = 0;
inline constexpr int64_t kTextTag = 1;
inline constexpr int64_t kAudioTag = 2;

// The row layout of one request; every tensor lives on the CPU.
struct PackedLayout {
  at::Tensor position_ids;   // (S, 3) f64: rotary (t, h, w) per row
  at::Tensor token_tags;     // (S,) i64: 0 video, 1 text (or the tag the text stream gave), 2 audio
  at::Tensor video_indices;  // (Vc + V,) i64: keyframe rows first, then generated video rows
  at::Tensor audio_indices;  // (2N,) i64: generated audio rows, channel-major
  at::Tensor text_indices;   // (L,) i64: 0..L-1
  int64_t num_condition_video_rows = 0;  // leading video rows that are keyframe conditioning
  int64_t sequence_length = 0;           // S
};

// numpy's pairwise summation of a float64 array (np.sum's order for a contiguous array).
double numpy_pairwise_sum(const double* values, int64_t n);

// numpy.linspace(start, stop, num, endpoint=False) in float64: start + i*((stop-start)/num).
std::vector<double> numpy_linspace_open(double start, double stop, int64_t num);

// The rotary time of each latent frame from `origin`: spans 5/3*(1,4,4,4,4) cumulated
// sequentially (the first frame sits at origin).
std::vector<double> temporal_position_grid(int64_t num_latent_frames, double origin);

// Rotary time of a keyframe anchored at "first" or "last" for L text rows and T latent frames.
// Throws InputError for any other anchor name.
double keyframe_anchor_time(const std::string& anchor, int64_t num_text_tokens,
                            int64_t num_latent_frames);

// Builds the layout for `text_token_tags` ((L,) integer, L >= 1), the geometry and one
// keyframe block per anchor ("first" | "last", in packed order). Throws InputError for bad
// tags or anchors, or latent sizes the (1,2,2) patch does not divide.
PackedLayout build_packed_layout(const at::Tensor& text_token_tags, const Geometry& geometry,
                                 const std::vector<std::string>& keyframe_anchors);

}  // namespace h3p::sampling
