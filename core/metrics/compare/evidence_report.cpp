#include "core/metrics/compare/evidence_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/sha256.h"
#include "core/metrics/compare/compare_output.h"
#include "core/metrics/compare/noise_floor.h"
#include "core/runs/manifest.h"
#include "core/runs/numerics_segments.h"
#include "core/runs/run_paths.h"

namespace h3p::compare {
namespace fs = std::filesystem;
namespace {

struct FoundRun {
  fs::path dir;
  runs::Manifest manifest;
};

// RUNS/<contract>/<impl-dir>/seed-<n>/manifest.json, sorted by path.
std::vector<FoundRun> find_runs(const fs::path& root) {
  std::vector<FoundRun> out;
  if (!fs::is_directory(root)) throw InputError(root.string() + ": not a directory");
  for (const auto& contract : fs::directory_iterator(root)) {
    if (!contract.is_directory()) continue;
    for (const auto& impl : fs::directory_iterator(contract.path())) {
      if (!impl.is_directory()) continue;
      for (const auto& seed : fs::directory_iterator(impl.path())) {
        if (!fs::exists(seed.path() / "manifest.json")) continue;
        out.push_back({seed.path(), runs::read_manifest(seed.path() / "manifest.json")});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const FoundRun& a, const FoundRun& b) {
    return a.dir < b.dir;
  });
  if (out.empty()) throw InputError(root.string() + ": no runs found (RUNS/<contract>/<impl>/seed-<n>)");
  return out;
}

// Files of one run that the report cites.
void cite_run(const fs::path& dir, std::set<fs::path>& cited) {
  const runs::RunPaths paths(dir);
  for (const fs::path& f : {paths.manifest(), paths.segments(), paths.latents(), paths.noise(),
                            paths.conditioning()}) {
    if (fs::exists(f)) cited.insert(f);
  }
  for (const fs::path& sub : {paths.steps_dir(), dir / "decoded"}) {
    if (!fs::is_directory(sub)) continue;
    for (const auto& e : fs::directory_iterator(sub)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file() || name.rfind(".tmp", 0) == 0) continue;
      // Step call files are bound by their sidecars' digests; the sidecars are cited.
      if (sub == paths.steps_dir() && e.path().extension() != ".json") continue;
      cited.insert(e.path());
    }
  }
}

}  // namespace

std::optional<bool> ReportResult::passed() const {
  std::optional<bool> all;
  for (const Comparison& c : comparisons) {
    if (!c.passed()) continue;
    all = all.value_or(true) && *c.passed();
  }
  return all;
}

ReportResult write_report(const ReportParams& params) {
  const fs::path root = params.runs_root;
  const fs::path out_dir = params.out_dir.empty() ? root / "report" : params.out_dir;
  const std::vector<FoundRun> found = find_runs(root);
  ReportResult result;
  std::set<fs::path> cited;

  // 1. Pair every non-provider run with the provider of its contract and seed.
  std::map<std::pair<std::string, std::uint64_t>, const FoundRun*> providers;
  for (const FoundRun& r : found) {
    if (r.manifest.impl_spec == "provider") {
      providers[{r.manifest.contract_digest, r.manifest.seed}] = &r;
    }
  }
  std::vector<std::pair<const FoundRun*, const FoundRun*>> pairs;
  for (const FoundRun& r : found) {
    if (r.manifest.impl_spec == "provider") continue;
    const auto it = providers.find({r.manifest.contract_digest, r.manifest.seed});
    if (it == providers.end()) {
      result.skipped.push_back(r.dir.string() + ": no provider run of the same contract and seed");
      continue;
    }
    pairs.push_back({&r, it->second});
  }

  // 2. Compare each pair.
  std::vector<fs::path> files;  // per-comparison JSON under comparisons/
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& [cand, prov] = pairs[i];
    if (params.progress) {
      params.progress(static_cast<double>(i) / pairs.size(), cand->dir.lexically_relative(root).string());
    }
    CompareParams cp = params.compare;
    cp.candidate = cand->dir;
    cp.provider = prov->dir;
    cp.progress = nullptr;
    try {
      Comparison c = compare_pair(cp);
      const fs::path rel = cand->dir.lexically_relative(root);
      files.push_back(out_dir / "comparisons" / (rel.string() + ".json"));
      cite_run(cand->dir, cited);
      cite_run(prov->dir, cited);
      result.comparisons.push_back(std::move(c));
    } catch (const InputError& e) {
      result.skipped.push_back(cand->dir.string() + ": " + e.what());
    }
  }
  // The noise floor of every other comparison: the provider-variant comparisons of its
  // provider run (same contract and seed).
  for (Comparison& c : result.comparisons) {
    if (is_provider_variant(c.candidate.impl_spec)) continue;
    std::vector<VariantFigures> variants;
    for (const Comparison& v : result.comparisons) {
      if (is_provider_variant(v.candidate.impl_spec) && v.provider.path == c.provider.path) {
        variants.push_back(variant_figures(v));
      }
    }
    c.noise_floor = make_noise_floor(std::move(variants), c.clip);
  }
  for (std::size_t i = 0; i < result.comparisons.size(); ++i) {
    fs::create_directories(files[i].parent_path());
    io::atomic_write_text(files[i], to_json(result.comparisons[i]).dump(2) + "\n");
    cited.insert(files[i]);
  }
  // Analysis files written beside the runs (ablation, drift) are cited too.
  for (const auto& contract : fs::directory_iterator(root)) {
    if (!contract.is_directory()) continue;
    for (const auto& e : fs::directory_iterator(contract.path())) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".json" || ext == ".md")) cited.insert(e.path());
    }
  }

  // 3. report.md, report.json, SHA256SUMS.
  std::ostringstream md;
  md << "# h3parity evidence: " << root.filename().string() << "\n\n"
     << found.size() << " runs, " << result.comparisons.size() << " comparisons against the "
     << "provider of the same contract and seed. Verdict: "
     << (!result.passed() ? "no bounds" : (*result.passed() ? "all passed" : "FAILED")) << ".\n\n";
  md << "| run | contract | impl spec | seed | identity (weights) | numerics |\n"
        "|---|---|---|---|---|---|\n";
  // Where each run's steps were computed (runs/numerics_segments.h): one environment, or the
  // segments of a run resumed under another one.
  nlohmann::json numerics = nlohmann::json::array();
  std::vector<std::string> mixed_runs;
  for (const FoundRun& r : found) {
    const runs::RunPaths paths(r.dir);
    const runs::RunSegments run = runs::read_run_segments(paths, r.manifest);
    const auto& segments = run.segments;
    const bool mixed = run.mixed;
    const std::string rel = r.dir.lexically_relative(root).string();
    const std::string where = segments.size() == 1 ? "one environment"
                              : mixed ? "**mixed**: " + run.text
                                      : "verified: " + run.text;
    if (mixed) mixed_runs.push_back(rel);
    md << "| `" << rel << "` | " << r.manifest.contract_name << " | `" << r.manifest.impl_spec
       << "` | " << r.manifest.seed << " | " << runs::weights_cell(r.manifest.identity) << " | "
       << where << " |\n";
    nlohmann::json list = nlohmann::json::array();
    for (const auto& seg : segments) list.push_back(runs::segment_to_json(seg));
    numerics.push_back({{"run", rel}, {"mixed", mixed}, {"segments", list}});
  }
  if (!mixed_runs.empty()) {
    md << "\n**Mixed runs** (steps computed under numerics environments that give different "
          "results; a resume continued with --accept-new-numerics):";
    for (const std::string& m : mixed_runs) md << " `" << m << "`";
    md << "\n";
  }
  // The candidate plugins that ran: what each run is bound to besides the model.
  nlohmann::json plugins = nlohmann::json::array();
  for (const FoundRun& r : found) {
    const nlohmann::json& p = r.manifest.plugin;
    if (p.is_null()) continue;
    if (plugins.empty()) {
      md << "\nCandidate plugins (a run is bound to these bytes):\n\n"
            "| run | plugin | version | kind | file | library sha256 | source files |\n"
            "|---|---|---|---|---|---|---|\n";
    }
    const std::string argument = p.value("argument", std::string());
    const std::string file =
        fs::path(argument.empty() ? p.value("library", std::string()) : argument).filename().string();
    const std::size_t sources = p.contains("sources") ? p.at("sources").size() : 0;
    md << "| `" << r.dir.lexically_relative(root).string() << "` | " << p.value("name", std::string())
       << " | " << p.value("version", std::string()) << " | " << p.value("kind", std::string())
       << " | `" << file << "` | `" << p.value("library_sha256", std::string()).substr(0, 16)
       << "` | " << sources << " |\n";
    plugins.push_back({{"run", r.dir.lexically_relative(root).string()}, {"plugin", p}});
  }
  // The calibrations the bounds follow (one per calibrated contract).
  nlohmann::json calibrations = nlohmann::json::array();
  std::set<std::string> cited_contracts;
  for (const Comparison& c : result.comparisons) {
    if (!c.bounds.calibration || !cited_contracts.insert(c.provider.contract_digest).second) continue;
    const contract::Calibration& cal = *c.bounds.calibration;
    if (calibrations.empty()) md << "\n## Calibration\n";
    md << "\nContract `" << c.provider.contract_name << "` (" << c.bounds.source
       << "): bounds " << c.bounds.bounds->describe() << " follow rule `" << cal.rule
       << "` from the provider `" << cal.provider << "` and the variants";
    for (const std::string& v : cal.variants) md << " `" << v << "`";
    md << " on calibration seeds";
    for (std::uint64_t seed : cal.seeds) md << " " << seed;
    md << " (" << cal.runs.size() << " runs, made under contract digest `"
       << cal.runs_contract_digest.substr(0, 16) << "`). " << cal.rule_text << "\n";
    calibrations.push_back({{"contract", c.provider.contract_name},
                            {"contract_digest", c.provider.contract_digest},
                            {"source", c.bounds.source},
                            {"calibration", contract::to_json(cal)}});
  }
  md << "\n" << to_markdown(result.comparisons);
  if (!result.skipped.empty()) {
    md << "\n## Not compared\n\n";
    for (const std::string& s : result.skipped) md << "- " << s << "\n";
  }
  md << "\n## Files\n\nEvery file cited here is listed with its SHA-256 in `SHA256SUMS` (paths "
        "relative to the runs directory; check with `sha256sum -c`).\n";
  fs::create_directories(out_dir);
  result.markdown = out_dir / "report.md";
  result.json = out_dir / "report.json";
  result.sums = out_dir / "SHA256SUMS";
  io::atomic_write_text(result.markdown, md.str());
  nlohmann::json j = {{"runs", found.size()},
                      {"comparisons", to_json(result.comparisons)},
                      {"skipped", result.skipped},
                      {"plugins", plugins},
                      {"numerics", numerics},
                      {"calibrations", calibrations},
                      {"noise_floor", noise_floor_table_json(result.comparisons)},
                      {"passed", result.passed() ? nlohmann::json(*result.passed()) : nlohmann::json()}};
  if (result.comparisons.size() == 1) j["comparisons"] = nlohmann::json::array({j["comparisons"]});
  else if (result.comparisons.size() > 1) j["comparisons"] = j["comparisons"]["comparisons"];
  else j["comparisons"] = nlohmann::json::array();
  io::atomic_write_text(result.json, j.dump(2) + "\n");
  cited.insert(result.markdown);
  cited.insert(result.json);
  std::ostringstream sums;
  for (const fs::path& f : cited) {
    sums << io::sha256_file(f) << "  " << fs::absolute(f).lexically_normal().lexically_relative(
                                               fs::absolute(root).lexically_normal()).string()
         << "\n";
  }
  io::atomic_write_text(result.sums, sums.str());
  if (params.progress) params.progress(1.0, "done");
  return result;
}

}  // namespace h3p::compare
