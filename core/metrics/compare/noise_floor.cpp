#include "core/metrics/compare/noise_floor.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/common/error.h"
#include "core/metrics/compare/bounds_check.h"
#include "core/metrics/compare/run_compare.h"
#include "core/runs/manifest.h"

namespace h3p::compare {
namespace fs = std::filesystem;
namespace {

FigureRange range_of(const std::vector<double>& values) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return {*lo, *hi};
}

// Whether two run paths name the same directory.
bool same_run(const fs::path& a, const fs::path& b) {
  std::error_code error;
  return fs::equivalent(a, b, error);
}

}  // namespace

bool is_provider_variant(const std::string& spec) {
  constexpr std::string_view kBase = "provider:";
  if (spec.rfind(kBase, 0) != 0) return false;
  // Overrides "target=value", comma-separated; a value other than these forces a backend.
  bool forces_backend = false;
  std::istringstream overrides(spec.substr(kBase.size()));
  for (std::string item; std::getline(overrides, item, ',');) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos) return false;
    const std::string value = item.substr(eq + 1);
    if (value == "candidate" || value == "plugin" || value.empty()) return false;
    if (value != "provider") forces_backend = true;
  }
  return forces_backend;
}

VariantFigures variant_figures(const Comparison& c) {
  VariantFigures v;
  v.spec = c.candidate.kind == "run" ? c.candidate.impl_spec : c.candidate.path.filename().string();
  v.run = c.candidate.path;
  v.psnr_db = c.clip.psnr_db;
  v.ssim = c.clip.ssim;
  v.temporal_rmse = c.clip.temporal_rmse;
  if (c.clip.audio) v.audio_rel_l2 = c.clip.audio->rel_l2;
  for (const StepRow& s : c.steps) v.steps.push_back({s.step, s.video.rel_l2, s.audio.rel_l2});
  return v;
}

std::optional<NoiseFloor> make_noise_floor(std::vector<VariantFigures> variants,
                                           const metrics::ClipComparison& clip) {
  if (variants.empty()) return std::nullopt;
  NoiseFloor nf;
  nf.variants = std::move(variants);
  std::vector<double> psnr, ssim, temporal, audio;
  for (const VariantFigures& v : nf.variants) {
    psnr.push_back(v.psnr_db);
    ssim.push_back(v.ssim);
    temporal.push_back(v.temporal_rmse);
    if (v.audio_rel_l2) audio.push_back(*v.audio_rel_l2);
  }
  nf.psnr_db = range_of(psnr);
  nf.ssim = range_of(ssim);
  nf.temporal_rmse = range_of(temporal);
  if (!audio.empty()) nf.audio_rel_l2 = range_of(audio);
  // Worse than the worst variant; NaN is never within.
  if (!(clip.psnr_db >= nf.psnr_db.min)) {
    nf.outside.push_back("psnr_db " + figure_text(clip.psnr_db) + " < worst variant " +
                         figure_text(nf.psnr_db.min));
  }
  if (!(clip.ssim >= nf.ssim.min)) {
    nf.outside.push_back("ssim " + figure_text(clip.ssim) + " < worst variant " +
                         figure_text(nf.ssim.min));
  }
  if (!(clip.temporal_rmse <= nf.temporal_rmse.max)) {
    nf.outside.push_back("temporal_rmse " + figure_text(clip.temporal_rmse) + " > worst variant " +
                         figure_text(nf.temporal_rmse.max));
  }
  if (nf.audio_rel_l2) {
    if (!clip.audio) {
      nf.outside.push_back("audio_rel_l2: no audio to compare (the variants have audio)");
    } else if (!(clip.audio->rel_l2 <= nf.audio_rel_l2->max)) {
      nf.outside.push_back("audio_rel_l2 " + figure_text(clip.audio->rel_l2) + " > worst variant " +
                           figure_text(nf.audio_rel_l2->max));
    }
  }
  return nf;
}

std::vector<fs::path> find_variant_runs(const fs::path& provider_run) {
  if (!is_run(provider_run)) return {};
  const runs::Manifest provider = runs::read_manifest(provider_run / "manifest.json");
  const fs::path contract_dir =
      fs::absolute(provider_run).lexically_normal().parent_path().parent_path();
  const std::string seed_dir = "seed-" + std::to_string(provider.seed);
  std::vector<std::pair<std::string, fs::path>> found;
  std::error_code error;
  for (const auto& impl : fs::directory_iterator(contract_dir, error)) {
    const fs::path run = impl.path() / seed_dir;
    if (!impl.is_directory() || !is_run(run) || same_run(run, provider_run)) continue;
    runs::Manifest m;
    try {
      m = runs::read_manifest(run / "manifest.json");
    } catch (const InputError&) {
      continue;  // not a readable run: not a variant to measure
    }
    if (!is_provider_variant(m.impl_spec) || m.seed != provider.seed ||
        m.contract_digest != provider.contract_digest) {
      continue;
    }
    found.push_back({m.impl_spec, run});
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [spec, run] : found) out.push_back(run);
  return out;
}

void add_noise_floor(Comparison& out, const CompareParams& params,
                     const std::vector<fs::path>& explicit_variants) {
  if (!is_run(params.provider)) return;
  const runs::Manifest provider = runs::read_manifest(params.provider / "manifest.json");
  std::vector<VariantFigures> variants;
  std::vector<std::string> skipped;
  std::vector<fs::path> measured;
  auto measure = [&](const fs::path& run) {
    CompareParams p = params;
    p.candidate = run;
    p.progress = nullptr;
    variants.push_back(variant_figures(compare_pair(p)));
    measured.push_back(run);
  };
  auto counts = [&](const fs::path& run) {
    if (same_run(run, params.candidate) || same_run(run, params.provider)) return false;
    return std::none_of(measured.begin(), measured.end(),
                        [&](const fs::path& m) { return same_run(m, run); });
  };
  // 1. Named on the command line: only those of the provider's contract and seed.
  for (const fs::path& run : explicit_variants) {
    if (!is_run(run)) throw InputError("--variant " + run.string() + ": not a run directory");
    const runs::Manifest m = runs::read_manifest(run / "manifest.json");
    if (m.seed != provider.seed || m.contract_digest != provider.contract_digest) continue;
    if (counts(run)) measure(run);
  }
  // 2. Found beside the provider run.
  for (const fs::path& run : find_variant_runs(params.provider)) {
    if (!counts(run)) continue;
    try {
      measure(run);
    } catch (const InputError& e) {
      skipped.push_back(run.string() + ": " + e.what());
    }
  }
  out.noise_floor = make_noise_floor(std::move(variants), out.clip);
  if (out.noise_floor) {
    out.noise_floor->skipped = std::move(skipped);
  } else {
    for (const std::string& s : skipped) out.notes.push_back("variant run not measured: " + s);
  }
}

}  // namespace h3p::compare
