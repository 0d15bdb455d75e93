#include "core/runs/adopt.h"

// Re-binding and the chain. Each sidecar's previous_digest is the SHA-256 of the previous
// sidecar's bytes (of manifest.json for step 0), so a new manifest breaks the chain at step 0.
// adopt re-writes the chain: after verifying every saved step under the old manifest, it
// computes the new manifest text and, step by step, each sidecar with only previous_digest
// replaced (call files, their digests and input digests are untouched, so the chain still
// proves the same calls in the same order). All new texts, with the SHA-256 of every old and
// new file, go first into a journal (.adopt-journal.json, written atomically); then the
// manifest and the sidecars are replaced one by one (each atomically), and the journal is
// removed. A crash in between leaves the journal: the next adopt checks that every file is
// still either its old or its new version and finishes the job. The run lock is held
// throughout, so no generation runs meanwhile.

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/contract/json_text.h"
#include "core/io/atomic_file.h"
#include "core/io/sha256.h"
#include "core/model/config.h"
#include "core/runs/identity.h"
#include "core/ops/impl_spec.h"
#include "core/ops/plugin/plugin_library.h"
#include "core/runs/manifest.h"
#include "core/runs/run_lock.h"
#include "core/runs/run_paths.h"
#include "core/runs/run_reader.h"
#include "core/runs/sidecar.h"
#include "core/runs/step_store.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

constexpr int kJournalFormatVersion = 1;

fs::path journal_path(const RunPaths& paths) { return paths.root() / ".adopt-journal.json"; }

[[noreturn]] void refuse(const fs::path& manifest, const std::string& field,
                         const std::string& what) {
  throw CheckFailed(manifest.string() + ": field '" + field + "': " + what);
}

// One file the journal replaces: its path, the SHA-256 before and after, the new text.
struct Replacement {
  fs::path file;
  std::string old_digest, new_digest, text;
};

json journal_json(const std::vector<Replacement>& replacements, const RunPaths& paths) {
  json files = json::array();
  for (const auto& r : replacements) {
    files.push_back({{"file", fs::relative(r.file, paths.root()).generic_string()},
                     {"old_sha256", r.old_digest},
                     {"new_sha256", r.new_digest},
                     {"text", r.text}});
  }
  return {{"format_version", kJournalFormatVersion}, {"files", files}};
}

std::vector<Replacement> read_journal(const RunPaths& paths) {
  const fs::path file = journal_path(paths);
  const json value = contract::parse_json_text(io::read_file(file), file.string());
  if (!value.is_object() || value.value("format_version", 0) != kJournalFormatVersion ||
      !value.contains("files") || !value["files"].is_array()) {
    throw_input(file.string(), "not an adopt journal this build reads");
  }
  std::vector<Replacement> out;
  for (const auto& f : value["files"]) {
    Replacement r;
    try {
      r.file = paths.root() / f.at("file").get<std::string>();
      r.old_digest = f.at("old_sha256").get<std::string>();
      r.new_digest = f.at("new_sha256").get<std::string>();
      r.text = f.at("text").get<std::string>();
    } catch (const json::exception& e) {
      throw_input(file.string(), std::string("malformed entry: ") + e.what());
    }
    if (io::sha256_hex(r.text) != r.new_digest) {
      throw_input(file.string(), "entry for " + r.file.string() + " does not match its digest");
    }
    out.push_back(std::move(r));
  }
  return out;
}

// Replaces every file that is not yet at its new version; each must be old or new.
void apply_replacements(const std::vector<Replacement>& replacements, const RunPaths& paths) {
  for (const auto& r : replacements) {
    const std::string now = fs::exists(r.file) ? io::sha256_file(r.file) : std::string();
    if (now == r.new_digest) continue;
    if (now != r.old_digest) {
      throw_input(r.file.string(), "changed while being adopted (neither its old nor its new "
                                   "version); the run cannot be re-bound safely");
    }
    io::atomic_write_text(r.file, r.text);
  }
  std::error_code error;
  fs::remove(journal_path(paths), error);
  if (error) throw_input(journal_path(paths).string(), "cannot remove: " + error.message());
}

// The first recorded model-path file this binary lacks or has with other bytes.
void check_sources(const ModelIdentity& run, const fs::path& manifest) {
  const auto& current = compiled_model_sources();
  for (const auto& [path, sha] : run.source_files) {
    const std::string field = "identity.source_files['" + path + "']";
    auto it = current.find(path);
    if (it == current.end()) {
      refuse(manifest, field,
             "the run was made with this model-path file and this binary lacks it; refusing "
             "to adopt");
    }
    if (it->second != sha) {
      refuse(manifest, field,
             "differs from the file compiled into this binary (run " + sha + ", now " +
                 it->second + "); refusing to adopt");
    }
  }
}

}  // namespace

AdoptResult adopt_run(const AdoptParams& p) {
  const RunPaths paths(p.run);
  AdoptResult result;
  result.run = paths.root();
  if (!fs::exists(paths.manifest())) {
    throw_input(p.run.string(), "not a run directory (no manifest.json)");
  }
  RunLock lock = RunLock::acquire(paths.root());

  // 1. An interrupted adopt is finished first.
  if (fs::exists(journal_path(paths))) {
    const auto replacements = read_journal(paths);
    if (!p.dry_run) apply_replacements(replacements, paths);
    result.resumed_journal = true;
    result.written = !p.dry_run;
  }

  // 2. The model must be the one the run was made with.
  RunReader reader = RunReader::open(paths.root());
  const Manifest manifest = reader.manifest();
  const fs::path model_dir = p.model.empty() ? reader.model_dir() : p.model;
  if (model_dir.empty()) throw_input(paths.manifest().string(), "records no model; pass --model");
  const ModelIdentity now = compute_identity(model::resolve_transformer_dir(model_dir));
  if (manifest.identity.weights_digest != now.weights_digest) {
    refuse(paths.manifest(), "identity.weights_digest",
           "the model weights in " + model_dir.string() + " are not the run's (" +
               manifest.identity.weights_digest + ", now " + now.weights_digest + ")");
  }
  if (manifest.identity.config_digest != now.config_digest) {
    refuse(paths.manifest(), "identity.config_digest",
           "the model config in " + model_dir.string() + " is not the run's");
  }

  // 3. Every recorded model-path file byte-identical in this binary.
  check_sources(manifest.identity, paths.manifest());
  result.from_sources_digest = manifest.identity.sources_digest;
  result.to_sources_digest = now.sources_digest;
  for (const auto& [path, sha] : now.source_files) {
    if (!manifest.identity.source_files.contains(path)) result.added_files.push_back(path);
  }
  // 3b. A plugin run: the plugin the spec finds now must have the run's bytes; only its place
  //     may differ (a plugin:NAME found elsewhere on H3P_PLUGIN_PATH), and then it is re-bound.
  json plugin_now = manifest.plugin;
  if (!manifest.plugin.is_null()) {
    const auto current = ops::plugin::plugin_identity_for(ops::ImplSpec::parse(manifest.impl_spec));
    plugin_now = current ? ops::plugin::plugin_identity_to_json(*current) : json(nullptr);
    const auto recorded = ops::plugin::plugin_identity_from_json(manifest.plugin, paths.manifest().string());
    if (!current || !ops::plugin::same_plugin_bytes(recorded, *current)) {
      refuse(paths.manifest(), "plugin",
             "the plugin the run's spec loads now is not the bytes the run was made with (" +
                 (current ? ops::plugin::first_identity_difference(recorded, *current)
                          : std::string("no plugin")) +
                 "); its numerics may differ, so the run cannot continue under it: restore the "
                 "plugin (library sha256 " + recorded.library_sha256 +
                 ") or generate into another --runs directory");
    }
    result.plugin_rebound = plugin_now != manifest.plugin;
  }
  if (manifest.identity == now && !result.plugin_rebound) {
    result.already_bound = true;
    return result;
  }

  // 4. Every saved step verifies under the current manifest (chain, digests, structure).
  const StepStore store(paths);
  const int saved = store.count_complete();
  for (int i = 0; i < saved; ++i) store.load_saved(i);

  // 5. The new manifest and the re-written chain.
  Manifest adopted = manifest;
  adopted.identity = now;
  adopted.plugin = plugin_now;
  adopted.environment["adopted"] = {{"from_sources_digest", manifest.identity.sources_digest},
                                    {"added_files", result.added_files},
                                    {"rechained_steps", saved}};
  if (result.plugin_rebound) adopted.environment["adopted"]["plugin_moved_from"] = manifest.plugin;
  std::vector<Replacement> replacements;
  const std::string manifest_text = manifest_to_json(adopted).dump(2) + "\n";
  replacements.push_back({paths.manifest(), io::sha256_file(paths.manifest()),
                          io::sha256_hex(manifest_text), manifest_text});
  std::string previous = replacements.back().new_digest;
  for (int i = 0; i < saved; ++i) {
    const fs::path sidecar = paths.step_sidecar(i);
    const std::string text = io::read_file(sidecar);
    const StepRecord record = parse_sidecar(text, sidecar.string(), {i, std::nullopt});
    const std::string old_field = "\"previous_digest\": \"" + record.previous_digest + "\"";
    const std::size_t at = text.find(old_field);
    if (at == std::string::npos || text.find(old_field, at + 1) != std::string::npos) {
      throw_input(sidecar.string(), "previous_digest cannot be located for re-chaining");
    }
    std::string rewritten = text;
    rewritten.replace(at, old_field.size(), "\"previous_digest\": \"" + previous + "\"");
    parse_sidecar(rewritten, sidecar.string(), {i, std::nullopt});  // still canonical
    replacements.push_back({sidecar, io::sha256_hex(text), io::sha256_hex(rewritten), rewritten});
    previous = replacements.back().new_digest;
  }
  result.rechained_steps = saved;
  if (p.dry_run) return result;

  // 6. Journal, then the files, then the journal removed.
  io::atomic_write_text(journal_path(paths), journal_json(replacements, paths).dump(2) + "\n");
  apply_replacements(replacements, paths);
  result.written = true;
  return result;
}

}  // namespace h3p::runs
