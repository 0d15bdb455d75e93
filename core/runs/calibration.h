#pragma once
// `calibrate`: bounds from the provider's own spread, fixed before any candidate runs. The
// provider and each variant (any impl spec; by default the device's SDPA backends forced one at
// a time) generate the contract's request on calibration seeds disjoint from its seeds, under
// the contract "<name>-calibration" in the usual layout RUNS/<contract>/<impl>/seed-<n>/ (so
// it resumes, and complete runs are reused); each variant is compared with the provider run of
// its seed by the compare machinery; a stated rule (contract/calibration.h) turns the worst
// figures into bounds. The result is a new contract carrying those bounds and the calibration
// record, both covered by its digest; the input contract is never modified.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/contract/contract.h"
#include "core/metrics/compare/run_compare.h"
#include "core/ops/op_set.h"
#include "core/runs/generation.h"

namespace h3p::runs {

struct CalibrateParams {
  contract::Contract contract;                // the input contract (read only)
  std::filesystem::path runs_root;
  std::vector<std::string> variants;          // impl specs; empty: default_variants(device)
  std::vector<std::uint64_t> seeds;           // empty: default_calibration_seeds(contract)
  std::string rule = "worst-variant-margin";  // one of contract::calibration_rules()
  contract::CalibrationMargins margins;
  std::string name;                           // the new contract's name; empty: "<name>-calibrated"
  // Generation settings of every calibration run (device, fused candidate, stop, on_step, gate);
  // contract, impl_spec, seed and runs_root are set per run.
  GenerateParams generate;
  // Comparison settings (clip metrics, per-step series); the sides are set per pair.
  compare::CompareParams compare;
  // Called before each run: its spec and seed, and whether a complete run is reused.
  std::function<void(const std::string& spec, std::uint64_t seed, bool reused)> on_run;
  // One "key: value" per line.
  std::string describe() const;
};

struct CalibrateResult {
  contract::Contract contract;       // the calibrated contract (no source)
  contract::Contract runs_contract;  // the contract the calibration runs were generated under
  int generated = 0;                 // runs generated or completed here
  int reused = 0;                    // complete runs found and reused
};

// The provider variants calibrate measures by default: on "cuda[:N]" the four SDPA backends
// (flash, efficient, cudnn, math) forced one at a time; on "cpu" the math backend.
std::vector<std::string> default_variants(const std::string& device);

// Three seeds after the contract's largest: max+1, max+2, max+3 (disjoint by construction).
// Throws InputError when they would overflow.
std::vector<std::uint64_t> default_calibration_seeds(const contract::Contract& contract);

// The contract the calibration runs are generated under: `contract` with name
// "<name>-calibration", `seeds` as its seeds and no calibration record.
contract::Contract calibration_runs_contract(const contract::Contract& contract,
                                             const std::vector<std::uint64_t>& seeds);

// Generates what is missing, measures, and builds the calibrated contract. Throws InputError for
// a calibration seed that is a contract seed (naming it), a repeated seed or variant, a variant
// that is the provider itself, an unknown rule or spec, or a run that cannot be generated or
// decoded; Preempted when stopped (runs made so far are kept and resume).
CalibrateResult calibrate(const CalibrateParams& params, const ops::OpSetPtr& candidate);

// The terminal table of a calibrated contract: one row per variant and seed (PSNR, SSIM,
// temporal RMSE, audio L2, largest per-step velocity L2), the worst row, the bounds, the rule.
std::string calibration_table(const contract::Contract& calibrated);

// The same as JSON: {"contract", "contract_digest", "bounds", "worst", "calibration"} (infinite
// PSNR as "inf").
nlohmann::json calibration_report(const contract::Contract& calibrated);

}  // namespace h3p::runs
