#include "core/ops/op_group.h"

namespace h3p::ops {

std::string_view group_name(Group group) {
  switch (group) {
    case Group::gemm: return "gemm";
    case Group::attention: return "attention";
    case Group::swiglu: return "swiglu";
    case Group::adaln: return "adaln";
    case Group::qk_norm: return "qk_norm";
    case Group::rope: return "rope";
    case Group::norm: return "norm";
    case Group::residual: return "residual";
    case Group::embed: return "embed";
    case Group::head: return "head";
  }
  return "?";
}

std::optional<Group> parse_group(std::string_view name) {
  for (Group g : kAllGroups) {
    if (group_name(g) == name) return g;
  }
  return std::nullopt;
}

bool is_interim(Group group) { return group != Group::embed && group != Group::head; }

}  // namespace h3p::ops
