#pragma once
// Preflight: a contract's model and conditioning at a small canvas for a few calls, with every
// impl spec a qualification will run, decode included, on the device the real runs will use.
// It catches a broken node, driver, build or plugin in minutes rather than after hours, and
// projects each spec's full run from what it measured. It is the first row of the evidence.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/contract/contract.h"
#include "core/model/fused_call.h"
#include "core/ops/op_set.h"

namespace h3p::runs {

struct PreflightParams {
  contract::Contract contract;
  std::vector<std::string> impl_specs;  // in table order
  std::string device = "cpu";
  int width = 128, height = 128;  // the small canvas (multiples of 32)
  int calls = 3;  // transformer calls per spec (grid points - 1), >= 1; the first warms up
  std::filesystem::path work_dir;  // the small runs are written here (the caller owns it)
  model::FusedCallFactory fused_candidate;
  std::function<void(double, const std::string&)> progress;
  // One "key: value" per line.
  std::string describe() const;
};

// One impl spec's small run.
struct PreflightRow {
  std::string impl_spec;
  std::string error;               // empty when it ran; else why not (first line)
  int calls = 0;                   // computed
  double seconds_per_call = 0;     // median wall time of a call after the first (warm-up)
  double seconds_total = 0;        // the whole small run: load, calls, decode
  bool decoded = false;
  std::int64_t host_peak_bytes = 0;
  std::optional<std::int64_t> device_peak_bytes;
  double projected_seconds = 0;    // the contract's full run (see PreflightResult)
  bool ok() const { return error.empty(); }
};

struct PreflightResult {
  PreflightParams params;
  std::string contract_digest;
  std::int64_t small_sequence = 0, full_sequence = 0;  // packed rows per call
  int full_calls = 0;                                  // the contract's calls per seed
  double cost_ratio = 0;  // flops of a full call / flops of a small call (model::call_cost)
  std::vector<PreflightRow> rows;
  bool passed() const;
  nlohmann::json to_json() const;
  std::string to_markdown() const;
  // Reads back to_json()'s figures and rows (params: contract digest, canvas and calls only);
  // throws InputError naming `source` and the field.
  static PreflightResult from_json(const nlohmann::json& json, const std::string& source);
  // Appends `other`'s rows, taking its sequence figures when this result has none.
  void merge(const PreflightResult& other);
};

// Throws InputError unless the params name a spec, at least one call and a canvas of positive
// multiples of 32 (run_preflight checks this first; a caller that starts child processes too).
void check_preflight_params(const PreflightParams& params);

// Runs every spec; a spec that fails is a row with its error, not an exception. Throws
// InputError for a bad contract, canvas or device. The projection of a full run is the small
// call's median time × cost_ratio × full_calls: it assumes the device reaches the same FLOP/s
// at full size (on a GPU a small canvas underuses it, so the projection is an upper bound).
PreflightResult run_preflight(const PreflightParams& params, const ops::OpSetPtr& candidate);

}  // namespace h3p::runs
