#include "app/cli/plugin_options.h"

#include "core/ops/plugin/plugin_library.h"

namespace h3p::cli {

void add_check_plugin_flag(CLI::App* cmd) {
  cmd->add_flag_callback(
      "--check-plugin", [] { ops::plugin::set_check_mode(true); },
      "check every plugin primitive call: writes outside its output or into its inputs, "
      "elements left unwritten, NaN/Inf on every device (slower)");
}

}  // namespace h3p::cli
