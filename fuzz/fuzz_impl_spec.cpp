// Fuzz target: the impl-spec grammar (ImplSpec::parse). An accepted spec keeps its text
// verbatim, describes every group, and parses to the same choices again.
#include <cstdint>
#include <cstdlib>

#include "core/common/error.h"
#include "core/ops/impl_spec.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using h3p::ops::ImplSpec;
  const auto text = h3p::fuzz::as_text(data, size);
  try {
    const ImplSpec spec = ImplSpec::parse(text);
    if (spec.text != text) std::abort();
    if (spec.describe().empty()) std::abort();
    const ImplSpec again = ImplSpec::parse(spec.text);
    if (again.base != spec.base || again.groups != spec.groups) std::abort();
    if (again.plugin != spec.plugin || again.rest != spec.rest) std::abort();
    // A plugin base always names its reference; `rest` only ever comes with one.
    if ((spec.base == h3p::ops::Impl::plugin) == spec.plugin.ref.empty()) std::abort();
    if (spec.rest && spec.base != h3p::ops::Impl::plugin) std::abort();
    if (spec.is_plain_provider() && spec.uses_candidate()) std::abort();
  } catch (const h3p::InputError&) {
    // Refused with a message: expected for most inputs.
  }
  return 0;
}
