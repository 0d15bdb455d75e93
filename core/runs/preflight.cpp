#include "core/runs/preflight.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "core/common/error.h"
#include "core/model/call_cost.h"
#include "core/model/config.h"
#include "core/model/weights.h"
#include "core/ops/device.h"
#include "core/runs/generation.h"
#include "core/runs/run_inputs.h"
#include "core/runs/run_paths.h"
#include "core/sampling/denoise_loop.h"
#include "core/sampling/geometry.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

// The contract at the small canvas: same model, conditioning, frames and shifts; `calls` calls.
contract::Contract small_contract(const PreflightParams& p) {
  contract::Contract c = p.contract;
  c.width = p.width;
  c.height = p.height;
  c.sampling_steps = p.calls + 1;
  c.seeds = {p.contract.seeds.front()};
  c.name = p.contract.name + "-preflight";
  return c;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string gib(std::int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

std::string duration(double seconds) {
  char buf[48];
  if (seconds >= 3600) {
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  } else if (seconds >= 60) {
    std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  }
  return buf;
}

// Packed rows of one call for `c`'s geometry and the small run's stored conditioning.
std::int64_t sequence_for(const contract::Contract& c, const sampling::Conditioning& conditioning) {
  const sampling::Geometry geometry =
      sampling::resolve_geometry(c.frames, c.height, c.width, c.fps);
  return sampling::make_plan(geometry, conditioning, 2, c.video_shift, c.audio_shift)
      .layout.sequence_length;
}

}  // namespace

std::string PreflightParams::describe() const {
  std::ostringstream out;
  out << "contract: " << contract.name << "\ndevice: " << device << "\ncanvas: " << width << "x"
      << height << "\ncalls: " << calls << "\n";
  for (const std::string& s : impl_specs) out << "impl: " << s << "\n";
  return out.str();
}

bool PreflightResult::passed() const {
  return !rows.empty() && std::all_of(rows.begin(), rows.end(), [](const PreflightRow& r) { return r.ok(); });
}

void check_preflight_params(const PreflightParams& p) {
  if (p.impl_specs.empty()) throw InputError("preflight: name at least one --impl spec");
  if (p.calls < 1) throw InputError("preflight --calls: must be at least 1");
  if (p.width <= 0 || p.height <= 0 || p.width % sampling::kCanvasMultiple != 0 ||
      p.height % sampling::kCanvasMultiple != 0) {
    throw InputError("preflight --canvas: width and height must be positive multiples of 32");
  }
}

PreflightResult run_preflight(const PreflightParams& p, const ops::OpSetPtr& candidate) {
  check_preflight_params(p);
  const at::Device device = ops::resolve_device(p.device);
  PreflightResult result;
  result.params = p;
  result.contract_digest = contract::contract_digest(p.contract);
  const contract::Contract small = small_contract(p);

  for (std::size_t i = 0; i < p.impl_specs.size(); ++i) {
    const std::string& spec = p.impl_specs[i];
    if (p.progress) p.progress(static_cast<double>(i) / p.impl_specs.size(), spec);
    PreflightRow row;
    row.impl_spec = spec;
    GenerateParams g;
    g.contract = small;
    g.impl_spec = spec;
    g.seed = small.seeds.front();
    g.runs_root = p.work_dir;
    g.device = p.device;
    g.skip_gate = true;  // the gate qualifies full runs; preflight only exercises the path
    g.fused_candidate = p.fused_candidate;
    std::vector<double> call_seconds;
    g.on_step = [&](const StepEvent& e) {
      if (!e.replayed) call_seconds.push_back(e.seconds);
    };
    ops::reset_peak_memory(device);
    const auto start = std::chrono::steady_clock::now();
    try {
      const GenerateResult r = generate_run(g, candidate);
      row.decoded = r.decoded;
    } catch (const CheckFailed&) {
      throw;
    } catch (const std::exception& e) {
      row.error = first_line(e.what());
    }
    row.seconds_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const ops::PeakMemory peak = ops::peak_memory(device);
    row.host_peak_bytes = peak.host_bytes;
    row.device_peak_bytes = peak.device_bytes;
    row.calls = static_cast<int>(call_seconds.size());
    // The first call also pays for kernel selection and library start-up.
    if (call_seconds.size() > 1) call_seconds.erase(call_seconds.begin());
    row.seconds_per_call = median(call_seconds);
    result.rows.push_back(row);
  }

  // The projection: the small run's stored conditioning gives both sequences.
  for (const PreflightRow& row : result.rows) {
    if (!row.ok()) continue;
    const RunPaths paths = RunPaths::locate(p.work_dir, small.name, row.impl_spec, small.seeds.front());
    const sampling::Conditioning conditioning = read_conditioning(paths.conditioning());
    const fs::path model_dir = materialise_model(small, p.work_dir);
    const model::TransformerConfig config = model::load_transformer_config(
        model::resolve_transformer_dir(model_dir) / "config.json");
    const std::int64_t text_rows = conditioning.encoder_hidden_states.size(1);
    result.small_sequence = sequence_for(small, conditioning);
    result.full_sequence = sequence_for(p.contract, conditioning);
    result.full_calls = p.contract.sampling_steps - 1;
    result.cost_ratio = model::call_cost(config, result.full_sequence, text_rows).total() /
                        model::call_cost(config, result.small_sequence, text_rows).total();
    break;
  }
  for (PreflightRow& row : result.rows) {
    if (row.ok()) row.projected_seconds = row.seconds_per_call * result.cost_ratio * result.full_calls;
  }
  if (p.progress) p.progress(1.0, "done");
  return result;
}

nlohmann::json PreflightResult::to_json() const {
  nlohmann::json rows_json = nlohmann::json::array();
  for (const PreflightRow& r : rows) {
    nlohmann::json row = {{"impl_spec", r.impl_spec}, {"ok", r.ok()}};
    if (r.ok()) {
      row.update({{"calls", r.calls},
                  {"seconds_per_call", r.seconds_per_call},
                  {"seconds_total", r.seconds_total},
                  {"decoded", r.decoded},
                  {"host_peak_bytes", r.host_peak_bytes},
                  {"projected_seconds", r.projected_seconds}});
      if (r.device_peak_bytes) row["device_peak_bytes"] = *r.device_peak_bytes;
    } else {
      row["error"] = r.error;
    }
    rows_json.push_back(row);
  }
  return {{"contract", params.contract.name},
          {"contract_digest", contract_digest},
          {"device", params.device},
          {"canvas", {{"width", params.width}, {"height", params.height}}},
          {"frames", params.contract.frames},
          {"calls", params.calls},
          {"small_sequence", small_sequence},
          {"full_sequence", full_sequence},
          {"full_calls", full_calls},
          {"cost_ratio", cost_ratio},
          {"projection",
           "median small call after the first x cost_ratio (call flops, full / small) x full_calls"},
          {"passed", passed()},
          {"rows", rows_json}};
}

PreflightResult PreflightResult::from_json(const nlohmann::json& j, const std::string& source) {
  auto field = [&](const nlohmann::json& object, const char* key) -> const nlohmann::json& {
    if (!object.is_object() || !object.contains(key)) {
      throw InputError(source + ": field '" + key + "' is missing");
    }
    return object.at(key);
  };
  PreflightResult r;
  try {
    r.contract_digest = field(j, "contract_digest").get<std::string>();
    r.params.device = field(j, "device").get<std::string>();
    r.params.width = field(field(j, "canvas"), "width").get<int>();
    r.params.height = field(field(j, "canvas"), "height").get<int>();
    r.params.calls = field(j, "calls").get<int>();
    r.small_sequence = field(j, "small_sequence").get<std::int64_t>();
    r.full_sequence = field(j, "full_sequence").get<std::int64_t>();
    r.full_calls = field(j, "full_calls").get<int>();
    r.cost_ratio = field(j, "cost_ratio").get<double>();
    for (const nlohmann::json& row_json : field(j, "rows")) {
      PreflightRow row;
      row.impl_spec = field(row_json, "impl_spec").get<std::string>();
      if (!field(row_json, "ok").get<bool>()) {
        row.error = field(row_json, "error").get<std::string>();
      } else {
        row.calls = field(row_json, "calls").get<int>();
        row.seconds_per_call = field(row_json, "seconds_per_call").get<double>();
        row.seconds_total = field(row_json, "seconds_total").get<double>();
        row.decoded = field(row_json, "decoded").get<bool>();
        row.host_peak_bytes = field(row_json, "host_peak_bytes").get<std::int64_t>();
        row.projected_seconds = field(row_json, "projected_seconds").get<double>();
        if (row_json.contains("device_peak_bytes")) {
          row.device_peak_bytes = row_json.at("device_peak_bytes").get<std::int64_t>();
        }
      }
      r.rows.push_back(row);
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source + ": " + e.what());
  }
  return r;
}

void PreflightResult::merge(const PreflightResult& other) {
  if (full_sequence == 0) {
    small_sequence = other.small_sequence;
    full_sequence = other.full_sequence;
    full_calls = other.full_calls;
    cost_ratio = other.cost_ratio;
  }
  rows.insert(rows.end(), other.rows.begin(), other.rows.end());
}

std::string PreflightResult::to_markdown() const {
  std::ostringstream out;
  out << "## Preflight\n\nContract `" << params.contract.name << "` (digest `"
      << contract_digest.substr(0, 16) << "`) at " << params.width << "x" << params.height << ", "
      << params.contract.frames << " frames, " << params.calls << " calls per spec, on "
      << params.device << ". Full run: " << full_calls << " calls of " << full_sequence
      << " rows (a small call has " << small_sequence << "; the projection scales the small "
      << "calls' median time after the first by the flops ratio " << cost_ratio
      << ").\n\n"
      << "| impl spec | status | ms per call | small run | host peak | GPU peak | projected full run |\n"
      << "|---|---|---|---|---|---|---|\n";
  for (const PreflightRow& r : rows) {
    if (!r.ok()) {
      out << "| `" << r.impl_spec << "` | **failed**: " << r.error << " | | | | | |\n";
      continue;
    }
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", r.seconds_per_call * 1e3);
    out << "| `" << r.impl_spec << "` | ok" << (r.decoded ? ", decoded" : "") << " | " << ms
        << " | " << duration(r.seconds_total) << " | " << gib(r.host_peak_bytes) << " | "
        << (r.device_peak_bytes ? gib(*r.device_peak_bytes) : "-") << " | "
        << duration(r.projected_seconds) << " |\n";
  }
  out << "\n" << (passed() ? "Every spec ran." : "A spec failed: fix it before the full run.") << "\n";
  return out.str();
}

}  // namespace h3p::runs
