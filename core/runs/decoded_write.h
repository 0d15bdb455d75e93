#pragma once
// Writing a run's decoded outputs (decoded.h) from the decoders' tensors.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "core/runs/decoded.h"

namespace h3p::runs {

// Writes all four files of a run's decoded outputs. video: (1, 3, F, H, W) float in [0, 1]
// (values outside are stored as given in video.safetensors and clamped in frames.rgb);
// audio: (1, 2, S) float, or undefined for none. Throws InputError naming the argument on a
// bad shape or value (fps, sample_rate <= 0) and naming the file on an I/O failure.
void write_decoded(const RunPaths& paths, const at::Tensor& video, const at::Tensor& audio,
                   int fps, int sample_rate, FramePrecision precision = FramePrecision::f16);

// Quantises (1, 3, F, H, W) frames in [0, 1] to F x H x W x 3 bytes (the frames.rgb rule).
std::vector<std::uint8_t> quantise_frames(const at::Tensor& video);

}  // namespace h3p::runs
