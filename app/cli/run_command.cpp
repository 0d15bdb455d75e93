#include "app/cli/run_command.h"

#include <cstdio>
#include <exception>

#include "core/common/error.h"

namespace h3p::cli {

void add_global_options(CLI::App& app, GlobalOptions& global) {
  app.require_subcommand(1);
  app.add_option("--progress", global.progress, "progress output: auto (a bar on a terminal), "
                 "json (one JSON line per update on stderr), none")
      ->capture_default_str();
}

int parse_and_run(CLI::App& app, Action& action, int argc, char** argv) {
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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}

}  // namespace h3p::cli
