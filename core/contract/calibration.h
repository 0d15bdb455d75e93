#pragma once
// The calibration record of a contract (written by `h3parity calibrate`): which provider
// variants ran on which calibration seeds, what each measured against the provider, which runs
// those figures come from, and the stated rule that turned them into the contract's bounds.
// It is part of the contract's canonical JSON and so of its digest: a run generated under a
// calibrated contract is bound to bounds that were fixed, by that rule, before it started.
// Rule "worst-variant-margin" (the only one): see rule_text().
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace h3p::contract {

struct Bounds;

// The margins of the rule "worst-variant-margin"; the cap and floors stand for 8-bit
// quantisation noise (see rule_text).
struct CalibrationMargins {
  double psnr_db = 1.0;                 // dB below the worst variant PSNR (>= 0)
  double ssim = 1e-3;                   // below the worst variant SSIM (>= 0)
  double ratio = 0.5;                   // temporal RMSE and audio L2 may exceed the worst by this (>= 0)
  double psnr_db_cap = 58.92;           // a worst PSNR above this (or infinite) counts as this, dB (> 0)
  double temporal_rmse_floor = 1.13e-3; // temporal_rmse_max is at least this (>= 0, [0,1] pixels)
  double audio_rel_l2_floor = 1e-4;     // audio_rel_l2_max is at least this (>= 0)
  bool operator==(const CalibrationMargins&) const = default;
};

// One calibration run: path of its manifest relative to the runs directory, and its SHA-256.
struct CalibrationRun {
  std::string impl_spec;
  std::uint64_t seed = 0;
  std::string manifest;         // "<contract>/<impl-dir>/seed-<n>/manifest.json"
  std::string manifest_sha256;  // lower-case hex
  bool operator==(const CalibrationRun&) const = default;
};

// One variant's run against the provider run of the same calibration seed.
struct CalibrationFigure {
  std::string variant;  // impl spec
  std::uint64_t seed = 0;
  double psnr_db = 0;   // may be +inf (frames bitwise identical); JSON "inf"
  double ssim = 0;
  double temporal_rmse = 0;
  std::optional<double> audio_rel_l2;           // none when a side has no audio
  std::optional<double> step_video_rel_l2_max;  // largest per-step velocity relative L2
  std::optional<double> step_audio_rel_l2_max;
  bool operator==(const CalibrationFigure&) const = default;
};

// The worst figure of each metric over all variants and seeds (lowest PSNR and SSIM, highest
// temporal RMSE and audio L2; audio none when no figure has audio).
struct WorstFigures {
  double psnr_db = 0, ssim = 0, temporal_rmse = 0;
  std::optional<double> audio_rel_l2;
};

struct Calibration {
  std::string rule = "worst-variant-margin";
  std::string rule_text;                      // rule_text(rule, margins)
  CalibrationMargins margins;
  std::string provider = "provider";          // the impl spec every variant is measured against
  std::vector<std::string> variants;          // impl specs, non-empty, unique
  std::vector<std::uint64_t> seeds;           // non-empty, unique, disjoint from the contract's
  std::string runs_contract_digest;           // digest of the contract the runs were made under
  std::vector<CalibrationRun> runs;           // the provider's and every variant's, per seed
  std::vector<CalibrationFigure> figures;     // one per variant and seed
  bool operator==(const Calibration&) const = default;
};

// The rules known; calibrate and the parser accept only these.
const std::vector<std::string>& calibration_rules();

// The rule stated in words with its margins (what a contract carries as rule_text).
std::string rule_text(const std::string& rule, const CalibrationMargins& margins);

// Worst figures; `figures` must not be empty.
WorstFigures worst_figures(const std::vector<CalibrationFigure>& figures);

// The bounds the rule gives for these figures and margins.
Bounds calibrated_bounds(const std::string& rule, const std::vector<CalibrationFigure>& figures,
                         const CalibrationMargins& margins);

// Parses and validates `value` (the contract's "calibration" field) against the contract's
// seeds and bounds: the seeds are disjoint, every variant has one figure per seed, the runs
// are listed, rule_text is the rule's, and `bounds` are what the rule gives. Throws InputError
// "<file>: field 'calibration.<name>': <what>".
Calibration parse_calibration(const nlohmann::json& value, const std::string& file,
                              const std::vector<std::uint64_t>& contract_seeds,
                              const Bounds& bounds);

// The canonical JSON form (infinite PSNR as "inf").
nlohmann::json to_json(const Calibration& calibration);

}  // namespace h3p::contract
