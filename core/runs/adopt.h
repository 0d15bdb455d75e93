#pragma once
// adopt: re-binds a run made by an older binary to this one. A run is bound to the model-path
// sources compiled into the binary that made it (identity.source_files); a newer binary whose
// model-path files are byte-identical for every file the run recorded computes the same calls,
// so the run may continue under it. adopt checks that (weights and config digests equal, every
// recorded file present in this binary with the same SHA-256), verifies every saved step, and
// rewrites the manifest's identity to this binary's (environment.adopted records the change).
// Otherwise it refuses and names the first differing file. A plugin run is re-bound only to a
// plugin with the recorded bytes (library and sources) found at another place; a plugin with
// other bytes is refused with the way through (restore it, or a new runs directory).
#include <filesystem>
#include <string>
#include <vector>

namespace h3p::runs {

struct AdoptParams {
  std::filesystem::path run;    // the run directory
  std::filesystem::path model;  // the model directory; empty: the one the manifest records
  bool dry_run = false;         // check only; write nothing
};

struct AdoptResult {
  std::filesystem::path run;
  bool already_bound = false;     // the manifest already had this binary's identity
  bool resumed_journal = false;   // completed an adopt that had been interrupted
  std::string from_sources_digest, to_sources_digest;
  std::vector<std::string> added_files;  // model-path files this binary has and the run lacks
  int rechained_steps = 0;        // sidecars rewritten (their previous_digest)
  bool written = false;           // false for a dry run or an already bound run
  bool plugin_rebound = false;    // a plugin run whose plugin (same bytes) now lies elsewhere
};

// Throws CheckFailed "<manifest>: field 'identity.source_files['<path>']': ..." naming the
// first recorded model-path file that this binary lacks or has with other bytes, or the
// weights/config digest that differs; InputError for an unreadable, locked or corrupt run.
AdoptResult adopt_run(const AdoptParams& params);

}  // namespace h3p::runs
