#pragma once
// resume-check: the same seed generated several ways must give byte-identical run files.
// Under <runs>/resume-check/<contract>@<impl dir>@seed-<n>/ (removed and rebuilt each time) it
// generates the seed
//   uninterrupted          once, start to end (the reference)
//   preempted-once         stopped once at a safe point after `preempt_after` computed steps,
//                          then resumed to the end
//   preempted-repeatedly   stopped after every `preempt_every` computed steps, resumed each time
//   nothing-left           the finished reference generated again: nothing may be computed and
//                          no file may change
//   verify-last-step       stopped once, resumed with --verify-last-step (the last saved call is
//                          recomputed and must match bitwise), then verified again when finished
//   changed-environment    stopped once, resumed with ATEN_CPU_CAPABILITY set to the capability
//                          in use: the numerics environment differs, the kernels do not, so the
//                          automatic check must pass and the run continue as segment 1 (its
//                          sidecars name it; sidecars and segments.json are checked by content)
// Preemption is simulated in-process with the generation loop's stop flag, which is exactly
// what SIGTERM/SIGUSR1 set. Every file of every run directory (the lock file excluded) is
// compared with the reference by SHA-256 and listed.
#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ops/op_set.h"
#include "core/runs/generation.h"

namespace h3p::runs {

struct ResumeCheckParams {
  GenerateParams generate;  // contract, impl spec, seed, runs root, device, save-inputs policy
  int preempt_after = -1;   // computed steps before the single stop; -1: half the calls
  int preempt_every = -1;   // computed steps per invocation when stopped repeatedly; -1: calls/6
  std::function<void(const std::string&)> log;        // one line per invocation
  const std::atomic<bool>* stop_requested = nullptr;  // a real stop: ends the check (Preempted)
  // One "key: value" per line.
  std::string describe() const;
};

// One compared file (path relative to the run directory).
struct ComparedFile {
  std::string path;
  std::string reference_digest;  // empty when the reference lacks the file
  std::string digest;            // empty when this run lacks the file
  bool identical() const { return !digest.empty() && digest == reference_digest; }
};

struct ResumeScenario {
  std::string name;
  std::string description;
  std::vector<std::string> invocations;  // "computed 9, replayed 0, stopped" per generate call
  std::vector<ComparedFile> files;
  bool passed = false;  // every file identical and every expectation of the scenario met
  std::string problem;  // why not, when not passed
};

struct ResumeCheckResult {
  std::filesystem::path scratch;
  int num_calls = 0;
  std::vector<ResumeScenario> scenarios;
  bool passed = false;
  nlohmann::json to_json() const;
  // Every compared file of every scenario with its verdict, then one line per scenario.
  std::string to_table() const;
};

// Runs every scenario. Throws InputError for bad input (as generate would), Preempted when
// `stop_requested` is set; a difference is reported in the result, not thrown.
ResumeCheckResult run_resume_check(const ResumeCheckParams& params,
                                   const ops::OpSetPtr& candidate);

}  // namespace h3p::runs
