// Fuzz target: a run's segments.json through parse_segments (read_segments without the file
// read), against a manifest that recorded no numerics (null) and against one that recorded
// kManifestNumerics. An accepted file holds what parse_segments promises (consecutive segments
// from an initial segment 0 at step 0, first steps non-decreasing, segment 0 the manifest's
// numerics), survives write form -> parse unchanged, and the report queries run on it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/common/error.h"
#include "core/runs/numerics_segments.h"
#include "fuzz/fuzz_util.h"

namespace {

using nlohmann::json;
using namespace h3p::runs;

// The manifest numerics of the seed corpus's two-segment file (corpus/segments/two_segments).
const json& manifest_numerics() {
  static const json numerics = json::parse(R"({
    "cpu": {"model": "Intel(R) Xeon(R) Gold 6230", "isa": ["avx", "avx2", "avx512f", "fma"],
            "aten_capability": "AVX512", "openblas_core": "SkylakeX", "threads": 8},
    "torch": {"version": "2.4.1",
              "build_sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    "device": "cpu", "attention": {"requested": "default", "selected": "math"},
    "kernels": {}, "env": {"OMP_NUM_THREADS": "8"}})");
  return numerics;
}

// The file as write_segments writes it.
std::string write_form(const std::vector<NumericsSegment>& segments) {
  json list = json::array();
  for (const NumericsSegment& s : segments) list.push_back(segment_to_json(s));
  return json{{"format_version", kSegmentsFormatVersion}, {"segments", list}}.dump(2) + "\n";
}

void check_accepted(const std::vector<NumericsSegment>& segments, const json& numerics) {
  static const std::string context = "run/segments.json";
  if (segments.empty() || segments[0].first_step != 0 || segments[0].check != "initial" ||
      segments[0].numerics != numerics)
    std::abort();
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const NumericsSegment& s = segments[i];
    if (s.index != static_cast<int>(i) || s.first_step < 0) std::abort();
    if (i > 0 && (s.first_step < segments[i - 1].first_step || s.check == "initial")) std::abort();
    if (s.difference && s.difference->step < 0) std::abort();
    for (const int step : s.recomputed_steps)
      if (step < 0) std::abort();
    // The step a segment starts at is computed by it or by a later one starting there too.
    const int at = segment_of_step(segments, s.first_step);
    if (at < s.index || segments[static_cast<std::size_t>(at)].first_step != s.first_step)
      std::abort();
    if (i > 0) {
      const auto changes = numerics_changes(segments[i - 1].numerics, s.numerics);
      (void)describe_changes(segments[i - 1].numerics, s.numerics, changes);
    }
    if (!numerics_changes(s.numerics, s.numerics).empty()) std::abort();
  }
  if (segment_starts(segments).size() != segments.size()) std::abort();
  // Written back and read again: the same segments (segment 0 keeps only what an initial
  // segment records).
  std::vector<NumericsSegment> again;
  try {
    again = parse_segments(write_form(segments), context, numerics);
  } catch (const h3p::InputError&) {
    std::abort();  // its own write form refused
  }
  if (again.size() != segments.size()) std::abort();
  for (std::size_t i = 0; i < again.size(); ++i) {
    if (segment_to_json(again[i]) != segment_to_json(segments[i])) std::abort();
    if (i > 0 && !(again[i] == segments[i])) std::abort();
  }
  for (const int saved : {0, 1, segments.back().first_step, segments.back().first_step + 1}) {
    if (describe_segments(segments, saved).empty()) std::abort();
  }
  (void)is_mixed(segments);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = h3p::fuzz::as_text(data, size);
  for (const json* numerics : {static_cast<const json*>(nullptr), &manifest_numerics()}) {
    const json manifest = numerics == nullptr ? json() : *numerics;
    try {
      check_accepted(parse_segments(text, "run/segments.json", manifest), manifest);
    } catch (const h3p::InputError&) {
      // Refused with a message: expected for most inputs.
    }
  }
  return 0;
}
