// `h3parity adopt`: re-bind a run made by an older binary to this one when every model-path
// file the run recorded is byte-identical in this binary; refuse naming the first that is not.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "core/io/atomic_file.h"
#include "core/runs/adopt.h"

namespace h3p::cli {

void add_adopt(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    runs::AdoptParams params;
    std::string json;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "adopt",
      "re-bind a run made by an older binary to this one: the weights and config must be the "
      "run's and every recorded model-path source file byte-identical to this binary's; the "
      "manifest's identity and the sidecar chain are re-written (journaled). Refuses naming "
      "the first differing file (exit 1). A plugin run is re-bound only to a plugin with the "
      "recorded bytes found at another place (plugin:NAME on another H3P_PLUGIN_PATH); a "
      "plugin with other bytes never continues a run: restore it, or generate into another "
      "--runs directory");
  cmd->add_option("run", opt->params.run, "run directory")->required();
  cmd->add_option("--model", opt->params.model,
                  "model directory (default: the one the manifest records)");
  cmd->add_flag("--dry-run", opt->params.dry_run, "check only; write nothing");
  cmd->add_option("--json", opt->json, "write the result here");
  cmd->callback([&action, opt] {
    action = [opt] {
      const runs::AdoptResult r = runs::adopt_run(opt->params);
      if (r.resumed_journal) {
        std::printf("%s: finished an adopt that had been interrupted\n", r.run.string().c_str());
      }
      if (r.already_bound) {
        std::printf("%s: already bound to this binary (sources %s); nothing to do\n",
                    r.run.string().c_str(), r.to_sources_digest.c_str());
      } else {
        std::printf("%s: %s from sources %s to %s; %zu model-path file(s) new in this binary, "
                    "every recorded one byte-identical; %d sidecar(s) re-chained\n",
                    r.run.string().c_str(), r.written ? "re-bound" : "would re-bind (dry run)",
                    r.from_sources_digest.c_str(), r.to_sources_digest.c_str(),
                    r.added_files.size(), r.rechained_steps);
        for (const auto& f : r.added_files) std::printf("  new: %s\n", f.c_str());
        if (r.plugin_rebound) {
          std::printf("  plugin: the same bytes found at another place; the manifest records "
                      "the new place (environment.adopted.plugin_moved_from keeps the old)\n");
        }
      }
      if (!opt->json.empty()) {
        const nlohmann::json j = {{"run", r.run.string()},
                                  {"already_bound", r.already_bound},
                                  {"resumed_journal", r.resumed_journal},
                                  {"from_sources_digest", r.from_sources_digest},
                                  {"to_sources_digest", r.to_sources_digest},
                                  {"added_files", r.added_files},
                                  {"rechained_steps", r.rechained_steps},
                                  {"plugin_rebound", r.plugin_rebound},
                                  {"written", r.written}};
        io::atomic_write_text(opt->json, j.dump(2) + "\n");
      }
      return 0;
    };
  });
  (void)global;
}

}  // namespace h3p::cli
