#pragma once
// The subcommands of `h3parity`. Each add_* registers one subcommand on `app`; when it is the
// one chosen, its callback stores in `action` the work to run after parsing. An action
// returns the exit code; errors propagate as exceptions (mapped in main.cpp).
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "core/metrics/compare/run_compare.h"

namespace h3p::cli {

using Action = std::function<int()>;

// Options every command shares, and what the executable running them can do.
struct GlobalOptions {
  std::string progress = "auto";  // auto | json | none
  // compare's per-step series: set by h3parity-engine (LibTorch); empty in the front.
  compare::StepSeries step_series;
  // Set by the front: re-executes this command line in h3parity-engine; does not return.
  std::function<void()> hand_over;
};

void add_init_model(CLI::App& app, Action& action, const GlobalOptions& global);
void add_call(CLI::App& app, Action& action, const GlobalOptions& global);
void add_schedule(CLI::App& app, Action& action, const GlobalOptions& global);
void add_generate(CLI::App& app, Action& action, const GlobalOptions& global);
void add_demo(CLI::App& app, Action& action, const GlobalOptions& global);
void add_ablate(CLI::App& app, Action& action, const GlobalOptions& global);
void add_bench(CLI::App& app, Action& action, const GlobalOptions& global);
void add_decode(CLI::App& app, Action& action, const GlobalOptions& global);
void add_compare(CLI::App& app, Action& action, const GlobalOptions& global);
void add_export(CLI::App& app, Action& action, const GlobalOptions& global);
void add_report(CLI::App& app, Action& action, const GlobalOptions& global);
void add_gate(CLI::App& app, Action& action, const GlobalOptions& global);
void add_resume_check(CLI::App& app, Action& action, const GlobalOptions& global);
void add_adopt(CLI::App& app, Action& action, const GlobalOptions& global);
void add_slurm(CLI::App& app, Action& action, const GlobalOptions& global);
void add_calibrate(CLI::App& app, Action& action, const GlobalOptions& global);
void add_import(CLI::App& app, Action& action, const GlobalOptions& global);
void add_plugin_contract(CLI::App& app, Action& action, const GlobalOptions& global);
void add_preflight(CLI::App& app, Action& action, const GlobalOptions& global);
void add_bundle(CLI::App& app, Action& action, const GlobalOptions& global);

}  // namespace h3p::cli
