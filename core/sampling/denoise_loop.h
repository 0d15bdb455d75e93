#pragma once
// The denoising loop of one request, split so a caller can interleave it with storage:
// a SamplingPlan fixed before the first call, a SamplerState the scheduler updates, and per
// step the call inputs the transformer sees and the update its outputs drive. Mirrors the
// diffusers loop: one call per step on [condition rows | generated rows], each modality's
// generated rows stepped down its own schedule, condition rows left untouched.
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/model/transformer.h"
#include "core/sampling/conditioning.h"
#include "core/sampling/geometry.h"
#include "core/sampling/layout.h"
#include "core/sampling/noise.h"
#include "core/sampling/scheduler.h"

namespace h3p::sampling {

struct SamplingPlan {
  Geometry geometry;
  PackedLayout layout;
  Schedule video_schedule;
  Schedule audio_schedule;
  at::Tensor encoder_hidden_states;  // (1, L, text_dim), as the conditioning gives it
  std::vector<std::vector<int64_t>> keyframe_shapes;  // noise shapes of the keyframe anchors
  int num_calls() const { return static_cast<int>(video_schedule.timesteps.size()); }
};

// Builds the plan. The two schedules must have the same number of calls (InputError otherwise).
SamplingPlan make_plan(const Geometry& geometry, const Conditioning& conditioning,
                       int grid_points, double video_shift, double audio_shift);

// The rows the scheduler updates, fp32.
struct SamplerState {
  at::Tensor video_rows;  // (Vc + V, C*4): keyframe condition rows first
  at::Tensor audio_rows;  // (2N, 32)
};

// Initial rows: noised keyframe anchors (t = 0.999) patchified in front of the video noise
// rows, and the audio noise rows.
SamplerState initial_state(const SamplingPlan& plan, const Conditioning& conditioning,
                           const InitialNoise& noise);

// The call inputs of step `step` from the current state (CPU tensors).
model::CallInputs step_inputs(const SamplingPlan& plan, const SamplerState& state, int step);

// Applies the scheduler update of step `step` from the call's outputs (velocities).
void apply_step(const SamplingPlan& plan, SamplerState& state, const model::CallOutputs& outputs,
                int step);

// Final latents: `latents` (1, 24, T, H, W) and `audio_latents` (2, 32, N), fp32.
struct FinalLatents {
  at::Tensor video;
  at::Tensor audio;
};
FinalLatents final_latents(const SamplingPlan& plan, const SamplerState& state);

}  // namespace h3p::sampling
