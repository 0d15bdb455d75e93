#pragma once
// The per-group contract of the candidate plugin ABI (include/h3parity/candidate_plugin.h):
// which OpSet primitives each operator group calls, and for each primitive its shapes, dtypes
// and where the provider rounds. One table serves the loader (a provided group must fill every
// primitive it calls), `h3parity plugin-contract` and docs/plugins.md.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "core/ops/op_group.h"

namespace h3p::ops::plugin {

// The OpSet primitives, in the order of H3pOps.
enum class Primitive {
  linear,
  attention,
  swiglu,
  silu,
  rms_norm,
  norm_modulate,
  gather_rows,
  rope,
  gated_residual,
  add,
  timestep_sinusoid,
};

inline constexpr std::size_t kPrimitiveCount = 11;

struct PrimitiveContract {
  Primitive primitive;
  std::string_view name;      // as H3pOps and Python plugins spell it
  std::string_view shapes;    // arguments and out, with shapes
  std::string_view dtypes;    // which dtypes cross
  std::string_view rounding;  // where the provider rounds (bf16)
};

// Every primitive's contract, in Primitive order.
const std::array<PrimitiveContract, kPrimitiveCount>& primitive_contracts();
std::string_view primitive_name(Primitive primitive);

// The primitives the graph (core/model/transformer.cpp) calls for `group`, in Primitive order.
std::vector<Primitive> group_primitives(Group group);

// The group table and the primitive table as Markdown (docs/plugins.md embeds this text).
std::string contract_markdown();

}  // namespace h3p::ops::plugin
