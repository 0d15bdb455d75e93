// Fuzz target: a run's manifest.json (parse_json_text + manifest_from_json, i.e.
// read_manifest without the file read). An accepted manifest must round-trip through
// manifest_to_json and be compatible with itself.
#include <cstdint>
#include <cstdlib>

#include "core/common/error.h"
#include "core/contract/json_text.h"
#include "core/runs/manifest.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h3p::runs;
  const std::string context = "run/manifest.json";
  try {
    const auto json = h3p::contract::parse_json_text(h3p::fuzz::as_text(data, size), context);
    const Manifest manifest = manifest_from_json(json, context);
    const Manifest again = manifest_from_json(manifest_to_json(manifest), context);
    if (!(again == manifest)) std::abort();
    check_compatible(manifest, again, context);
  } catch (const h3p::InputError&) {
    // Refused with a message: expected for most inputs.
  }
  return 0;
}
