#pragma once
// The numerical gate: qualifies a candidate impl spec on one model before generation spends
// time on it. On one set of call inputs (a call file, or a saved step of a provider run) it
// measures, for every transformer block in isolation and for the full call:
//   * the candidate against the provider (relative L2), held to a tolerance class of the
//     block's stream dtype (bf16, fp16, fp32);
//   * the candidate against a higher-precision reference — the same weights upcast to fp32,
//     run by the provider in fp32 — held to m x the noise floor, where the noise floor is the
//     largest error against that reference among the noise variants: the provider itself in the
//     model's dtype, plus any provider variants asked for (e.g. provider:attention=math). The
//     floor is never taken below kGateFloorMin, so a zero floor cannot demand a zero error.
// Block figures are over the block's update (output minus input, in fp64): the residual stream
// carries the input through unchanged and would otherwise hide the block's error. Every block
// sees the same packed input — the provider's stream entering that block — and the provider's
// call context (RoPE tables, timestep embedding, AdaLN rows); the reference uses its own fp32
// context and the same input upcast. Full-call figures are over `sample` and `audio_sample`.
//
// gate.json (written atomically; by default next to the model: <model dir>/gate.json) records
// the model identity digests it is bound to, the specs, the definitions, every figure and
// pass/fail. Generation of a contract with require_gate checks it (check_generation_gate).
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/contract/contract.h"
#include "core/model/fused_call.h"
#include "core/ops/impl_spec.h"
#include "core/ops/op_set.h"
#include "core/runs/identity.h"

namespace h3p::runs {

// The gate.json format this build writes and reads.
inline constexpr int kGateFormatVersion = 1;
// Default m: the candidate may be at most this many times as far from the fp32 reference as
// the noisiest noise variant is.
inline constexpr double kDefaultGateMultiplier = 2.0;
// Lower bound of the noise floor (fp32 unit roundoff, 2^-24).
inline constexpr double kGateFloorMin = 5.9604644775390625e-08;

// Default tolerance classes: the largest relative L2 of candidate vs provider allowed for a
// stream of that dtype ("bf16" 2e-2, "fp16" 4e-3, "fp32" 1e-4).
std::map<std::string, double> default_gate_tolerances();

struct GateParams {
  std::filesystem::path model;         // model directory or its transformer/ directory
  std::filesystem::path inputs;        // a call file (diffusers forward argument names) ...
  std::filesystem::path run;           // ... or a provider run directory (exactly one of both)
  int step = 0;                        // the run's saved step whose inputs are used
  std::string candidate_spec = "candidate";
  std::string provider_spec = "provider";
  std::vector<std::string> variants;   // extra noise-floor variants (provider specs)
  double multiplier = kDefaultGateMultiplier;
  std::map<std::string, double> tolerances = default_gate_tolerances();
  std::string device = "cpu";
  // The candidate on CUDA runs as these fused blocks (core/runs/call_runner.h); gate.json then
  // records what ran fused under "fused_call".
  model::FusedCallFactory fused_candidate;
  std::filesystem::path out;           // gate.json; empty: default_gate_path(model)
  std::function<void(double, const std::string&)> progress;  // fraction, what
  // One "key: value" per line.
  std::string describe() const;
};

// One measured unit ("blocks.3" or "call.sample").
struct GateFigure {
  std::string name;
  std::string dtype;               // "bf16", "fp16", "fp32"
  double candidate_vs_provider = 0;   // relative L2
  double candidate_vs_reference = 0;  // relative L2 against the fp32 reference
  double noise_floor = 0;             // max over noise variants of their error vs the reference
  std::string floor_variant;          // the variant that set the floor
  std::map<std::string, double> variant_vs_reference;
  double tolerance = 0;               // the dtype's tolerance class
  double limit = 0;                   // multiplier * max(noise_floor, kGateFloorMin)
  bool finite = true;
  bool passed = false;
};

struct GateResult {
  GateParams params;
  ModelIdentity identity;
  std::string inputs_description;  // the call file or "<run> step K", with its digest
  std::string inputs_digest;       // input_digest() of the call inputs
  std::string fused_call;          // what ran fused for the candidate; empty: op by op
  nlohmann::json plugin;           // the candidate spec's plugin identity; null without one
  std::vector<GateFigure> blocks;
  std::vector<GateFigure> call;    // call.sample, call.audio_sample
  bool passed = false;
  std::filesystem::path file;      // where gate.json was written
  nlohmann::json to_json() const;
  std::string to_table() const;
};

// <model dir>/gate.json: next to transformer/ (also when `model` is transformer/ itself).
std::filesystem::path default_gate_path(const std::filesystem::path& model);

// Runs the gate and writes gate.json (also when it fails). Throws InputError for bad input
// (missing model, inputs, unknown spec, a candidate spec without a candidate OpSet).
GateResult run_gate(const GateParams& params, const ops::OpSetPtr& candidate);

// How generation of a gated contract may proceed.
struct GateOverride {
  std::filesystem::path file;  // --gate FILE; empty: default_gate_path(model_dir)
  bool skip = false;           // --skip-gate: start anyway, recorded in the manifest
};

// For generation: returns null when `contract` does not require the gate. Otherwise requires a
// gate file that parses, is bound to `identity` (weights, config and sources digests), passed,
// and — when `spec` runs any candidate group — qualified exactly this spec on the same kind of
// device as `device` (cpu or cuda; the index may differ); returns what the
// manifest's environment records under "gate" ({"digest", "file", "candidate", "passed"} or
// {"skipped": true}). Throws InputError naming the gate file and the reason otherwise.
nlohmann::json check_generation_gate(const contract::Contract& contract,
                                     const std::filesystem::path& model_dir,
                                     const ModelIdentity& identity, const ops::ImplSpec& spec,
                                     const std::string& device, const GateOverride& override_);

}  // namespace h3p::runs
