#pragma once
// What generation and import share about a run: the request a contract makes for one seed
// (conditioning, sampling plan, initial noise), the stored inputs and manifest fields that bind
// a run to it, and the run's final outputs (latents, decoded video and audio). One place, so
// that an imported run and a generated run of the same contract and seed are comparable.
#include <c10/core/Device.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/contract/contract.h"
#include "core/runs/manifest.h"
#include "core/runs/run_paths.h"
#include "core/sampling/denoise_loop.h"

namespace h3p::runs {

// The contract's conditioning: its conditioning file, or rows synthesised from the prompt,
// at the model's text width.
sampling::Conditioning contract_conditioning(const contract::Contract& contract,
                                             int64_t text_dim);

// The sampling plan of the contract's geometry, steps and shifts over `conditioning`.
sampling::SamplingPlan contract_plan(const contract::Contract& contract,
                                     const sampling::Conditioning& conditioning);

// The initial noise of `seed` for `plan` (keyframes, video, audio rows; one CPU generator).
sampling::InitialNoise draw_run_noise(const sampling::SamplingPlan& plan, std::uint64_t seed);

// Writes inputs/noise.safetensors and inputs/conditioning.safetensors and records their
// digests in `manifest` (noise_digest, conditioning_digest).
void write_run_inputs(const RunPaths& paths, const sampling::InitialNoise& noise,
                      const sampling::Conditioning& conditioning, std::uint64_t seed,
                      Manifest& manifest);

// RUN/contract.json: the contract in canonical JSON (its digest is the manifest's), written
// when missing.
void write_run_contract(const RunPaths& paths, const contract::Contract& contract);

// What the manifest's environment.model records: the built-in model ("preset:tiny",
// location-free so runs under different runs directories stay byte-identical), else the
// absolute transformer directory.
std::string model_record(const contract::Contract& contract,
                         const std::filesystem::path& transformer_dir);

// Writes latents.safetensors (`latents`, `audio_latents`) when missing or different; returns
// true when it wrote (a fresh file is byte-identical).
bool write_final_latents(const RunPaths& paths, const sampling::FinalLatents& latents);

// Decodes the final latents with the model's decoders (vae/, audio_vae/) into RUN/decoded/;
// again only when `latents_changed` or the decoded files are incomplete. `before_decode` (may
// be empty) hears a line saying what is decoded and, on CPU, how long it should take, before
// any work. Returns false when the model has no video decoder (the latents are then the run's
// final output).
bool decode_run_outputs(const RunPaths& paths, const std::filesystem::path& model_dir,
                        const sampling::FinalLatents& latents, const at::Device& device,
                        int fps, int audio_sample_rate, bool latents_changed,
                        const std::function<void(const std::string&)>& before_decode = {});

}  // namespace h3p::runs
