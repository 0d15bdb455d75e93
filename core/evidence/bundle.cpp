#include "core/evidence/bundle.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "core/contract/json_text.h"
#include "core/evidence/redaction.h"
#include "core/io/atomic_file.h"
#include "core/io/sha256.h"
#include "core/metrics/compare/evidence_report.h"
#include "core/runs/manifest.h"
#include "core/runs/numerics_segments.h"
#include "core/runs/run_paths.h"
#include "core/runs/sidecar.h"

extern char** environ;

namespace h3p::evidence {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

// The weights cell of a provenance row (its "identity" object): runs::weights_cell.
std::string weights_cell(const json& identity) {
  runs::ModelIdentity id;
  id.weights_digest = identity.at("weights_digest").get<std::string>();
  if (!identity.at("weights_source").is_null()) {
    id.weights_source = identity.at("weights_source").get<std::string>();
  }
  return runs::weights_cell(id);
}

// Removes the staging directory unless released (a failure leaves nothing half-written).
class Staging {
 public:
  explicit Staging(fs::path dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }
  ~Staging() {
    if (!released_) io::remove_tree(dir_);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  const fs::path& dir() const { return dir_; }
  void release() { released_ = true; }

 private:
  fs::path dir_;
  bool released_ = false;
};

bool inside(const fs::path& child, const fs::path& parent) {
  auto c = child.begin();
  for (auto p = parent.begin(); p != parent.end(); ++p, ++c) {
    if (p->empty()) continue;  // a trailing separator
    if (c == child.end() || *c != *p) return false;
  }
  return true;
}

fs::path normal_absolute(const fs::path& p) {
  std::error_code ec;
  const fs::path w = fs::weakly_canonical(fs::absolute(p), ec);
  return (ec ? fs::absolute(p) : w).lexically_normal();
}

json read_json(const fs::path& file, const std::string& what) {
  if (!fs::is_regular_file(file)) throw InputError(file.string() + ": " + what + ": no such file");
  return contract::parse_json_text(io::read_file(file), file.string());
}

// Writes `text` redacted to staging/rel.
void put(Redactor& r, const fs::path& staging, const fs::path& rel, std::string_view text) {
  const fs::path to = staging / rel;
  fs::create_directories(to.parent_path());
  io::atomic_write_text(to, r.apply(text));
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

struct Run {
  fs::path dir;  // in RUNS
  fs::path rel;  // <contract>/<impl-dir>/seed-<n>
  runs::Manifest manifest;
};

std::vector<Run> find_runs(const fs::path& root) {
  std::vector<Run> out;
  for (const auto& c : fs::directory_iterator(root)) {
    if (!c.is_directory()) continue;
    for (const auto& i : fs::directory_iterator(c.path())) {
      if (!i.is_directory()) continue;
      for (const auto& s : fs::directory_iterator(i.path())) {
        if (!fs::is_regular_file(s.path() / "manifest.json")) continue;
        out.push_back({s.path(), s.path().lexically_relative(root),
                       runs::read_manifest(s.path() / "manifest.json")});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Run& a, const Run& b) { return a.rel < b.rel; });
  return out;
}

// The generation gate of one run: complete, resumes as segments, steps verified by digest.
json generation_row(const Run& run) {
  const runs::RunPaths paths(run.dir);
  const int planned = run.manifest.params.value("num_calls", 0);
  int saved = 0, verified = 0;
  std::string problem;
  for (int step = 0;; ++step) {
    const fs::path sidecar = paths.step_sidecar(step);
    if (!fs::exists(sidecar)) break;
    ++saved;
    try {
      const runs::StepRecord rec = runs::parse_sidecar(
          io::read_file(sidecar), sidecar.filename().string(),
          {step, paths.step_file(step).filename().string()});
      if (io::sha256_file(paths.step_file(step)) == rec.file_digest) {
        ++verified;
      } else if (problem.empty()) {
        problem = "step " + std::to_string(step) + ": file digest differs from its sidecar";
      }
    } catch (const InputError& e) {
      if (problem.empty()) problem = "step " + std::to_string(step) + ": " + e.what();
    }
  }
  const runs::RunSegments seg = runs::read_run_segments(paths, run.manifest);
  const bool complete = saved == planned && planned > 0 && fs::exists(paths.latents());
  return {{"run", "runs/" + run.rel.generic_string()},
          {"contract", run.manifest.contract_name},
          {"impl_spec", run.manifest.impl_spec},
          {"seed", run.manifest.seed},
          {"planned_steps", planned},
          {"saved_steps", saved},
          {"verified_steps", verified},
          {"complete", complete},
          {"segments", seg.segments.size()},
          {"resumed_under_new_numerics", seg.segments.empty() ? 0 : seg.segments.size() - 1},
          {"mixed", seg.mixed},
          {"verified", problem.empty() && verified == saved && saved > 0},
          {"problem", problem}};
}

// Where a run came from, in words.
std::string origin(const runs::Manifest& m) {
  if (!m.imported.is_null()) {
    return "imported (" + m.imported.value("label", std::string("?")) + ", computed elsewhere)";
  }
  if (!m.plugin.is_null()) {
    return "plugin " + m.plugin.value("name", std::string("?")) + " " +
           m.plugin.value("version", std::string());
  }
  return "h3parity";
}

// Runs `tool args...` without a shell; returns its exit status (-1 when it could not start).
int run_tool(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string yes_no(bool b) { return b ? "yes" : "**no**"; }

}  // namespace

BundleResult write_bundle(const BundleParams& p) {
  // 0. Inputs.
  if (!fs::is_directory(p.runs_root)) {
    throw InputError(p.runs_root.string() + ": runs directory: not a directory");
  }
  if (p.out_dir.empty()) throw InputError("--out: required");
  const fs::path runs_abs = normal_absolute(p.runs_root);
  const fs::path out = normal_absolute(p.out_dir);
  if (inside(out, runs_abs)) {
    throw InputError(p.out_dir.string() + ": the bundle directory must not be inside the runs "
                     "directory " + p.runs_root.string());
  }
  if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out))) {
    throw InputError(p.out_dir.string() + ": exists and is not an empty directory");
  }
  if (!p.tests_file.empty() && !fs::is_regular_file(p.tests_file)) {
    throw InputError(p.tests_file.string() + ": --tests: no such file");
  }
  const std::vector<Run> found = find_runs(runs_abs);
  if (found.empty()) {
    throw InputError(p.runs_root.string() + ": no runs found (RUNS/<contract>/<impl>/seed-<n>)");
  }
  auto progress = [&](double f, const std::string& what) {
    if (p.progress) p.progress(f, what);
  };

  // 1. The redaction rules: the machine's, then what the runs recorded.
  Redactor red = Redactor::for_machine(p.runs_root);
  for (const Run& r : found) {
    red.add_recorded(runs::manifest_to_json(r.manifest), "manifests");
    const runs::RunPaths paths(r.dir);
    if (fs::exists(paths.segments())) {
      red.add_recorded(read_json(paths.segments(), "segments"), "segments.json");
    }
  }
  std::vector<std::pair<fs::path, json>> preflights;
  for (const fs::path& f : p.preflight_files) preflights.push_back({f, read_json(f, "--preflight")});
  for (const auto& c : fs::directory_iterator(runs_abs)) {
    if (!c.is_directory()) continue;
    for (const auto& e : fs::directory_iterator(c.path())) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name.rfind("preflight", 0) == 0 && e.path().extension() == ".json") {
        preflights.push_back({e.path(), read_json(e.path(), "preflight")});
      }
    }
  }
  for (const auto& [f, j] : preflights) red.add_recorded(j, "preflight files");

  fs::create_directories(out.parent_path());
  Staging staging(out.parent_path() / ("." + out.filename().string() + ".partial-" +
                                       std::to_string(::getpid())));
  const fs::path S = staging.dir();

  // 2. The report, reused: written into the staging runs tree, its comparisons kept there
  // (where the workbench finds them), report.md/json redacted and extended below.
  progress(0.0, "report");
  compare::ReportParams rp;
  rp.runs_root = runs_abs;
  rp.out_dir = S / "runs" / "report";
  rp.compare = p.compare;
  rp.progress = [&](double f, const std::string& what) { progress(0.8 * f, what); };
  const compare::ReportResult report = compare::write_report(rp);
  const std::string report_md = io::read_file(report.markdown);
  json report_json = json::parse(io::read_file(report.json));
  for (const fs::path& f : {report.markdown, report.json, report.sums}) fs::remove(f);
  for (const auto& e : fs::recursive_directory_iterator(S / "runs" / "report")) {
    if (e.is_regular_file()) io::atomic_write_text(e.path(), red.apply(io::read_file(e.path())));
  }

  // 3. Redacted copies of the runs' records, the analysis files beside them, and logs.
  progress(0.8, "copies");
  json provenance = json::array();
  json generation = json::array();
  for (const Run& r : found) {
    const runs::RunPaths paths(r.dir);
    put(red, S, "runs" / r.rel / "manifest.json", io::read_file(paths.manifest()));
    if (fs::exists(paths.segments())) {
      put(red, S, "runs" / r.rel / "segments.json", io::read_file(paths.segments()));
    }
    generation.push_back(generation_row(r));
    const json& env = r.manifest.environment;
    provenance.push_back(
        {{"run", "runs/" + r.rel.generic_string()},
         {"contract", r.manifest.contract_name},
         {"contract_digest", r.manifest.contract_digest},
         {"impl_spec", r.manifest.impl_spec},
         {"seed", r.manifest.seed},
         {"h3parity_commit", env.value("h3parity_commit", std::string("not recorded"))},
         {"model", env.value("model", std::string())},
         {"identity", {{"weights_digest", r.manifest.identity.weights_digest},
                       // null: weight files; else how the weights were drawn (seeded)
                       {"weights_source", r.manifest.identity.weights_source.empty()
                                              ? json(nullptr)
                                              : json(r.manifest.identity.weights_source)},
                       {"config_digest", r.manifest.identity.config_digest},
                       {"sources_digest", r.manifest.identity.sources_digest}}},
         {"gate", env.contains("gate") ? env.at("gate") : json()},
         {"origin", origin(r.manifest)}});
  }
  std::set<fs::path> run_dirs;
  for (const Run& r : found) run_dirs.insert(r.dir);
  for (auto it = fs::recursive_directory_iterator(runs_abs); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& f = it->path();
    if (it->is_directory() && (run_dirs.count(f) || f == runs_abs / "report")) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    const fs::path rel = f.lexically_relative(runs_abs);
    const std::string ext = f.extension().string();
    const auto depth = std::distance(rel.begin(), rel.end());
    if (depth == 2 && (ext == ".json" || ext == ".md")) {
      put(red, S, "runs" / rel, io::read_file(f));  // analysis files: contract, ablation, drift
    } else if (ext == ".log" || ext == ".out") {
      put(red, S, "logs" / fs::path(red.apply(rel.generic_string())), io::read_file(f));
    }
  }

  // 4. Preflight, gate and tests inputs.
  json preflight_rows = json::array();
  std::ostringstream pre_md;
  int preflight_index = 0;
  for (const auto& [file, j] : preflights) {
    const bool beside = inside(normal_absolute(file), runs_abs);
    const std::string bundled =
        beside ? "runs/" + normal_absolute(file).lexically_relative(runs_abs).generic_string()
               : "preflight/" + std::to_string(++preflight_index) + "-" + file.filename().string();
    if (!beside) put(red, S, bundled, j.dump(2) + "\n");
    for (const json& row : j.value("rows", json::array())) {
      const bool ok = row.value("ok", false);
      pre_md << "| [" << j.value("contract", std::string()) << "](" << bundled << ") | `"
             << j.value("contract_digest", std::string()).substr(0, 16) << "` | "
             << j.value("device", std::string()) << " | `" << row.value("impl_spec", std::string())
             << "` | " << (ok ? (row.value("decoded", false) ? "ok, decoded" : "ok") : "**failed**: " + row.value("error", std::string()))
             << " | " << (ok ? fixed(row.value("seconds_per_call", 0.0), 3) : "") << " | "
             << (ok ? fixed(row.value("projected_seconds", 0.0) / 3600.0, 2) : "") << " |\n";
      preflight_rows.push_back({{"file", bundled}, {"contract", j.value("contract", std::string())},
                                {"contract_digest", j.value("contract_digest", std::string())},
                                {"row", row}});
    }
  }
  // Gate files: those the runs recorded, and <model>/gate.json where the model is a directory.
  std::map<std::string, std::string> gates;  // source path -> bundled path
  json gate_rows = json::array();
  std::ostringstream gate_md;
  for (const Run& r : found) {
    const json& env = r.manifest.environment;
    std::vector<fs::path> candidates;
    if (env.contains("gate") && env.at("gate").contains("file")) {
      candidates.push_back(env.at("gate").value("file", std::string()));
    }
    const std::string model = env.value("model", std::string());
    if (!model.empty() && model.find('/') != std::string::npos) {
      const fs::path m(model);
      candidates.push_back((m.filename() == "transformer" ? m.parent_path() : m) / "gate.json");
    }
    for (const fs::path& g : candidates) {
      if (g.empty() || !fs::is_regular_file(g) || gates.count(g.string())) continue;
      const std::string bundled = "gates/" + std::to_string(gates.size() + 1) + "-gate.json";
      gates[g.string()] = bundled;
      const std::string text = io::read_file(g);
      const json gj = contract::parse_json_text(text, g.string());
      put(red, S, bundled, text);
      std::size_t bound = 0;
      const std::string digest = io::sha256_hex(std::string_view(text));
      for (const Run& o : found) {
        const json& oe = o.manifest.environment;
        if (oe.contains("gate") && oe.at("gate").value("digest", std::string()) == digest) ++bound;
      }
      const bool passed = gj.value("passed", false);
      gate_md << "| [" << bundled << "](" << bundled << ") | `"
              << gj.value("candidate_spec", gj.value("candidate", std::string())) << "` | "
              << (passed ? "passed" : "**FAILED**") << " | " << bound << " |\n";
      gate_rows.push_back({{"file", bundled}, {"passed", passed}, {"sha256", digest},
                           {"runs_bound", bound}});
    }
  }
  json tests;
  if (!p.tests_file.empty()) {
    tests = read_json(p.tests_file, "--tests");
    tests["found"] = true;
  } else {
    tests = {{"found", false}, {"reason", p.tests_note}};
  }
  put(red, S, "tests.json", tests.dump(2) + "\n");

  // 5. Figures, rendered by the Qt tool from the redacted copies.
  progress(0.85, "figures");
  BundleResult result;
  json figures = json::array();
  result.figures_note = p.figures_note;
  if (!p.figures_tool.empty()) {
    fs::create_directories(S / "figures");
    const fs::path list = S / "figures" / "figures.json";
    const int status = run_tool({p.figures_tool.string(), "--runs", (S / "runs").string(), "--out",
                                 (S / "figures").string(), "--width", std::to_string(p.figure_width),
                                 "--height", std::to_string(p.figure_height), "--json", list.string()});
    if (status == 0 && fs::exists(list)) {
      figures = json::parse(io::read_file(list)).value("figures", json::array());
      io::atomic_write_text(list, red.apply(io::read_file(list)));
      result.figures_rendered = true;
      result.figures_note = "rendered by h3parity-figures (" + std::to_string(p.figure_width) + "x" +
                            std::to_string(p.figure_height) + " px)";
    } else {
      io::remove_tree(S / "figures");
      result.figures_note = "not rendered: h3parity-figures exited " + std::to_string(status);
    }
  }

  // 6. report.md: the gates in order, then the report itself.
  std::ostringstream md;
  const auto passed = report.passed();
  std::size_t complete = 0, verified = 0;
  for (const json& g : generation) {
    complete += g.at("complete").get<bool>();
    verified += g.at("verified").get<bool>();
  }
  md << "# Evidence bundle: " << runs_abs.filename().string() << "\n\n"
     << "| gate | result | section |\n|---|---|---|\n"
     << "| preflight | " << (preflights.empty() ? "none given" : std::to_string(preflight_rows.size()) + " spec rows") << " | [Preflight](#1-preflight) |\n"
     << "| numerical gate | " << (gates.empty() ? "no gate file" : std::to_string(gates.size()) + " gate file(s)") << " | [Numerical gate](#2-numerical-gate) |\n"
     << "| generation | " << complete << " of " << found.size() << " runs complete, " << verified
     << " verified | [Generation](#3-generation) |\n"
     << "| quality | " << (!passed ? "no bounds" : (*passed ? "all passed" : "**FAILED**"))
     << " | [Quality](#4-quality-and-noise-floor) |\n"
     << "| tests | " << (p.tests_file.empty() ? "none found" : "tests.json") << " | [Tests](#5-tests) |\n\n"
     << "Files: every file is listed in [SHA256SUMS](SHA256SUMS) (`sha256sum -c SHA256SUMS` in this "
        "directory); what was redacted is in [redaction.json](redaction.json), provenance per run in "
        "[bundle.json](bundle.json).\n\n";
  md << "## 1. Preflight\n\n";
  if (preflights.empty()) {
    md << "No preflight file was given (`--preflight`) or found (`RUNS/<contract>/preflight*.json`).\n\n";
  } else {
    md << "| contract | contract digest | device | impl spec | result | s / call | projected full run (h) |\n"
          "|---|---|---|---|---|---|---|\n" << pre_md.str() << "\n";
  }
  md << "## 2. Numerical gate\n\n";
  if (gates.empty()) {
    md << "No gate file: no run records one and no model directory holds a `gate.json` (the "
          "contracts do not require the gate).\n\n";
  } else {
    md << "| gate file | candidate | result | runs bound to it |\n|---|---|---|---|\n" << gate_md.str() << "\n";
  }
  md << "## 3. Generation\n\n| run | impl spec | seed | complete | steps saved / planned | "
        "numerics segments (resumes under a new environment) | verified |\n|---|---|---|---|---|---|---|\n";
  for (const json& g : generation) {
    md << "| [`" << g.at("run").get<std::string>() << "`](" << g.at("run").get<std::string>()
       << "/manifest.json) | `" << g.at("impl_spec").get<std::string>() << "` | " << g.at("seed")
       << " | " << yes_no(g.at("complete")) << " | " << g.at("saved_steps") << " / "
       << g.at("planned_steps") << " | " << g.at("segments") << " ("
       << g.at("resumed_under_new_numerics") << (g.at("mixed").get<bool>() ? ", **mixed**" : "")
       << ") | " << (g.at("verified").get<bool>() ? "yes: every step file matches its sidecar"
                                                   : "**no**: " + g.at("problem").get<std::string>())
       << " |\n";
  }
  md << "\nResumes in the same numerics environment continue bit-exactly and are not recorded "
        "as segments; the step files were checked against their sidecars when this bundle was made "
        "(the step files themselves are not in the bundle).\n\n";
  md << "## 4. Quality and noise floor\n\nThe bounds are those fixed by each contract before "
        "generation; the comparisons are in [runs/report/comparisons](runs/report/comparisons).\n\n";
  if (result.figures_rendered) {
    for (const json& f : figures) {
      const std::string file = "figures/" + f.value("file", std::string());
      md << "![" << f.value("title", file) << "](" << file << ")\n\n";
    }
  } else {
    md << "**Figures were not rendered**: " << result.figures_note << ".\n\n";
  }
  std::string body = report_md;
  // The report's own heading becomes a section, and its Files note speaks of this bundle.
  if (body.rfind("# ", 0) == 0) body = "#" + body;
  if (const std::size_t files = body.find("\n## Files\n"); files != std::string::npos) body.resize(files + 1);
  md << body << "\n## 5. Tests\n\n";
  if (p.tests_file.empty()) {
    md << "No test results: " << p.tests_note << ".\n\n";
  } else {
    md << "[tests.json](tests.json): commit `" << tests.value("commit", std::string("?"))
       << "`, build type " << tests.value("build_type", std::string("?")) << ".\n\n"
       << "| stage | label | passed | failed | skipped |\n|---|---|---|---|---|\n";
    for (const json& st : tests.value("stages", json::array())) {
      const json labels = st.value("labels", json::object());
      for (const auto& [label, n] : labels.items()) {
        md << "| " << st.value("name", std::string()) << " | " << label << " | " << n.value("passed", 0)
           << " | " << n.value("failed", 0) << " | " << n.value("skipped", 0) << " |\n";
      }
    }
    md << "\n";
  }
  md << "## 6. Provenance\n\n| run | h3parity commit | origin | contract digest | weights | gate |\n"
        "|---|---|---|---|---|---|\n";
  for (const json& pv : provenance) {
    const json& g = pv.at("gate");
    md << "| `" << pv.at("run").get<std::string>() << "` | `" << pv.at("h3parity_commit").get<std::string>()
       << "` | " << pv.at("origin").get<std::string>() << " | `"
       << pv.at("contract_digest").get<std::string>().substr(0, 16) << "` | "
       << weights_cell(pv.at("identity")) << " | "
       << (g.is_null() ? "not required" : g.value("skipped", false) ? "**skipped**" : "`" + g.value("digest", std::string()).substr(0, 16) + "`")
       << " |\n";
  }
  md << "\n## Verify\n\n```sh\ncd <this directory> && sha256sum -c SHA256SUMS\n```\n";

  // 7. report.json, bundle.json, redaction.json (all redacted), then SHA256SUMS.
  report_json["bundle"] = {{"preflight", preflight_rows}, {"gates", gate_rows},
                           {"generation", generation}, {"figures", figures},
                           {"tests", {{"found", !p.tests_file.empty()}}}};
  const json bundle = {
      {"format_version", 1},
      {"runs", provenance},
      {"figures", {{"rendered", result.figures_rendered}, {"note", result.figures_note},
                   {"width", p.figure_width}, {"height", p.figure_height}, {"files", figures}}},
      {"tests", {{"found", !p.tests_file.empty()}, {"note", p.tests_note}}},
      {"verdict", passed ? json(*passed) : json()},
      {"layout", {{"report", "report.md, report.json"}, {"runs", "runs/<contract>/<impl-dir>/seed-<n>/manifest.json"},
                  {"comparisons", "runs/report/comparisons/"}, {"figures", "figures/"},
                  {"redaction", "redaction.json"}, {"checksums", "SHA256SUMS"}}}};
  put(red, S, "report.md", md.str());
  put(red, S, "report.json", report_json.dump(2) + "\n");
  put(red, S, "bundle.json", bundle.dump(2) + "\n");
  io::atomic_write_text(S / "redaction.json", red.to_json().dump(2) + "\n");
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(S)) {
    if (e.is_regular_file()) files.push_back(e.path().lexically_relative(S));
  }
  std::sort(files.begin(), files.end());
  std::ostringstream sums;
  for (const fs::path& f : files) sums << io::sha256_file(S / f) << "  " << f.generic_string() << "\n";
  io::atomic_write_text(S / "SHA256SUMS", sums.str());

  // 8. Into place.
  if (fs::exists(out)) fs::remove(out);
  fs::rename(S, out);
  staging.release();
  progress(1.0, "done");
  result.dir = out;
  result.runs = found.size();
  result.comparisons = report.comparisons.size();
  result.figures = figures.size();
  result.files = files.size() + 1;
  result.passed = passed;
  return result;
}

}  // namespace h3p::evidence
