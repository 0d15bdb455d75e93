#include "core/sampling/denoise_loop.h"

#include <ATen/ATen.h>

#include "core/common/error.h"
#include "core/sampling/patchify.h"
#include "core/sampling/timestep_plan.h"

namespace h3p::sampling {

SamplingPlan make_plan(const Geometry& geometry, const Conditioning& conditioning,
                       int grid_points, double video_shift, double audio_shift) {
  SamplingPlan plan;
  plan.geometry = geometry;
  std::vector<std::string> anchors;
  for (std::size_t i = 0; i < conditioning.keyframe_latents.size(); ++i) {
    // Keyframes anchor the first latent frame, then the last (fl2va order).
    anchors.push_back(i == 0 ? "first" : "last");
    plan.keyframe_shapes.push_back(conditioning.keyframe_latents[i].sizes().vec());
  }
  plan.layout = build_packed_layout(conditioning.text_token_tags, geometry, anchors);
  plan.video_schedule = make_schedule(grid_points, video_shift);
  plan.audio_schedule = make_schedule(grid_points, audio_shift);
  if (plan.video_schedule.timesteps.size() != plan.audio_schedule.timesteps.size()) {
    throw InputError("sampling_steps " + std::to_string(grid_points) + ": the video shift " +
                     std::to_string(video_shift) + " and audio shift " +
                     std::to_string(audio_shift) +
                     " collapse to different numbers of calls; choose other shifts or steps");
  }
  plan.encoder_hidden_states = conditioning.encoder_hidden_states;
  return plan;
}

SamplerState initial_state(const SamplingPlan& plan, const Conditioning& conditioning,
                           const InitialNoise& noise) {
  std::vector<at::Tensor> video_parts;
  for (std::size_t i = 0; i < conditioning.keyframe_latents.size(); ++i) {
    at::Tensor noised = scale_noise(conditioning.keyframe_latents[i].to(at::kFloat),
                                    kKeyframeNoiseAug, noise.keyframes.at(i));
    video_parts.push_back(patchify_video(noised));
  }
  video_parts.push_back(patchify_video(noise.video.to(at::kFloat)));
  SamplerState state;
  state.video_rows = at::cat(video_parts, 0).contiguous();
  state.audio_rows = noise.audio_rows.to(at::kFloat).contiguous();
  if (state.video_rows.size(0) != plan.layout.video_indices.size(0) ||
      state.audio_rows.size(0) != plan.layout.audio_indices.size(0)) {
    throw InputError("initial noise rows do not match the packed layout");
  }
  return state;
}

model::CallInputs step_inputs(const SamplingPlan& plan, const SamplerState& state, int step) {
  const float video_t = plan.video_schedule.timesteps.at(static_cast<std::size_t>(step));
  const float audio_t = plan.audio_schedule.timesteps.at(static_cast<std::size_t>(step));
  RowTimesteps rows = build_row_timesteps(plan.layout, video_t, audio_t, condition_video_t(video_t));
  model::CallInputs in;
  in.hidden_states = state.video_rows.unsqueeze(0);
  in.audio_hidden_states = state.audio_rows.unsqueeze(0);
  in.encoder_hidden_states = plan.encoder_hidden_states;
  in.timestep = rows.timestep;
  in.timestep_indices = rows.timestep_indices;
  in.token_tags = plan.layout.token_tags;
  in.position_ids = plan.layout.position_ids;
  in.video_indices = plan.layout.video_indices;
  in.audio_indices = plan.layout.audio_indices;
  in.text_indices = plan.layout.text_indices;
  return in;
}

void apply_step(const SamplingPlan& plan, SamplerState& state, const model::CallOutputs& outputs,
                int step) {
  const int64_t ncv = plan.layout.num_condition_video_rows;
  const int64_t nv = state.video_rows.size(0) - ncv;
  const float video_t = plan.video_schedule.timesteps.at(static_cast<std::size_t>(step));
  const float audio_t = plan.audio_schedule.timesteps.at(static_cast<std::size_t>(step));
  at::Tensor video_v = outputs.sample.to(at::kCPU)[0].narrow(0, ncv, nv).to(at::kFloat);
  at::Tensor audio_v = outputs.audio_sample.to(at::kCPU)[0].to(at::kFloat);
  at::Tensor generated = state.video_rows.narrow(0, ncv, nv);
  at::Tensor next_video = scheduler_step(video_v, video_t, generated, plan.video_schedule, step);
  at::Tensor next_audio =
      scheduler_step(audio_v, audio_t, state.audio_rows, plan.audio_schedule, step);
  state.video_rows = at::cat({state.video_rows.narrow(0, 0, ncv), next_video}, 0).contiguous();
  state.audio_rows = next_audio.contiguous();
}

FinalLatents final_latents(const SamplingPlan& plan, const SamplerState& state) {
  const Geometry& g = plan.geometry;
  const int64_t ncv = plan.layout.num_condition_video_rows;
  at::Tensor rows = state.video_rows.narrow(0, ncv, state.video_rows.size(0) - ncv);
  FinalLatents out;
  out.video = unpatchify_video(rows, kLatentChannels, g.num_latent_frames, g.latent_height,
                               g.latent_width);
  out.audio = audio_rows_to_latents(state.audio_rows, kAudioChannels);
  return out;
}

}  // namespace h3p::sampling
