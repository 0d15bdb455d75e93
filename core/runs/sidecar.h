#pragma once
// The step sidecar (steps/NNN.json) as text: its record and the strict parser StepStore::load
// applies before anything else. Torch-free, so the parser can be fuzzed on its own.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace h3p::runs {

// The sidecar format this build writes and reads.
inline constexpr int kSidecarFormatVersion = 1;

// Largest sidecar accepted, in bytes (the ones written are a few hundred bytes).
inline constexpr std::size_t kMaxSidecarBytes = 64 * 1024;

// One sidecar's content.
struct StepRecord {
  int step = 0;
  std::string input_digest;
  std::string file_digest;
  std::string previous_digest;
  bool inputs_saved = false;
  int segment = 0;  // numerics segment that computed the step (absent in older sidecars: 0)
};

// What a sidecar must name; an empty optional accepts any step >= 0 / any file name.
struct SidecarExpectation {
  std::optional<int> step;
  std::optional<std::string> file;
};

// Parses and validates one sidecar's bytes: at most kMaxSidecarBytes, canonical form (exactly
// what StepStore writes), known fields only, format_version, step and file as expected,
// lower-case hex SHA-256 digests, inputs_saved a boolean, segment (optional) a step-sized
// unsigned integer. Throws InputError "<context>: ..."
// (field named) on any violation; reads no file.
StepRecord parse_sidecar(std::string_view text, const std::string& context,
                         const SidecarExpectation& expect = {});

}  // namespace h3p::runs
