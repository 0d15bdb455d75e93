#include "core/ops/plugin/plugin_contract.h"

#include <sstream>

namespace h3p::ops::plugin {

const std::array<PrimitiveContract, kPrimitiveCount>& primitive_contracts() {
  static const std::array<PrimitiveContract, kPrimitiveCount> table = {{
      {Primitive::linear, "linear", "x (M, K), w (N, K), b (N) or none -> out (M, N)",
       "x, w, b and out share bf16 or f32",
       "fp32 accumulation, bias added in fp32, one rounding to the dtype (nn.Linear)"},
      {Primitive::attention, "attention", "q, k, v (S, H, D) -> out (S, H, D); no mask",
       "q, k, v and out share bf16 or f32",
       "scale 1/sqrt(D); the provider's SDPA backend decides (math on CPU: q*sqrt(scale), "
       "k*sqrt(scale), q.kT, softmax and the product each rounded); a fused kernel rounds "
       "once"},
      {Primitive::swiglu, "swiglu", "h (S, 2F) -> out (S, F) = h[:, :F] * silu(h[:, F:])",
       "h and out share bf16 or f32", "silu(gate) rounded, then the product rounded"},
      {Primitive::silu, "silu", "x (any shape) -> out (same shape)",
       "x and out share bf16 or f32", "computed in fp32, rounded once"},
      {Primitive::rms_norm, "rms_norm",
       "x (S, C), or (S, H, D) per head; weight (C or D); eps -> out (shape of x)",
       "x, weight and out share bf16 or f32",
       "fp32 mean of squares and normalisation, rounded to the dtype, then times weight "
       "rounded (LibTorch < 2.4; from 2.4 at::rms_norm's fused rounding)"},
      {Primitive::norm_modulate, "norm_modulate",
       "x (S, C), weight (C), eps, scale (S, C), shift (S, C) -> out (S, C)",
       "all share bf16 or f32",
       "rms_norm as above, (1 + scale) rounded, the product rounded, + shift rounded"},
      {Primitive::gather_rows, "gather_rows", "table (T, C), rows (N) -> out (N, C) = table[rows]",
       "table and out bf16 or f32; rows int64 in [0, T)", "exact copy"},
      {Primitive::rope, "rope",
       "x (S, H, D), cos (S, R), sin (S, R) -> out (S, H, D); channels R..D pass through",
       "x and out bf16 or f32; cos and sin f32",
       "cos and sin cast to the dtype; x*cos and rotate_half(x)*sin each rounded, their sum "
       "rounded"},
      {Primitive::gated_residual, "gated_residual", "x, gate, y (S, C) -> out = x + gate*y",
       "all share bf16 or f32", "gate*y rounded, then the sum rounded"},
      {Primitive::add, "add", "x, y (same shape) -> out = x + y", "all share bf16 or f32",
       "rounded once"},
      {Primitive::timestep_sinusoid, "timestep_sinusoid", "t (N) -> out (N, dim)",
       "t and out f32",
       "f32 throughout: freqs = exp(arange(dim/2) * -ln(10000) / (dim/2)); [cos, sin] of "
       "t*freqs; an odd dim gets a zero last column"},
  }};
  return table;
}

std::string_view primitive_name(Primitive primitive) {
  return primitive_contracts()[static_cast<std::size_t>(primitive)].name;
}

std::vector<Primitive> group_primitives(Group group) {
  using P = Primitive;
  switch (group) {
    case Group::gemm: return {P::linear};
    case Group::attention: return {P::attention};
    case Group::swiglu: return {P::swiglu};
    case Group::adaln: return {P::linear, P::silu, P::gather_rows};
    case Group::qk_norm: return {P::rms_norm};
    case Group::rope: return {P::rope};
    case Group::norm: return {P::norm_modulate};
    case Group::residual: return {P::gated_residual};
    case Group::embed:
      return {P::linear, P::attention, P::swiglu, P::silu, P::rms_norm, P::add,
              P::timestep_sinusoid};
    case Group::head: return {P::linear, P::silu, P::norm_modulate, P::gather_rows};
  }
  return {};
}

std::string contract_markdown() {
  std::ostringstream out;
  out << "| group | primitives it calls |\n|---|---|\n";
  for (Group g : kAllGroups) {
    out << "| `" << group_name(g) << "` |";
    const auto prims = group_primitives(g);
    for (std::size_t i = 0; i < prims.size(); ++i) {
      out << (i ? ", " : " ") << "`" << primitive_name(prims[i]) << "`";
    }
    out << " |\n";
  }
  out << "\n| primitive | shapes | dtypes | where the provider rounds (bf16) |\n"
         "|---|---|---|---|\n";
  for (const PrimitiveContract& c : primitive_contracts()) {
    out << "| `" << c.name << "` | " << c.shapes << " | " << c.dtypes << " | " << c.rounding
        << " |\n";
  }
  return out.str();
}

}  // namespace h3p::ops::plugin
