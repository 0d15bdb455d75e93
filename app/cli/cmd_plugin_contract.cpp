// `h3parity plugin-contract`: the per-group contract of the candidate plugin ABI, and with
// --impl, what a plugin provides and the identity a run would record.
#include <cstdio>

#include "app/cli/commands.h"
#include "core/common/error.h"
#include "core/ops/impl_spec.h"
#include "core/ops/plugin/plugin_contract.h"
#include "core/ops/plugin/plugin_library.h"

namespace h3p::cli {

void add_plugin_contract(CLI::App& app, Action& action, const GlobalOptions&) {
  auto impl = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "plugin-contract",
      "print the candidate plugin contract (the primitives each operator group calls, their "
      "shapes, dtypes and where the provider rounds) as Markdown; with --impl, load that "
      "plugin and print what it provides and the identity a run records");
  cmd->add_option("--impl", *impl, "a plugin spec (plugin:PATH or python:FILE.py)");
  cmd->callback([&action, impl] {
    action = [impl] {
      if (impl->empty()) {
        std::fputs(ops::plugin::contract_markdown().c_str(), stdout);
        return 0;
      }
      const ops::ImplSpec spec = ops::ImplSpec::parse(*impl);
      if (spec.plugin.kind == ops::PluginKind::none) {
        throw InputError("plugin-contract --impl '" + *impl + "': not a plugin spec");
      }
      const auto plugin = ops::plugin::load_plugin(spec.plugin);
      std::printf("%s\n", ops::plugin::plugin_identity_to_json(plugin->identity()).dump(2).c_str());
      std::string missing;
      for (ops::Group g : ops::kAllGroups) {
        if (!plugin->provides(g)) missing += " " + std::string(ops::group_name(g));
      }
      if (!missing.empty()) {
        std::printf("not provided:%s (a spec names where they come from: %s)\n", missing.c_str(),
                    spec.with_override("rest=provider").c_str());
      }
      return 0;
    };
  });
}

}  // namespace h3p::cli
