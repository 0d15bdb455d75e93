#include "core/contract/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "core/common/error.h"
#include "core/contract/contract.h"
#include "core/contract/field_reader.h"

namespace h3p::contract {
namespace {

using nlohmann::json;

constexpr const char* kWorstVariantMargin = "worst-variant-margin";

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A figure as JSON: finite as is, +inf as "inf", absent as null.
json figure_json(double v) { return std::isinf(v) && v > 0 ? json("inf") : json(v); }
json figure_json(const std::optional<double>& v) { return v ? figure_json(*v) : json(); }

// A number >= 0, or "inf" when `allow_inf`.
double read_figure(const FieldReader& r, const std::string& key, bool allow_inf) {
  const json& v = r.require(key);
  if (allow_inf && v.is_string() && v.get<std::string>() == "inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (!v.is_number()) r.fail(key, allow_inf ? "must be a number or \"inf\"" : "must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) r.fail(key, "must be finite");
  return d;
}

std::optional<double> read_optional(const FieldReader& r, const std::string& key) {
  if (!r.has(key) || r.require(key).is_null()) return std::nullopt;
  const double d = read_figure(r, key, false);
  if (d < 0) r.fail(key, "must be >= 0");
  return d;
}

std::uint64_t read_seed(const FieldReader& r, const std::string& key) {
  const json& v = r.require(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
    r.fail(key, "must be a non-negative integer");
  }
  return v.get<std::uint64_t>();
}

bool is_hex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

const json& require_array(const FieldReader& r, const std::string& key) {
  const json& v = r.require(key);
  if (!v.is_array()) r.fail(key, "must be an array");
  if (v.empty()) r.fail(key, "must not be empty");
  return v;
}

CalibrationMargins parse_margins(const json& value, const std::string& file) {
  if (!value.is_object()) throw InputError(file + ": field 'calibration.margins': must be an object");
  FieldReader r(value, file, "calibration.margins.");
  r.refuse_unknown({"psnr_db", "ssim", "ratio", "psnr_db_cap", "temporal_rmse_floor",
                    "audio_rel_l2_floor"});
  CalibrationMargins m;
  const std::initializer_list<std::pair<const char*, double*>> fields = {
      {"psnr_db", &m.psnr_db},         {"ssim", &m.ssim},
      {"ratio", &m.ratio},             {"psnr_db_cap", &m.psnr_db_cap},
      {"temporal_rmse_floor", &m.temporal_rmse_floor},
      {"audio_rel_l2_floor", &m.audio_rel_l2_floor}};
  for (const auto& [key, target] : fields) {
    *target = r.number(key);
    if (*target < 0) r.fail(key, "must be >= 0");
  }
  if (m.psnr_db_cap <= 0) r.fail("psnr_db_cap", "must be > 0");
  return m;
}

}  // namespace

const std::vector<std::string>& calibration_rules() {
  static const std::vector<std::string> rules = {kWorstVariantMargin};
  return rules;
}

std::string rule_text(const std::string& rule, const CalibrationMargins& m) {
  if (rule != kWorstVariantMargin) throw InputError("calibration rule '" + rule + "': unknown");
  return "Every variant run is compared with the provider run of the same calibration seed; "
         "over all variants and seeds the worst figure of each metric is taken (lowest PSNR "
         "and SSIM, highest temporal RMSE and audio relative L2). Then psnr_db_min = "
         "min(worst PSNR, " + num(m.psnr_db_cap) + " dB) - " + num(m.psnr_db) +
         " dB; ssim_min = max(worst SSIM - " + num(m.ssim) +
         ", -1); temporal_rmse_max = max(worst temporal RMSE x " + num(1 + m.ratio) + ", " +
         num(m.temporal_rmse_floor) + "); audio_rel_l2_max = max(worst audio L2 x " +
         num(1 + m.ratio) + ", " + num(m.audio_rel_l2_floor) +
         ") (the floor alone when no run has audio). The PSNR cap and the temporal floor are "
         "8-bit quantisation noise (20 log10(255 sqrt 12) = 58.92 dB, an RMS of 1/(255 sqrt "
         "12) = 1.13e-3): variants that agree bitwise (infinite PSNR, zero spread) measure no "
         "tolerance at all, so the bounds never ask for closer agreement than one 8-bit level; "
         "such a calibration says nothing about the provider's spread and should be repeated "
         "with variants that differ (another attention backend, gemm=cublaslt).";
}

WorstFigures worst_figures(const std::vector<CalibrationFigure>& figures) {
  if (figures.empty()) throw InputError("calibration: no figures to take the worst of");
  WorstFigures w;
  w.psnr_db = std::numeric_limits<double>::infinity();
  w.ssim = 1.0;
  w.temporal_rmse = 0.0;
  for (const CalibrationFigure& f : figures) {
    w.psnr_db = std::min(w.psnr_db, f.psnr_db);
    w.ssim = std::min(w.ssim, f.ssim);
    w.temporal_rmse = std::max(w.temporal_rmse, f.temporal_rmse);
    if (f.audio_rel_l2) w.audio_rel_l2 = std::max(w.audio_rel_l2.value_or(0.0), *f.audio_rel_l2);
  }
  return w;
}

Bounds calibrated_bounds(const std::string& rule, const std::vector<CalibrationFigure>& figures,
                         const CalibrationMargins& m) {
  if (rule != kWorstVariantMargin) throw InputError("calibration rule '" + rule + "': unknown");
  const WorstFigures w = worst_figures(figures);
  Bounds b;
  b.psnr_db_min = std::min(w.psnr_db, m.psnr_db_cap) - m.psnr_db;
  b.ssim_min = std::max(w.ssim - m.ssim, -1.0);
  b.temporal_rmse_max = std::max(w.temporal_rmse * (1.0 + m.ratio), m.temporal_rmse_floor);
  b.audio_rel_l2_max = w.audio_rel_l2
                           ? std::max(*w.audio_rel_l2 * (1.0 + m.ratio), m.audio_rel_l2_floor)
                           : m.audio_rel_l2_floor;
  return b;
}

Calibration parse_calibration(const json& value, const std::string& file,
                              const std::vector<std::uint64_t>& contract_seeds,
                              const Bounds& bounds) {
  if (!value.is_object()) throw InputError(file + ": field 'calibration': must be an object");
  FieldReader r(value, file, "calibration.");
  r.refuse_unknown({"rule", "rule_text", "margins", "provider", "variants", "seeds",
                    "runs_contract_digest", "runs", "figures"});
  Calibration c;
  c.rule = r.non_empty_string("rule");
  const auto& rules = calibration_rules();
  if (std::find(rules.begin(), rules.end(), c.rule) == rules.end()) {
    r.fail("rule", "unknown rule '" + c.rule + "' (known: " + kWorstVariantMargin + ")");
  }
  c.margins = parse_margins(r.require("margins"), file);
  c.rule_text = r.non_empty_string("rule_text");
  if (c.rule_text != rule_text(c.rule, c.margins)) {
    r.fail("rule_text", "is not the statement of rule '" + c.rule + "' with these margins");
  }
  c.provider = r.non_empty_string("provider");

  // Variants and seeds: unique; the seeds disjoint from the contract's.
  const json& variants = require_array(r, "variants");
  std::set<std::string> variant_set;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (!variants[i].is_string() || variants[i].get<std::string>().empty()) {
      r.fail("variants", "entry " + std::to_string(i) + " must be a non-empty string");
    }
    const std::string v = variants[i].get<std::string>();
    if (v == c.provider) r.fail("variants", "'" + v + "' is the provider itself");
    if (!variant_set.insert(v).second) r.fail("variants", "'" + v + "' appears twice");
    c.variants.push_back(v);
  }
  const json& seeds = require_array(r, "seeds");
  std::set<std::uint64_t> seed_set;
  const std::set<std::uint64_t> contract_seed_set(contract_seeds.begin(), contract_seeds.end());
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const json& s = seeds[i];
    if (!s.is_number_unsigned() && !(s.is_number_integer() && s.get<std::int64_t>() >= 0)) {
      r.fail("seeds", "entry " + std::to_string(i) + " must be a non-negative integer");
    }
    const std::uint64_t seed = s.get<std::uint64_t>();
    if (!seed_set.insert(seed).second) r.fail("seeds", "seed " + std::to_string(seed) + " appears twice");
    if (contract_seed_set.contains(seed)) {
      r.fail("seeds", "seed " + std::to_string(seed) + " is also a seed of the contract");
    }
    c.seeds.push_back(seed);
  }
  c.runs_contract_digest = r.string("runs_contract_digest");
  if (!is_hex64(c.runs_contract_digest)) r.fail("runs_contract_digest", "must be 64 lower-case hex digits");

  // Runs: the provider's and every variant's on every seed, once.
  std::set<std::pair<std::string, std::uint64_t>> expected;
  for (std::uint64_t seed : c.seeds) {
    expected.insert({c.provider, seed});
    for (const std::string& v : c.variants) expected.insert({v, seed});
  }
  const json& runs = require_array(r, "runs");
  std::set<std::pair<std::string, std::uint64_t>> seen_runs;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string at = "runs[" + std::to_string(i) + "]";
    if (!runs[i].is_object()) r.fail(at, "must be an object");
    FieldReader rr(runs[i], file, "calibration." + at + ".");
    rr.refuse_unknown({"impl_spec", "seed", "manifest", "manifest_sha256"});
    CalibrationRun run;
    run.impl_spec = rr.non_empty_string("impl_spec");
    run.seed = read_seed(rr, "seed");
    run.manifest = rr.non_empty_string("manifest");
    if (run.manifest.front() == '/' || run.manifest.find("..") != std::string::npos) {
      rr.fail("manifest", "must be a path relative to the runs directory");
    }
    run.manifest_sha256 = rr.string("manifest_sha256");
    if (!is_hex64(run.manifest_sha256)) rr.fail("manifest_sha256", "must be 64 lower-case hex digits");
    if (!expected.contains({run.impl_spec, run.seed})) {
      rr.fail("impl_spec", "'" + run.impl_spec + "' on seed " + std::to_string(run.seed) +
                               " is not the provider or a variant on a calibration seed");
    }
    if (!seen_runs.insert({run.impl_spec, run.seed}).second) rr.fail("impl_spec", "listed twice");
    c.runs.push_back(run);
  }
  if (seen_runs.size() != expected.size()) {
    for (const auto& [spec, seed] : expected) {
      if (!seen_runs.contains({spec, seed})) {
        r.fail("runs", "no run of '" + spec + "' on seed " + std::to_string(seed));
      }
    }
  }

  // Figures: one per variant and seed.
  const json& figures = require_array(r, "figures");
  std::set<std::pair<std::string, std::uint64_t>> seen_figures;
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const std::string at = "figures[" + std::to_string(i) + "]";
    if (!figures[i].is_object()) r.fail(at, "must be an object");
    FieldReader fr(figures[i], file, "calibration." + at + ".");
    fr.refuse_unknown({"variant", "seed", "psnr_db", "ssim", "temporal_rmse", "audio_rel_l2",
                       "step_video_rel_l2_max", "step_audio_rel_l2_max"});
    CalibrationFigure f;
    f.variant = fr.non_empty_string("variant");
    f.seed = read_seed(fr, "seed");
    if (!variant_set.contains(f.variant)) fr.fail("variant", "'" + f.variant + "' is not a variant");
    if (!seed_set.contains(f.seed)) {
      fr.fail("seed", std::to_string(f.seed) + " is not a calibration seed");
    }
    if (!seen_figures.insert({f.variant, f.seed}).second) fr.fail("variant", "listed twice for this seed");
    f.psnr_db = read_figure(fr, "psnr_db", true);
    f.ssim = read_figure(fr, "ssim", false);
    if (f.ssim < -1 || f.ssim > 1) fr.fail("ssim", "must be in [-1, 1]");
    f.temporal_rmse = read_figure(fr, "temporal_rmse", false);
    if (f.temporal_rmse < 0) fr.fail("temporal_rmse", "must be >= 0");
    f.audio_rel_l2 = read_optional(fr, "audio_rel_l2");
    f.step_video_rel_l2_max = read_optional(fr, "step_video_rel_l2_max");
    f.step_audio_rel_l2_max = read_optional(fr, "step_audio_rel_l2_max");
    c.figures.push_back(f);
  }
  if (seen_figures.size() != c.variants.size() * c.seeds.size()) {
    r.fail("figures", "must hold one figure per variant and calibration seed (" +
                          std::to_string(c.variants.size() * c.seeds.size()) + "), has " +
                          std::to_string(seen_figures.size()));
  }

  // The bounds must be what the rule gives.
  const Bounds want = calibrated_bounds(c.rule, c.figures, c.margins);
  if (!(want == bounds)) {
    throw InputError(file + ": field 'bounds': " + bounds.describe() +
                     " do not follow calibration rule '" + c.rule + "' from calibration.figures (" +
                     want.describe() + ")");
  }
  return c;
}

json to_json(const Calibration& c) {
  json runs = json::array();
  for (const CalibrationRun& r : c.runs) {
    runs.push_back({{"impl_spec", r.impl_spec},
                    {"seed", r.seed},
                    {"manifest", r.manifest},
                    {"manifest_sha256", r.manifest_sha256}});
  }
  json figures = json::array();
  for (const CalibrationFigure& f : c.figures) {
    figures.push_back({{"variant", f.variant},
                       {"seed", f.seed},
                       {"psnr_db", figure_json(f.psnr_db)},
                       {"ssim", f.ssim},
                       {"temporal_rmse", f.temporal_rmse},
                       {"audio_rel_l2", figure_json(f.audio_rel_l2)},
                       {"step_video_rel_l2_max", figure_json(f.step_video_rel_l2_max)},
                       {"step_audio_rel_l2_max", figure_json(f.step_audio_rel_l2_max)}});
  }
  const CalibrationMargins& m = c.margins;
  return {{"rule", c.rule},
          {"rule_text", c.rule_text},
          {"margins",
           {{"psnr_db", m.psnr_db},
            {"ssim", m.ssim},
            {"ratio", m.ratio},
            {"psnr_db_cap", m.psnr_db_cap},
            {"temporal_rmse_floor", m.temporal_rmse_floor},
            {"audio_rel_l2_floor", m.audio_rel_l2_floor}}},
          {"provider", c.provider},
          {"variants", c.variants},
          {"seeds", c.seeds},
          {"runs_contract_digest", c.runs_contract_digest},
          {"runs", runs},
          {"figures", figures}};
}

}  // namespace h3p::contract
