#pragma once
// The candidate-plugin options shared by the commands that run impl specs.
#include <CLI/CLI.hpp>

namespace h3p::cli {

// Adds --check-plugin to `cmd`: every plugin primitive's output gets guard bytes and a NaN
// pre-fill, its inputs are compared before and after, and NaN/Inf is checked on every device
// (H3P_CHECK_PLUGIN=1 does the same for any command).
void add_check_plugin_flag(CLI::App* cmd);

}  // namespace h3p::cli
