// `h3parity resume-check`: the same seed uninterrupted, stopped once, stopped repeatedly,
// resumed with nothing left and with --verify-last-step; every file compared byte for byte.
#include <algorithm>
#include <cstdio>

#include "app/cli/plugin_options.h"
#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/stop_signals.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/runs/resume_check.h"

namespace h3p::cli {

void add_resume_check(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string contract, impl = "provider", runs, device = "cpu", save_inputs = "every", json,
                gate;
    int64_t seed = -1, seed_index = -1;
    int preempt_after = -1, preempt_every = -1;
    bool skip_gate = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "resume-check",
      "generate one seed uninterrupted, preempted once, preempted repeatedly, resumed with "
      "nothing left to compute and with --verify-last-step (under RUNS/resume-check/), and list "
      "every compared file with its byte identity; exit 1 on any difference");
  add_check_plugin_flag(cmd);
  cmd->add_option("--contract", opt->contract, "contract JSON")->required();
  cmd->add_option("--impl", opt->impl, "impl spec")->capture_default_str();
  auto* seed = cmd->add_option("--seed", opt->seed, "seed (one of the contract's seeds)");
  auto* index = cmd->add_option("--seed-index", opt->seed_index,
                                "index into the contract's seeds (for Slurm arrays)");
  seed->excludes(index);
  cmd->add_option("--runs", opt->runs, "runs directory (the check writes under resume-check/)")
      ->required();
  cmd->add_option("--device", opt->device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--save-inputs", opt->save_inputs, "every | first | none")->capture_default_str();
  cmd->add_option("--preempt-after", opt->preempt_after,
                  "computed steps before the single stop (default: half the calls)");
  cmd->add_option("--preempt-every", opt->preempt_every,
                  "computed steps per invocation when stopped repeatedly (default: calls/6)");
  auto* gate = cmd->add_option("--gate", opt->gate, "gate result (gated contracts)");
  cmd->add_flag("--skip-gate", opt->skip_gate, "start without a passed gate")->excludes(gate);
  cmd->add_option("--json", opt->json, "write every scenario and compared file here");
  cmd->callback([&action, &global, opt] {
    action = [opt] {
      runs::ResumeCheckParams p;
      runs::GenerateParams& g = p.generate;
      g.contract = contract::load_contract(opt->contract);
      const auto& seeds = g.contract.seeds;
      if (opt->seed_index >= 0) {
        if (opt->seed_index >= static_cast<int64_t>(seeds.size())) {
          throw InputError("--seed-index " + std::to_string(opt->seed_index) + ": " +
                           opt->contract + " has " + std::to_string(seeds.size()) + " seeds");
        }
        g.seed = seeds[static_cast<std::size_t>(opt->seed_index)];
      } else if (opt->seed >= 0) {
        g.seed = static_cast<uint64_t>(opt->seed);
        if (std::find(seeds.begin(), seeds.end(), g.seed) == seeds.end()) {
          throw InputError("--seed " + std::to_string(opt->seed) + ": not among the seeds of " +
                           opt->contract);
        }
      } else {
        throw InputError("resume-check: give --seed or --seed-index");
      }
      g.impl_spec = opt->impl;
      g.runs_root = opt->runs;
      g.device = opt->device;
      g.fused_candidate = fused_candidate_call();
      g.save_inputs = runs::parse_save_inputs(opt->save_inputs);
      g.gate_file = opt->gate;
      g.skip_gate = opt->skip_gate;
      p.preempt_after = opt->preempt_after;
      p.preempt_every = opt->preempt_every;
      p.stop_requested = &install_stop_signals();
      p.log = [](const std::string& line) { std::fprintf(stderr, "resume-check: %s\n", line.c_str()); };
      const runs::ResumeCheckResult r = runs::run_resume_check(p, candidate_ops());
      std::printf("%s", r.to_table().c_str());
      if (!opt->json.empty()) io::atomic_write_text(opt->json, r.to_json().dump(2) + "\n");
      return r.passed ? 0 : 1;
    };
  });
  (void)global;
}

}  // namespace h3p::cli
