// Fuzz target: a step sidecar (steps/NNN.json) through parse_sidecar, the validation
// StepStore::load applies before it compares the step and file name. An accepted sidecar
// parses the same way twice and holds well-formed digests.
#include <cstdint>
#include <cstdlib>

#include "core/common/error.h"
#include "core/runs/identity.h"
#include "core/runs/sidecar.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h3p::runs;
  const auto text = h3p::fuzz::as_text(data, size);
  try {
    const StepRecord record = parse_sidecar(text, "run/steps/000.json");
    if (record.step < 0 || record.segment < 0) std::abort();
    for (const auto* digest : {&record.file_digest, &record.input_digest, &record.previous_digest})
      if (!is_sha256_hex(*digest)) std::abort();
    const StepRecord again = parse_sidecar(text, "run/steps/000.json");
    if (again.step != record.step || again.file_digest != record.file_digest ||
        again.input_digest != record.input_digest ||
        again.previous_digest != record.previous_digest ||
        again.inputs_saved != record.inputs_saved || again.segment != record.segment)
      std::abort();
  } catch (const h3p::InputError&) {
    // Refused with a message: expected for most inputs.
  }
  return 0;
}
