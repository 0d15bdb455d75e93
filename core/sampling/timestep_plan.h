#pragma once
// The per-row timestep plan of one step: every row of the packed sequence gets a timestep
// (generated video and text rows the video t, generated audio rows the audio t, keyframe rows
// their noise-augmentation level, reference-audio rows theirs), reduced to the transformer's
// `timestep` (sorted distinct values) and `timestep_indices` (each row's index into them).
#include <ATen/core/Tensor.h>

#include "core/sampling/layout.h"

namespace h3p::sampling {

// The t a keyframe anchor is noised to and held at (just short of clean).
inline constexpr float kKeyframeNoiseAug = 0.999f;

// The timestep of keyframe rows at a step whose video timestep is video_t: the reference's
// max(float(t), 0.999) taken in double, then stored in fp32.
float condition_video_t(float video_t);

// `timestep` and `timestep_indices` of one step.
struct RowTimesteps {
  at::Tensor timestep;          // (n,) f32, sorted ascending, distinct; n in 1..4
  at::Tensor timestep_indices;  // (S,) i64, row -> index into `timestep`
};

// The plan for `layout` with the given timesteps (t2va / fl2va layouts carry no reference
// audio rows, so reference_audio_t only matters for layouts that have them). Throws
// InputError for a non-finite timestep or a layout whose indices leave the sequence.
RowTimesteps build_row_timesteps(const PackedLayout& layout, float video_t, float audio_t,
                                 float keyframe_t, float reference_audio_t = 1.0f);

}  // namespace h3p::sampling
