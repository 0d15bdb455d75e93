#pragma once
// Impl specs: which implementation runs each operator group, and for the provider which
// backend. Grammar (ARCHITECTURE.md):
//   spec     := base [":" override ("," override)*]
//   base     := "provider" | "candidate"
//   override := target "=" value
//   target   := a group name | "interim" (all block-interior groups) | "all"
//   value    := "provider" | "candidate" | a provider backend of that group
//               (attention: flash|efficient|math|cudnn; gemm: cublaslt), which implies provider
// Overrides apply left to right, so `candidate:all=provider,attention=candidate` is valid; a
// group named twice explicitly is refused. The text is recorded verbatim in manifests.
#include <array>
#include <string>
#include <string_view>

#include "core/ops/op_group.h"

namespace h3p::ops {

enum class Impl { provider, candidate };

// What runs one group: the implementation and, for the provider, a backend ("" = default).
struct GroupChoice {
  Impl impl = Impl::provider;
  std::string backend;
  bool operator==(const GroupChoice&) const = default;
};

struct ImplSpec {
  std::string text;  // as given
  Impl base = Impl::provider;
  std::array<GroupChoice, kGroupCount> groups{};

  // Parses and validates; throws InputError "impl spec '<text>': <what>".
  static ImplSpec parse(std::string_view text);
  const GroupChoice& choice(Group g) const { return groups[static_cast<std::size_t>(g)]; }
  // True when any group runs the candidate.
  bool uses_candidate() const;
  // True when every group runs the provider with its default backend.
  bool is_plain_provider() const;
  // One line per group ("attention=provider[flash]"), for manifests and --help output.
  std::string describe() const;
};

}  // namespace h3p::ops
