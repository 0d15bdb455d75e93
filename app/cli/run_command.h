#pragma once
// Parsing and running one command line, shared by the h3parity front and h3parity-engine:
// failures map to the exit codes of ARCHITECTURE.md (0 ok, 1 failed check, 2 bad input,
// 3 preempted).
#include "app/cli/commands.h"

namespace h3p::cli {

// Adds --progress to `app` (stored in global.progress).
void add_global_options(CLI::App& app, GlobalOptions& global);

// Parses argv into `app` (whose callbacks fill `action`), runs the action and returns the exit
// code; usage errors exit 2 after CLI11's message, --help exits 0.
int parse_and_run(CLI::App& app, Action& action, int argc, char** argv);

}  // namespace h3p::cli
