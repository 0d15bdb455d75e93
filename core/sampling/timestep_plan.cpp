#include "core/sampling/timestep_plan.h"

#include <initializer_list>
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/common/error.h"

namespace h3p::sampling {

float condition_video_t(float video_t) {
  const double t = static_cast<double>(video_t);
  const double aug = 0.999;  // the reference's Python float, compared in double
  return static_cast<float>(aug > t ? aug : t);
}

RowTimesteps build_row_timesteps(const PackedLayout& layout, float video_t, float audio_t,
                                 float keyframe_t, float reference_audio_t) {
  const int64_t length = layout.sequence_length;
  if (length <= 0 || !layout.video_indices.defined() || !layout.audio_indices.defined()) {
    throw_input("timestep plan", "empty layout");
  }
  for (const float t : {video_t, audio_t, keyframe_t, reference_audio_t}) {
    if (!std::isfinite(t)) throw_input("timestep plan", "timesteps must be finite");
  }
  const int64_t num_condition_video = layout.num_condition_video_rows;
  const int64_t num_condition_audio = 0;  // t2va / fl2va layouts carry no reference audio

  // 1. One timestep per row, assigned in the reference's order.
  std::vector<float> rows(static_cast<std::size_t>(length), video_t);
  const at::Tensor video_indices = layout.video_indices.to(at::kLong).contiguous();
  const at::Tensor audio_indices = layout.audio_indices.to(at::kLong).contiguous();
  const int64_t* video = video_indices.data_ptr<int64_t>();
  const int64_t* audio = audio_indices.data_ptr<int64_t>();
  auto assign = [&](const int64_t* index, int64_t begin, int64_t end, float value) {
    for (int64_t i = begin; i < end; ++i) {
      if (index[i] < 0 || index[i] >= length) throw_input("timestep plan", "row index outside");
      rows[static_cast<std::size_t>(index[i])] = value;
    }
  };
  if (num_condition_video > video_indices.numel()) {
    throw_input("timestep plan", "more conditioning rows than video rows");
  }
  assign(video, 0, num_condition_video, keyframe_t);
  assign(audio, num_condition_audio, audio_indices.numel(), audio_t);
  assign(audio, 0, num_condition_audio, reference_audio_t);

  // 2. torch.unique(sorted=True, return_inverse=True): distinct values ascending, then each
  //    row's position among them (exact float equality; +0 and -0 are one value).
  std::vector<float> distinct = rows;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  RowTimesteps plan;
  plan.timestep = at::empty({static_cast<int64_t>(distinct.size())}, at::kFloat);
  std::memcpy(plan.timestep.data_ptr<float>(), distinct.data(), distinct.size() * sizeof(float));
  plan.timestep_indices = at::empty({length}, at::kLong);
  int64_t* inverse = plan.timestep_indices.data_ptr<int64_t>();
  for (int64_t i = 0; i < length; ++i) {
    const auto it = std::lower_bound(distinct.begin(), distinct.end(), rows[i]);
    inverse[i] = static_cast<int64_t>(it - distinct.begin());
  }
  return plan;
}

}  // namespace h3p::sampling
