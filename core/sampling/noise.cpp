#include "core/sampling/noise.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "core/common/error.h"

namespace h3p::sampling {

namespace {

void check_shape(const std::vector<int64_t>& shape, const char* what) {
  for (const int64_t d : shape) {
    if (d < 0) throw_input("noise", std::string(what) + " shape has a negative dimension");
  }
}

}  // namespace

InitialNoise draw_initial_noise(uint64_t seed,
                                const std::vector<std::vector<int64_t>>& keyframe_shapes,
                                std::vector<int64_t> video_shape,
                                std::vector<int64_t> audio_rows_shape) {
  for (const auto& shape : keyframe_shapes) check_shape(shape, "keyframe");
  check_shape(video_shape, "video");
  check_shape(audio_rows_shape, "audio");

  at::Generator generator = at::detail::createCPUGenerator(seed);
  const auto options = at::TensorOptions().dtype(at::kFloat).device(at::kCPU);
  InitialNoise noise;
  for (const auto& shape : keyframe_shapes) {
    noise.keyframes.push_back(at::randn(shape, generator, options));
  }
  noise.video = at::randn(video_shape, generator, options);
  noise.audio_rows = at::randn(audio_rows_shape, generator, options);
  return noise;
}

}  // namespace h3p::sampling
