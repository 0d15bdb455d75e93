// `h3parity import`: a run from call files recorded by another pipeline (diffusers), replayed
// through the scheduler and checked input by input (core/runs/import_run.h).
#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/progress.h"
#include "core/runs/import_run.h"

namespace h3p::cli {

void add_import(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string calls, contract, runs, label, model, device = "cpu";
    uint64_t seed = 0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "import", "a run from call files recorded by another pipeline (NNN.safetensors, one per "
                "step), replayed through the scheduler from the contract's initial state and "
                "checked bitwise; written as RUNS/<contract>/import@<label>/seed-<n>");
  cmd->add_option("--calls", opt->calls, "directory of call files 000.safetensors, 001...")
      ->required();
  cmd->add_option("--contract", opt->contract, "contract JSON the calls were made for")
      ->required();
  cmd->add_option("--seed", opt->seed, "the seed (one of the contract's)")->required();
  cmd->add_option("--runs", opt->runs, "runs directory")->required();
  cmd->add_option("--label", opt->label,
                  "names the import (impl spec import:<label>): letters, digits, . _ -")
      ->required();
  cmd->add_option("--model", opt->model, "model directory (default: the contract's model)");
  cmd->add_option("--device", opt->device, "where the final latents are decoded: cpu | cuda[:N]")
      ->capture_default_str();
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      runs::ImportParams params;
      params.contract = contract::load_contract(opt->contract);
      params.calls_dir = opt->calls;
      params.seed = opt->seed;
      params.runs_root = opt->runs;
      params.label = opt->label;
      params.model = opt->model;
      params.device = opt->device;
      ProgressBar bar("import", parse_progress_mode(global.progress));
      params.on_step = [&](int step, int num_calls) {
        bar.update(static_cast<double>(step + 1) / num_calls,
                   "checked call " + std::to_string(step + 1) + "/" + std::to_string(num_calls));
      };
      params.on_decode = [&](const std::string& what) {
        bar.finish();
        std::printf("%s\n", what.c_str());
        std::fflush(stdout);
      };
      const runs::ImportResult r = runs::import_run(params);
      bar.finish();
      std::printf("%s: imported %d calls from %s, every input equal to the replayed state%s\n",
                  r.run_dir.string().c_str(), r.num_calls, opt->calls.c_str(),
                  r.decoded ? "; decoded" : "; not decoded (the model has no vae/)");
      return 0;
    };
  });
}

}  // namespace h3p::cli
