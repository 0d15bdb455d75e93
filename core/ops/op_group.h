#pragma once
// The operator groups of the transformer graph (ARCHITECTURE.md): each call site of the graph
// belongs to exactly one group, and an impl spec chooses which OpSet runs each group.
#include <array>
#include <optional>
#include <string_view>

namespace h3p::ops {

enum class Group {
  gemm,       // the six block GEMMs: to_q, to_k, to_v, to_out.0, ff.net.0.proj, ff.net.2
  attention,  // scaled dot-product attention over the packed sequence (blocks)
  swiglu,     // value * silu(gate) in the blocks
  adaln,      // AdaLN projection Linear(silu(temb)) and its per-row gather
  qk_norm,    // per-head RMSNorm of q and k in the blocks
  rope,       // partial rotary embedding of q and k
  norm,       // norm1 / norm2 RMSNorm fused with (1+scale)*x+shift
  residual,   // the two gated residual adds x + gate*y
  embed,      // input projections, token refiner (all of it), timestep embedding
  head,       // norm_out and the two output projections
};

inline constexpr std::size_t kGroupCount = 10;
inline constexpr std::array<Group, kGroupCount> kAllGroups = {
    Group::gemm,     Group::attention, Group::swiglu,   Group::adaln, Group::qk_norm,
    Group::rope,     Group::norm,      Group::residual, Group::embed, Group::head};

// The group's name as impl specs spell it ("gemm", "qk_norm", ...).
std::string_view group_name(Group group);
// Parses a group name; nullopt when unknown.
std::optional<Group> parse_group(std::string_view name);
// True for the block-interior groups that `interim` names (all but embed and head).
bool is_interim(Group group);

}  // namespace h3p::ops
