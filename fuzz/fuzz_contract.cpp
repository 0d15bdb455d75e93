// Fuzz target: the generation contract (parse_json_text + parse_contract, i.e. load_contract
// without the file read). An accepted contract must describe itself, have a digest, and
// survive the canonical round trip parse_contract(to_json(c)) == c.
#include <cstdint>
#include <cstdlib>

#include "core/common/error.h"
#include "core/contract/contract.h"
#include "core/contract/json_text.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h3p::contract;
  const std::filesystem::path source = "/contracts/fuzz.json";
  try {
    const auto json = parse_json_text(h3p::fuzz::as_text(data, size), source.string());
    const Contract contract = parse_contract(json, source);
    if (contract.describe().empty()) std::abort();
    if (contract_digest(contract).size() != 64) std::abort();
    if (!(parse_contract(to_json(contract), contract.source) == contract)) std::abort();
    (void)contract.model_path();
    (void)contract.conditioning_path();
    (void)contract.reference_image_path();
  } catch (const h3p::InputError&) {
    // Refused with a message: expected for most inputs.
  }
  return 0;
}
