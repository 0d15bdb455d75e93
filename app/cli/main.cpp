// h3parity: the headless command. Parses arguments, runs one subcommand, maps failures to the
// exit codes of ARCHITECTURE.md: 0 ok, 1 failed check, 2 bad input, 3 preempted.
#include <cstdio>
#include <exception>

#include <c10/util/Exception.h>

#include "app/cli/commands.h"
#include "core/common/error.h"

int main(int argc, char** argv) {
  using namespace h3p;
  CLI::App app{"h3parity: generate MiniMax-H3 with a provider and a candidate implementation, "
               "resume bit-exactly, and measure where they drift"};
  app.require_subcommand(1);
  cli::GlobalOptions global;
  app.add_option("--progress", global.progress, "progress output: auto (a bar on a terminal), "
                 "json (one JSON line per update on stderr), none")
      ->capture_default_str();
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
  cli::add_gate(app, action, global);
  cli::add_resume_check(app, action, global);
  cli::add_adopt(app, action, global);
  cli::add_slurm(app, action, global);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return action ? action() : 0;
  } catch (const CheckFailed& e) {
    std::fprintf(stderr, "check failed: %s\n", e.what());
    return 1;
  } catch (const Preempted& e) {
    std::fprintf(stderr, "preempted: %s\n", e.what());
    return 3;
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what_without_backtrace());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
