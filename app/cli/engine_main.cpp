// h3parity-engine: every command of h3parity, with LibTorch. The h3parity front runs `compare`
// of clips itself and executes this binary (same arguments, same process) for everything else.
#include <c10/util/Exception.h>

#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/run_command.h"
#include "core/common/cpu_block_pool.h"
#include "core/common/error.h"
#include "core/common/host_memory.h"
#include "core/metrics/compare/step_series.h"

int main(int argc, char** argv) {
  using namespace h3p;
  keep_freed_host_memory();
  try {
    install_cpu_block_pool();  // under ASan, or with H3P_CPU_POOL=1
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  CLI::App app{"h3parity: generate MiniMax-H3 with a provider and a candidate implementation, "
               "resume bit-exactly, and measure where they drift"};
  app.name("h3parity");
  cli::GlobalOptions global;
  global.step_series = compare::add_step_series;
  cli::add_global_options(app, global);
  cli::Action action;
  cli::add_demo(app, action, global);
  cli::add_init_model(app, action, global);
  cli::add_generate(app, action, global);
  cli::add_call(app, action, global);
  cli::add_schedule(app, action, global);
  cli::add_ablate(app, action, global);
  cli::add_bench(app, action, global);
  cli::add_decode(app, action, global);
  cli::add_compare(app, action, global);
  cli::add_export(app, action, global);
  cli::add_report(app, action, global);
  cli::add_calibrate(app, action, global);
  cli::add_gate(app, action, global);
  cli::add_resume_check(app, action, global);
  cli::add_adopt(app, action, global);
  cli::add_slurm(app, action, global);
  cli::add_import(app, action, global);
  cli::add_plugin_contract(app, action, global);
  cli::add_preflight(app, action, global);
  cli::add_bundle(app, action, global);
  // LibTorch's errors carry a C++ backtrace in what(); report the message alone.
  cli::Action torch_errors = [&action]() -> int {
    try {
      return action ? action() : 0;
    } catch (const c10::Error& e) {
      throw InputError(e.what_without_backtrace());
    }
  };
  return cli::parse_and_run(app, torch_errors, argc, argv);
}
