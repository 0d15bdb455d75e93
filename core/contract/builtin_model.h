#pragma once
// A model a contract names instead of a directory: "preset:<name>" (weights written to disk by
// init-model under RUNS/models) or "seeded:<name>" (configs and seed records there, the weights
// drawn on the run's device when loaded, never stored), each with optional
// "?layers=N&seed=S&decoders=D" settings.
#include <cstdint>
#include <optional>
#include <string>

namespace h3p::contract {

struct BuiltinModel {
  std::string preset;             // tiny | small | full-shape
  bool seeded = false;            // "seeded:" rather than "preset:"
  std::optional<int64_t> layers;  // transformer blocks (the preset's count when absent)
  std::optional<uint64_t> seed;   // weight seed (the preset's when absent)
  std::string decoders;           // tiny | released | none; empty: tiny

  // The directory it materialises in under RUNS/models: the preset name for a plain
  // "preset:<name>", otherwise "<seeded->name-l<layers>-s<seed>-<decoders>" with only the
  // settings given, e.g. "seeded-full-shape-l50-s7-released".
  std::string directory_name() const;
};

// True when `text` starts with "preset:" or "seeded:".
bool is_builtin_model(const std::string& text);

// Parses a built-in model; nullopt for a directory. Throws InputError "<what>" (the caller adds
// the file and field) for an unknown preset or decoders name, an unknown or repeated setting,
// or a value out of range (layers 1..1000).
std::optional<BuiltinModel> parse_builtin_model(const std::string& text);

}  // namespace h3p::contract
