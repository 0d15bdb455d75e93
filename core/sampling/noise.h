#pragma once
// The initial noise of a request, drawn as the reference draws it: one CPU generator seeded
// with the request seed (torch.Generator('cpu').manual_seed(seed)), fp32 standard normal, in
// the order keyframe noise (one draw per keyframe), video noise, audio noise (already in row
// layout). CPU-only so that it does not depend on the accelerator; draw once and store it.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace h3p::sampling {

// The noise of one request, every tensor fp32 on the CPU.
struct InitialNoise {
  std::vector<at::Tensor> keyframes;  // one per keyframe, each of its keyframe_shapes entry
  at::Tensor video;                   // video_shape, e.g. (1, 24, T, H/16, W/16)
  at::Tensor audio_rows;              // audio_rows_shape, e.g. (2N, 32)
};

// Draws the noise from a generator seeded with `seed` (bit-identical to torch.randn with
// the same shapes, in the same order). Throws InputError for a negative dimension.
InitialNoise draw_initial_noise(uint64_t seed,
                                const std::vector<std::vector<int64_t>>& keyframe_shapes,
                                std::vector<int64_t> video_shape,
                                std::vector<int64_t> audio_rows_shape);

}  // namespace h3p::sampling
