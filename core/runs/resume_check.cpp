#include "core/io/atomic_file.h"
#include "core/runs/resume_check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "core/common/error.h"
#include "core/io/sha256.h"
#include "core/ops/impl_spec.h"
#include "core/runs/manifest.h"
#include "core/runs/numerics_segments.h"
#include "core/runs/run_paths.h"
#include "core/runs/sidecar.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

// relative path -> sha256 of every regular file under `dir`, the lock file excluded.
std::map<std::string, std::string> tree_digests(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_regular_file() || it->path().filename() == ".lock") continue;
    out[fs::relative(it->path(), dir).generic_string()] = io::sha256_file(it->path());
  }
  if (error) throw_input(dir.string(), "cannot list directory: " + error.message());
  return out;
}

std::vector<ComparedFile> compare_trees(const std::map<std::string, std::string>& reference,
                                        const std::map<std::string, std::string>& tree) {
  std::set<std::string> paths;
  for (const auto& [path, sha] : reference) paths.insert(path);
  for (const auto& [path, sha] : tree) paths.insert(path);
  std::vector<ComparedFile> files;
  for (const auto& path : paths) {
    auto a = reference.find(path);
    auto b = tree.find(path);
    files.push_back({path, a == reference.end() ? "" : a->second, b == tree.end() ? "" : b->second});
  }
  return files;
}

// Drives generate_run for one scenario, stopping after a number of computed steps.
class Driver {
 public:
  Driver(const ResumeCheckParams& params, const ops::OpSetPtr& candidate, fs::path runs_root)
      : params_(params), candidate_(candidate), runs_root_(std::move(runs_root)) {}

  // One generate call; stops once `stop_after` steps were computed (-1: never). Returns the
  // result and whether it was stopped.
  std::pair<GenerateResult, bool> invoke(int stop_after, bool verify_last_step,
                                         std::vector<std::string>& log) {
    GenerateParams g = params_.generate;
    g.runs_root = runs_root_;
    g.verify_last_step = verify_last_step;
    std::atomic<bool> stop{false};
    int computed = 0;
    GenerateResult partial;
    g.stop_requested = &stop;
    g.on_step = [&](const StepEvent& e) {
      partial.steps.push_back(e);
      if (!e.replayed) ++computed;
      if ((stop_after >= 0 && computed >= stop_after) ||
          (params_.stop_requested && params_.stop_requested->load())) {
        stop.store(true);
      }
    };
    std::pair<GenerateResult, bool> out;
    try {
      out.first = generate_run(g, candidate_);
    } catch (const Preempted&) {
      if (params_.stop_requested && params_.stop_requested->load()) {
        throw Preempted("resume-check: stopped by a signal (" + runs_root_.string() + ")");
      }
      out.second = true;
      for (const auto& e : partial.steps) (e.replayed ? out.first.replayed : out.first.computed)++;
    }
    std::string line = "computed " + std::to_string(out.first.computed) + ", replayed " +
                       std::to_string(out.first.replayed) +
                       (out.second ? ", stopped at a safe point" : ", finished") +
                       (out.first.verified_last_step ? ", last saved step verified bitwise" : "");
    log.push_back(line);
    if (params_.log) params_.log(runs_root_.filename().string() + ": " + line);
    return out;
  }

  fs::path run_dir() const {
    return RunPaths::locate(runs_root_, params_.generate.contract.name,
                            params_.generate.impl_spec, params_.generate.seed).root();
  }

 private:
  const ResumeCheckParams& params_;
  ops::OpSetPtr candidate_;
  fs::path runs_root_;
};

// ATEN_CPU_CAPABILITY's value for the capability `numerics` records as in use ("AVX2" ->
// "avx2"): setting it changes the recorded environment and never the kernels.
std::string capability_in_use(const json& numerics) {
  const std::string used = numerics.is_object() && numerics.contains("cpu")
                               ? numerics["cpu"].value("aten_capability", "")
                               : "";
  if (used == "AVX512") return "avx512";
  if (used == "AVX2") return "avx2";
  return "default";
}

// Sets an environment variable for one scope, restoring its previous state.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedVariable() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

std::string ResumeCheckParams::describe() const {
  std::ostringstream out;
  out << generate.describe() << "preempt_after: " << preempt_after
      << "\npreempt_every: " << preempt_every << "\n";
  return out.str();
}

ResumeCheckResult run_resume_check(const ResumeCheckParams& p, const ops::OpSetPtr& candidate) {
  const GenerateParams& g = p.generate;
  const ops::ImplSpec spec = ops::ImplSpec::parse(g.impl_spec);
  // 1. The scratch directory, rebuilt; a preset model is shared through a link to the runs
  //    directory's models/ so that every scenario uses the same weights.
  ResumeCheckResult result;
  result.scratch = g.runs_root / "resume-check" /
                   (g.contract.name + "@" + impl_dir_name(spec.text) + "@seed-" +
                    std::to_string(g.seed));
  std::error_code error;
  if (!io::remove_tree(result.scratch)) throw_input(result.scratch.string(), "cannot clear it");
  fs::create_directories(result.scratch, error);
  if (error) throw_input(result.scratch.string(), "cannot create: " + error.message());
  materialise_model(g.contract, g.runs_root);
  auto scenario_root = [&](const std::string& name) {
    const fs::path root = result.scratch / name;
    fs::create_directories(root);
    if (g.contract.model_is_builtin()) {
      fs::create_directory_symlink(fs::absolute(g.runs_root / "models"), root / "models");
    }
    return root;
  };

  // 2. The reference.
  ResumeScenario reference{"uninterrupted", "one generate call, start to end", {}, {}, false, ""};
  Driver ref_driver(p, candidate, scenario_root(reference.name));
  const GenerateResult ref = ref_driver.invoke(-1, false, reference.invocations).first;
  result.num_calls = ref.num_calls;
  const auto ref_tree = tree_digests(ref_driver.run_dir());
  reference.files = compare_trees(ref_tree, ref_tree);
  reference.passed = ref.computed == ref.num_calls;
  if (!reference.passed) reference.problem = "the uninterrupted run did not compute every call";
  result.scenarios.push_back(reference);

  const int calls = ref.num_calls;
  const int after = p.preempt_after >= 0 ? p.preempt_after : std::max(1, calls / 2);
  const int every = p.preempt_every > 0 ? p.preempt_every : std::max(1, calls / 6);
  // Records a scenario: `tree` compared file by file with `expected`, and `ok` (else `problem`).
  auto finish_trees = [&](ResumeScenario& s, const std::map<std::string, std::string>& expected,
                          const std::map<std::string, std::string>& tree, bool ok,
                          const std::string& problem) {
    s.files = compare_trees(expected, tree);
    const bool identical = std::all_of(s.files.begin(), s.files.end(),
                                       [](const ComparedFile& f) { return f.identical(); });
    s.passed = ok && identical;
    s.problem = !ok ? problem : identical ? "" : "files differ from the uninterrupted run";
    result.scenarios.push_back(s);
  };
  auto finish = [&](ResumeScenario& s, const Driver& d, bool ok, const std::string& problem) {
    finish_trees(s, ref_tree, tree_digests(d.run_dir()), ok, problem);
  };

  // 3. Stopped once, resumed.
  {
    ResumeScenario s{"preempted-once",
                     "stopped after " + std::to_string(after) + " computed steps, resumed",
                     {}, {}, false, ""};
    Driver d(p, candidate, scenario_root(s.name));
    const bool stopped = d.invoke(after, false, s.invocations).second;
    const GenerateResult r = d.invoke(-1, false, s.invocations).first;
    const bool ok = (stopped || after >= calls) && r.replayed == std::min(after, calls);
    finish(s, d, ok, "the resume replayed " + std::to_string(r.replayed) + " steps, expected " +
                         std::to_string(std::min(after, calls)));
  }

  // 4. Stopped repeatedly.
  {
    ResumeScenario s{"preempted-repeatedly",
                     "stopped after every " + std::to_string(every) + " computed steps",
                     {}, {}, false, ""};
    Driver d(p, candidate, scenario_root(s.name));
    int stops = 0;
    bool ok = true;
    for (int guard = 0; guard <= calls + 1; ++guard) {
      auto [r, stopped] = d.invoke(every, false, s.invocations);
      if (!stopped) break;
      ++stops;
      if (r.computed != every) ok = false;
    }
    finish(s, d, ok && (every >= calls || stops >= 1),
           "a stopped invocation computed a different number of steps than asked");
  }

  // 5. Nothing left to compute: the finished reference again.
  {
    ResumeScenario s{"nothing-left", "the finished uninterrupted run generated again", {}, {},
                     false, ""};
    const GenerateResult r = ref_driver.invoke(-1, false, s.invocations).first;
    finish(s, ref_driver, r.computed == 0 && r.replayed == calls,
           "generating a finished run computed " + std::to_string(r.computed) + " steps");
  }

  // 6. --verify-last-step on a partial run and on the finished one.
  {
    ResumeScenario s{"verify-last-step",
                     "stopped after " + std::to_string(after) +
                         " computed steps, resumed with --verify-last-step, verified again at "
                         "the end",
                     {}, {}, false, ""};
    Driver d(p, candidate, scenario_root(s.name));
    d.invoke(after, false, s.invocations);
    const GenerateResult r1 = d.invoke(-1, true, s.invocations).first;
    const GenerateResult r2 = d.invoke(-1, true, s.invocations).first;
    finish(s, d, r1.verified_last_step && r2.verified_last_step && r2.computed == 0,
           "--verify-last-step did not verify the last saved step");
  }

  // 7. Resumed under a changed numerics environment that leaves the kernels as they were:
  //    the automatic check must find the recomputed steps bitwise equal and continue as a
  //    verified segment 1; every output file is then identical, and only the sidecars (which
  //    name their segment) and segments.json differ.
  {
    ResumeScenario s{"changed-environment",
                     "stopped after " + std::to_string(after) +
                         " computed steps, resumed with ATEN_CPU_CAPABILITY set to the "
                         "capability already in use (the recorded environment changes, the "
                         "kernels do not)",
                     {}, {}, false, ""};
    Driver d(p, candidate, scenario_root(s.name));
    d.invoke(after, false, s.invocations);
    std::string problem;
    GenerateResult r;
    try {
      const json numerics =
          read_manifest(RunPaths(d.run_dir()).manifest()).environment.value("numerics", json());
      const ScopedVariable changed("ATEN_CPU_CAPABILITY", capability_in_use(numerics));
      r = d.invoke(-1, false, s.invocations).first;
      s.invocations.back() += ", numerics " + r.numerics_check + " (" + r.numerics_changes + ")";
    } catch (const InputError& e) {
      problem = std::string("the resume was refused: ") + e.what();
    }
    std::map<std::string, std::string> tree = tree_digests(d.run_dir());
    std::map<std::string, std::string> expected = ref_tree;
    // Sidecars and segments.json are checked by content below rather than by bytes.
    for (auto* t : {&tree, &expected}) {
      std::erase_if(*t, [](const auto& item) {
        return item.first == "segments.json" ||
               (item.first.rfind("steps/", 0) == 0 && item.first.ends_with(".json"));
      });
    }
    const int first_new = std::min(after, calls);
    if (problem.empty() && first_new < calls) {
      if (r.numerics_check != "verified" || r.segment != 1) {
        problem = "the resume's numerics check was '" + r.numerics_check + "' (segment " +
                  std::to_string(r.segment) + "), expected 'verified' (segment 1)";
      }
      const RunPaths run(d.run_dir());
      for (int i = 0; i < calls && problem.empty(); ++i) {
        const StepRecord record =
            parse_sidecar(io::read_file(run.step_sidecar(i)), run.step_sidecar(i).string());
        if (record.segment != (i < first_new ? 0 : 1)) {
          problem = run.step_sidecar(i).string() + " names segment " +
                    std::to_string(record.segment) + ", expected " +
                    std::to_string(i < first_new ? 0 : 1);
        }
      }
    }
    finish_trees(s, expected, tree, problem.empty(), problem);
  }

  result.passed = std::all_of(result.scenarios.begin(), result.scenarios.end(),
                              [](const ResumeScenario& s) { return s.passed; });
  return result;
}

json ResumeCheckResult::to_json() const {
  json scenarios_json = json::array();
  for (const auto& s : scenarios) {
    json files = json::array();
    for (const auto& f : s.files) {
      files.push_back({{"path", f.path},
                       {"reference_sha256", f.reference_digest},
                       {"sha256", f.digest},
                       {"identical", f.identical()}});
    }
    scenarios_json.push_back({{"name", s.name},
                              {"description", s.description},
                              {"invocations", s.invocations},
                              {"passed", s.passed},
                              {"problem", s.problem},
                              {"files", files}});
  }
  return {{"scratch", scratch.string()},
          {"num_calls", num_calls},
          {"passed", passed},
          {"scenarios", scenarios_json}};
}

std::string ResumeCheckResult::to_table() const {
  std::ostringstream out;
  for (const auto& s : scenarios) {
    out << "== " << s.name << ": " << s.description << "\n";
    for (std::size_t i = 0; i < s.invocations.size(); ++i) {
      out << "   generate #" << (i + 1) << ": " << s.invocations[i] << "\n";
    }
    if (s.name == "uninterrupted") {
      out << "   reference: " << s.files.size() << " files\n";
      continue;
    }
    for (const auto& f : s.files) {
      const std::string verdict = f.identical()           ? "identical"
                                  : f.digest.empty()      ? "MISSING"
                                  : f.reference_digest.empty() ? "EXTRA"
                                                               : "DIFFERS";
      out << "   " << verdict << "  " << (f.digest.empty() ? f.reference_digest : f.digest).substr(0, 16)
          << "  " << f.path << "\n";
    }
  }
  out << "\n";
  for (const auto& s : scenarios) {
    char line[200];
    std::snprintf(line, sizeof line, "%-22s %s%s%s\n", s.name.c_str(), s.passed ? "pass" : "FAIL",
                  s.problem.empty() ? "" : ": ", s.problem.c_str());
    out << line;
  }
  out << "resume-check " << (passed ? "passed" : "FAILED") << ": " << num_calls
      << " calls; every scenario compared file by file with the uninterrupted run\n";
  return out.str();
}

}  // namespace h3p::runs
