#include "core/runs/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "core/io/sha256.h"
#include "core/ops/device.h"
#include "core/ops/impl_spec.h"
#include "core/ops/provider_ops.h"
#include "core/runs/decoded.h"
#include "core/runs/manifest.h"
#include "core/runs/run_paths.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

// A run that generation finished (latents and decoded frames written) under `contract_digest`.
bool is_complete(const RunPaths& paths, const std::string& contract_digest) {
  if (!fs::exists(paths.manifest()) || !fs::exists(paths.latents()) ||
      !fs::exists(decoded_dir(paths) / "frames.json")) {
    return false;
  }
  return read_manifest(paths.manifest()).contract_digest == contract_digest;
}

// The largest per-step velocity relative L2 of each stream; none without per-step series.
void step_maxima(const compare::Comparison& c, contract::CalibrationFigure& f) {
  for (const compare::StepRow& s : c.steps) {
    f.step_video_rel_l2_max = std::max(f.step_video_rel_l2_max.value_or(0.0), s.video.rel_l2);
    f.step_audio_rel_l2_max = std::max(f.step_audio_rel_l2_max.value_or(0.0), s.audio.rel_l2);
  }
}

void check_inputs(const CalibrateParams& p, const std::vector<std::string>& variants,
                  const std::vector<std::uint64_t>& seeds) {
  const std::set<std::uint64_t> contract_seeds(p.contract.seeds.begin(), p.contract.seeds.end());
  std::set<std::uint64_t> seen_seeds;
  if (seeds.empty()) throw InputError("--calibration-seeds: give at least one seed");
  for (std::uint64_t seed : seeds) {
    if (contract_seeds.contains(seed)) {
      throw InputError("--calibration-seeds: seed " + std::to_string(seed) + " is a seed of " +
                       p.contract.source.string() + " (field 'seeds'); calibration seeds must "
                       "be disjoint from the seeds the candidate is judged on");
    }
    if (!seen_seeds.insert(seed).second) {
      throw InputError("--calibration-seeds: seed " + std::to_string(seed) + " appears twice");
    }
  }
  if (variants.empty()) throw InputError("--variant: give at least one variant");
  std::set<std::string> seen;
  for (const std::string& v : variants) {
    if (v == "provider") {
      throw InputError("--variant provider: the provider is what every variant is measured against");
    }
    ops::ImplSpec::parse(v);  // throws InputError naming the spec
    if (!seen.insert(v).second) throw InputError("--variant " + v + ": given twice");
  }
  const auto& rules = contract::calibration_rules();
  if (std::find(rules.begin(), rules.end(), p.rule) == rules.end()) {
    throw InputError("--rule " + p.rule + ": unknown (known: worst-variant-margin)");
  }
}

std::string fmt(const char* format, double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string fmt(const char* format, const std::optional<double>& v) {
  return v ? fmt(format, *v) : "-";
}

nlohmann::json json_figure(double v) {
  return std::isinf(v) ? nlohmann::json(v > 0 ? "inf" : "-inf") : nlohmann::json(v);
}

}  // namespace

std::string calibration_table(const contract::Contract& c) {
  if (!c.calibration) throw InputError(c.name + ": the contract has no calibration");
  const contract::Calibration& cal = *c.calibration;
  std::ostringstream out;
  char line[512];
  const char* row = "%-34s %8s %10s %10s %12s %12s %12s\n";
  std::snprintf(line, sizeof line, row, "variant (against provider)", "seed", "PSNR dB", "SSIM",
                "temporal", "audio L2", "max step L2");
  out << line;
  for (const contract::CalibrationFigure& f : cal.figures) {
    std::optional<double> step = f.step_video_rel_l2_max;
    if (f.step_audio_rel_l2_max) step = std::max(step.value_or(0.0), *f.step_audio_rel_l2_max);
    std::snprintf(line, sizeof line, row, f.variant.c_str(), std::to_string(f.seed).c_str(),
                  fmt("%.3f", f.psnr_db).c_str(), fmt("%.6f", f.ssim).c_str(),
                  fmt("%.3e", f.temporal_rmse).c_str(), fmt("%.3e", f.audio_rel_l2).c_str(),
                  fmt("%.3e", step).c_str());
    out << line;
  }
  const contract::WorstFigures w = contract::worst_figures(cal.figures);
  std::snprintf(line, sizeof line, row, "worst", "", fmt("%.3f", w.psnr_db).c_str(),
                fmt("%.6f", w.ssim).c_str(), fmt("%.3e", w.temporal_rmse).c_str(),
                fmt("%.3e", w.audio_rel_l2).c_str(), "");
  out << line;
  const contract::Bounds& b = c.bounds;
  std::snprintf(line, sizeof line, row, "bounds", "", (">= " + fmt("%.3f", b.psnr_db_min)).c_str(),
                (">= " + fmt("%.6f", b.ssim_min)).c_str(),
                ("<= " + fmt("%.3e", b.temporal_rmse_max)).c_str(),
                ("<= " + fmt("%.3e", b.audio_rel_l2_max)).c_str(), "");
  out << line;
  out << "rule " << cal.rule << ": " << cal.rule_text << "\n";
  return out.str();
}

nlohmann::json calibration_report(const contract::Contract& c) {
  if (!c.calibration) throw InputError(c.name + ": the contract has no calibration");
  const contract::WorstFigures w = contract::worst_figures(c.calibration->figures);
  return {{"contract", c.name},
          {"contract_digest", contract::contract_digest(c)},
          {"bounds", contract::to_json(c)["bounds"]},
          {"worst",
           {{"psnr_db", json_figure(w.psnr_db)},
            {"ssim", w.ssim},
            {"temporal_rmse", w.temporal_rmse},
            {"audio_rel_l2", w.audio_rel_l2 ? nlohmann::json(*w.audio_rel_l2) : nlohmann::json()}}},
          {"calibration", contract::to_json(*c.calibration)}};
}

std::string CalibrateParams::describe() const {
  std::ostringstream out;
  out << "contract: " << contract.name << "\nruns: " << runs_root.string()
      << "\ndevice: " << generate.device << "\nrule: " << rule << "\nvariants:";
  for (const std::string& v : variants) out << " " << v;
  out << "\nseeds:";
  for (std::uint64_t s : seeds) out << " " << s;
  out << "\nname: " << name << "\n";
  return out.str();
}

std::vector<std::string> default_variants(const std::string& device) {
  // The device's SDPA backends: ops::provider_variants without the GEMM variant.
  std::vector<std::string> out;
  for (const std::string& v : ops::provider_variants(ops::resolve_device(device))) {
    if (v.find("attention=") != std::string::npos) out.push_back(v);
  }
  return out;
}

std::vector<std::uint64_t> default_calibration_seeds(const contract::Contract& c) {
  const std::uint64_t top = *std::max_element(c.seeds.begin(), c.seeds.end());
  if (top > std::numeric_limits<std::uint64_t>::max() - 3) {
    throw InputError(c.source.string() + ": field 'seeds': no room for default calibration seeds "
                     "after " + std::to_string(top) + "; give --calibration-seeds");
  }
  return {top + 1, top + 2, top + 3};
}

contract::Contract calibration_runs_contract(const contract::Contract& c,
                                             const std::vector<std::uint64_t>& seeds) {
  contract::Contract runs = c;
  runs.name = c.name + "-calibration";
  runs.seeds = seeds;
  runs.calibration.reset();
  return runs;
}

CalibrateResult calibrate(const CalibrateParams& p, const ops::OpSetPtr& candidate) {
  // 1. What to run: variants, seeds, the contract of the calibration runs.
  const std::vector<std::string> variants =
      p.variants.empty() ? default_variants(p.generate.device) : p.variants;
  const std::vector<std::uint64_t> seeds =
      p.seeds.empty() ? default_calibration_seeds(p.contract) : p.seeds;
  check_inputs(p, variants, seeds);
  CalibrateResult result;
  result.runs_contract = calibration_runs_contract(p.contract, seeds);
  const std::string runs_digest = contract::contract_digest(result.runs_contract);
  const std::string provider = "provider";
  std::vector<std::string> specs = {provider};
  specs.insert(specs.end(), variants.begin(), variants.end());

  // 2. Every run, generated (or resumed) unless complete.
  contract::Calibration cal;
  cal.rule = p.rule;
  cal.margins = p.margins;
  cal.rule_text = contract::rule_text(p.rule, p.margins);
  cal.provider = provider;
  cal.variants = variants;
  cal.seeds = seeds;
  cal.runs_contract_digest = runs_digest;
  for (std::uint64_t seed : seeds) {
    for (const std::string& spec : specs) {
      const RunPaths paths = RunPaths::locate(p.runs_root, result.runs_contract.name, spec, seed);
      const bool reuse = is_complete(paths, runs_digest);
      if (p.on_run) p.on_run(spec, seed, reuse);
      if (reuse) {
        ++result.reused;
      } else {
        GenerateParams g = p.generate;
        g.contract = result.runs_contract;
        g.impl_spec = spec;
        g.seed = seed;
        g.runs_root = p.runs_root;
        const GenerateResult r = generate_run(g, candidate);
        if (!r.decoded) {
          throw InputError(r.run_dir.string() + ": the model has no video decoder (vae/); "
                           "calibration measures decoded frames");
        }
        ++result.generated;
      }
      const fs::path root = fs::absolute(p.runs_root).lexically_normal();
      cal.runs.push_back(
          {spec, seed,
           fs::absolute(paths.manifest()).lexically_normal().lexically_relative(root).string(),
           io::sha256_file(paths.manifest())});
    }
  }

  // 3. Each variant against the provider run of its seed.
  for (std::uint64_t seed : seeds) {
    for (const std::string& variant : variants) {
      compare::CompareParams cp = p.compare;
      cp.candidate = RunPaths::locate(p.runs_root, result.runs_contract.name, variant, seed).root();
      cp.provider = RunPaths::locate(p.runs_root, result.runs_contract.name, provider, seed).root();
      cp.contract.reset();
      cp.post_hoc = false;
      const compare::Comparison c = compare::compare_pair(cp);
      contract::CalibrationFigure f;
      f.variant = variant;
      f.seed = seed;
      f.psnr_db = c.clip.psnr_db;
      f.ssim = c.clip.ssim;
      f.temporal_rmse = c.clip.temporal_rmse;
      if (c.clip.audio) f.audio_rel_l2 = c.clip.audio->rel_l2;
      step_maxima(c, f);
      cal.figures.push_back(f);
    }
  }

  // 4. The new contract: the input's request, the rule's bounds, the record; checked by
  // reading its canonical form back as any later command will.
  contract::Contract out = p.contract;
  out.source.clear();
  out.name = p.name.empty() ? p.contract.name + "-calibrated" : p.name;
  out.bounds = contract::calibrated_bounds(cal.rule, cal.figures, cal.margins);
  out.calibration = std::move(cal);
  result.contract = contract::parse_contract(contract::to_json(out), {});
  return result;
}

}  // namespace h3p::runs
