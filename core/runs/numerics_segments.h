#pragma once
// Numerics segments of a run: the stretches of steps computed under one numerics environment
// (ops/numerics_env.h). Segment 0 is the manifest's environment.numerics; a resume under a
// different environment adds a segment, recorded in RUN/segments.json (written only then, so
// a run computed in one environment has no such file):
//   {"format_version": 1, "segments": [
//     {"segment": 0, "first_step": 0, "check": "initial", "numerics": {...}, "host": "..."},
//     {"segment": 1, "first_step": 30, "check": "verified" | "accepted" | "unchecked",
//      "changed": ["cpu.openblas_core", ...], "recomputed_steps": [0, 29],
//      "difference": null | {"step": 0, "output": "sample", "rel_l2": 1e-7, "max_abs": 3e-6},
//      "numerics": {...}, "host": "..."}]}
// A resume under a changed environment recomputes the first step of the current segment and the
// last saved step (recomputed_steps) and stops at the first difference.
// check: "verified" the recomputed steps were bitwise equal; "accepted" it differed and the
// resume was told to continue (--accept-new-numerics): the run is then mixed; "unchecked" no
// step had been saved, so there was nothing to recompute. Torch-free.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/runs/manifest.h"
#include "core/runs/run_paths.h"

namespace h3p::runs {

inline constexpr int kSegmentsFormatVersion = 1;

struct OutputDifference {
  int step = 0;        // the recomputed step that differed
  std::string output;  // "sample" or "audio_sample"
  double rel_l2 = 0;
  double max_abs = 0;

  bool operator==(const OutputDifference&) const = default;
};

struct NumericsSegment {
  int index = 0;
  int first_step = 0;
  std::string check = "initial";
  std::vector<std::string> changed;         // numerics fields that differ from the previous
  std::vector<int> recomputed_steps;        // saved steps recomputed before continuing
  std::optional<OutputDifference> difference;  // where the recomputed step differed
  nlohmann::json numerics;                  // null where the run did not record it
  std::string host;

  bool operator==(const NumericsSegment&) const = default;
};

// Parses and validates segments.json text: known fields only, format_version, consecutive
// indices from 0, segment 0 "initial" at step 0, first steps non-decreasing (a resume that
// stopped before computing a step may be followed by another at the same step), later segments
// not "initial", and segment 0's numerics equal to `manifest_numerics` (the manifest's
// environment.numerics, null where it has none). Throws InputError "<context>: field '<name>':
// <what>" (or "<context>: ..." for text that is not JSON); reads no file.
std::vector<NumericsSegment> parse_segments(std::string_view text, const std::string& context,
                                            const nlohmann::json& manifest_numerics);

// The run's segments: segments.json when present (parse_segments, against the manifest's
// environment.numerics), else the one segment of the manifest. Throws InputError naming the
// file and field.
std::vector<NumericsSegment> read_segments(const RunPaths& paths, const Manifest& manifest);

// Writes segments.json atomically.
void write_segments(const RunPaths& paths, const std::vector<NumericsSegment>& segments);

// The numerics-relevant fields (dotted paths, sorted) in which `now` differs from `run`:
// every field of the numerics environment except cpu.model. A run without a recorded
// environment (null) differs in "numerics".
std::vector<std::string> numerics_changes(const nlohmann::json& run, const nlohmann::json& now);

// "cpu.openblas_core: \"SkylakeX\" -> \"Haswell\"; env.OPENBLAS_CORETYPE: absent -> ..." for
// the listed fields.
std::string describe_changes(const nlohmann::json& run, const nlohmann::json& now,
                             const std::vector<std::string>& fields);

// True when a segment's steps continued although its recomputed step differed.
bool is_mixed(const std::vector<NumericsSegment>& segments);

// The first step of every segment, in order (StepStore::set_segments).
std::vector<int> segment_starts(const std::vector<NumericsSegment>& segments);

// The segment that computed `step` (the last whose first_step <= step).
int segment_of_step(const std::vector<NumericsSegment>& segments, int step);

// "steps 0-29: segment 0 (initial, host a); steps 30-48: segment 1 (accepted: changed
// cpu.openblas_core; step 29 differed in sample, rel L2 1.2e-07, host b)"; `saved` steps.
std::string describe_segments(const std::vector<NumericsSegment>& segments, int saved);

// "1.23e-07": three significant digits, for messages.
std::string short_figure(double value);

// A run's segments as the tools that read a finished run show them.
struct RunSegments {
  std::vector<NumericsSegment> segments;
  int saved = 0;       // consecutive saved steps (sidecars) from step 0
  bool mixed = false;  // is_mixed(segments)
  std::string text;    // describe_segments(segments, saved)
};
RunSegments read_run_segments(const RunPaths& paths, const Manifest& manifest);

// JSON forms (the records of segments.json), for reports.
nlohmann::json segment_to_json(const NumericsSegment& segment);

}  // namespace h3p::runs
