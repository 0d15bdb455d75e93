// `h3parity gate`: numerical qualification of a candidate impl spec on one model, per block and
// for the full call, written to gate.json; generation of a gated contract requires it passed.
#include <cstdio>

#include "app/cli/plugin_options.h"
#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/progress.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/runs/gate.h"
#include "core/runs/generation.h"

namespace h3p::cli {

void add_gate(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    runs::GateParams params;
    std::string contract, runs, json;
    std::vector<std::string> tolerances;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "gate",
      "numerical qualification that generation requires: every block in isolation and the full "
      "call, candidate vs provider (tolerance class per dtype) and candidate vs an fp32 "
      "reference (at most m x the noise floor of the provider variants); writes gate.json");
  add_check_plugin_flag(cmd);
  auto* model = cmd->add_option("--model", opt->params.model,
                                "model directory (or its transformer/ directory)");
  auto* contract = cmd->add_option("--contract", opt->contract,
                                   "take the model from this contract (a preset materialises "
                                   "under --runs)");
  model->excludes(contract);
  cmd->add_option("--runs", opt->runs, "runs directory (with --contract; default: runs)");
  auto* inputs = cmd->add_option("--inputs", opt->params.inputs,
                                 "a call file whose inputs are used");
  auto* run = cmd->add_option("--run", opt->params.run,
                              "a provider run directory whose saved step --step is used");
  inputs->excludes(run);
  cmd->add_option("--step", opt->params.step, "the run's step (with --run)")->capture_default_str();
  cmd->add_option("--candidate", opt->params.candidate_spec, "candidate impl spec qualified")
      ->capture_default_str();
  cmd->add_option("--provider", opt->params.provider_spec, "provider impl spec compared against")
      ->capture_default_str();
  cmd->add_option("--variant", opt->params.variants,
                  "extra provider variant for the noise floor (repeatable), e.g. "
                  "provider:attention=math; the provider itself is always one");
  cmd->add_option("--multiplier,-m", opt->params.multiplier,
                  "m: the candidate's error against the fp32 reference may be at most m x the "
                  "noise floor")->capture_default_str();
  cmd->add_option("--tolerance", opt->tolerances,
                  "DTYPE=MAX candidate-vs-provider relative L2 for a stream dtype (repeatable; "
                  "defaults bf16=2e-2 fp16=4e-3 fp32=1e-4)");
  cmd->add_option("--device", opt->params.device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--out", opt->params.out, "gate.json to write (default: next to the model)");
  cmd->add_option("--json", opt->json, "also write the result here");
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      runs::GateParams p = opt->params;
      if (!opt->contract.empty()) {
        p.model = runs::materialise_model(contract::load_contract(opt->contract),
                                          opt->runs.empty() ? "runs" : opt->runs);
      }
      if (p.model.empty()) throw InputError("gate: give --model or --contract");
      for (const auto& t : opt->tolerances) {
        const auto eq = t.find('=');
        if (eq == std::string::npos) throw InputError("--tolerance " + t + ": expected DTYPE=MAX");
        try {
          p.tolerances[t.substr(0, eq)] = std::stod(t.substr(eq + 1));
        } catch (const std::exception&) {
          throw InputError("--tolerance " + t + ": not a number");
        }
      }
      ProgressBar bar("gate", parse_progress_mode(global.progress));
      p.progress = [&](double f, const std::string& what) { bar.update(f, what); };
      p.fused_candidate = fused_candidate_call();
      const runs::GateResult r = runs::run_gate(p, candidate_ops());
      bar.finish();
      std::printf("%s", r.to_table().c_str());
      std::printf("wrote %s\n", r.file.string().c_str());
      if (!opt->json.empty()) io::atomic_write_text(opt->json, r.to_json().dump(2) + "\n");
      return r.passed ? 0 : 1;
    };
  });
}

}  // namespace h3p::cli
