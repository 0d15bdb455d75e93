#pragma once
// The stored inputs of a run (inputs/noise.safetensors, inputs/conditioning.safetensors) and
// the sampling plan, written by generation and read back by resume and every tool that reads
// a run (ablate, compare). The conditioning file uses the conditioning-file format of
// ARCHITECTURE.md, so a run's inputs/conditioning.safetensors can seed another contract.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/io/aten_bridge.h"
#include "core/sampling/denoise_loop.h"

namespace h3p::runs {

// Noise tensors under their stored names: keyframe_noise_<i>, video_noise, audio_noise_rows.
std::vector<io::NamedTensor> noise_tensors(const sampling::InitialNoise& noise);
// Reads inputs/noise.safetensors; throws InputError naming the file and tensor.
sampling::InitialNoise read_noise(const std::filesystem::path& file, std::size_t keyframes);

// encoder_hidden_states, text_token_tags and (when any) keyframe_latents (1, 24, K, h, w).
std::vector<io::NamedTensor> conditioning_tensors(const sampling::Conditioning& conditioning);
// Reads a conditioning file whose text width is taken from the file itself.
sampling::Conditioning read_conditioning(const std::filesystem::path& file);

// Throws InputError unless sha256(file) == expected (as recorded in `manifest`).
void check_digest(const std::filesystem::path& file, const std::string& expected,
                  const std::filesystem::path& manifest);

// The manifest `params` of a plan: geometry, sequence length, grid points, calls, shifts and
// the save-inputs policy.
nlohmann::json plan_params(const sampling::SamplingPlan& plan, int sampling_steps,
                           double video_shift, double audio_shift,
                           const std::string& save_inputs);
// Rebuilds the plan from manifest params and the stored conditioning. Throws InputError
// naming `manifest` when a field is missing.
sampling::SamplingPlan plan_from_params(const nlohmann::json& params,
                                        const sampling::Conditioning& conditioning,
                                        const std::filesystem::path& manifest);

}  // namespace h3p::runs
