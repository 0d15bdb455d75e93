#pragma once
// The transformer's parameters: their names, shapes and checkpoint dtypes (one table shared by
// the loader and init-model), and loading them from a diffusers model directory.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/io/dtype.h"
#include "core/model/config.h"

namespace h3p::model {

// How init-model fills a parameter.
enum class ParamKind { weight, bias, norm_weight };

// One parameter as diffusers names and stores it in the released mixed-precision checkpoint.
struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  io::DType checkpoint_dtype;  // F32 for the fp32 modules, BF16 for everything else
  ParamKind kind;
  int64_t fan_in;  // input width, for weight initialisation
};

// Every parameter of MiniMaxH3Transformer3DModel for `config`, in a fixed order.
std::vector<ParamSpec> parameter_specs(const TransformerConfig& config);

// A parameter's value from unit-variance draws of its shape (fp32): weights N(0, 1/fan_in),
// biases N(0, 0.02²), norm weights 1 + N(0, 0.05²). The rule of init-model and seeded weights.
at::Tensor param_value(const ParamSpec& spec, const at::Tensor& unit_normal);

struct AttentionWeights {
  at::Tensor to_q, to_k, to_v, to_out, norm_q, norm_k;
};
struct FeedForwardWeights {
  at::Tensor proj, out;  // ff.net.0.proj (2*ffn, hidden), ff.net.2 (hidden, ffn)
};
struct RefinerBlockWeights {
  at::Tensor norm1, norm2;
  AttentionWeights attn;
  FeedForwardWeights ff;
};
struct BlockWeights {
  at::Tensor norm1, norm2;
  AttentionWeights attn;
  FeedForwardWeights ff;
  at::Tensor adaln_weight, adaln_bias;  // adaln_proj.linear
};

// All parameters, as stored (dtypes preserved), on one device.
struct TransformerWeights {
  at::Tensor proj_in_w, proj_in_b, audio_proj_in_w, audio_proj_in_b;
  at::Tensor context_embedder_w, context_embedder_b;
  at::Tensor time_linear_1_w, time_linear_1_b, time_linear_2_w, time_linear_2_b;
  std::vector<RefinerBlockWeights> refiner;
  at::Tensor refiner_final_norm;
  std::vector<BlockWeights> blocks;
  at::Tensor norm_out_norm, norm_out_linear_w, norm_out_linear_b;
  at::Tensor proj_out_w, proj_out_b, audio_proj_out_w, audio_proj_out_b;
};

// Builds the struct from named tensors; every spec'd name must be present with its shape and a
// floating dtype, and no other name may be present. Throws InputError naming `origin`. Each
// block's to_q, to_k, to_v become consecutive row blocks of one tensor (same values; see
// stacked_qkv) where their dtype and device agree and each block starts 256-byte aligned.
TransformerWeights assemble_weights(const TransformerConfig& config,
                                    std::map<std::string, at::Tensor> tensors,
                                    const std::string& origin);

// [to_q; to_k; to_v] as one (3·inner, hidden) view without a copy when the three are
// consecutive row blocks of one storage (as assemble_weights lays them out); else undefined.
at::Tensor stacked_qkv(const AttentionWeights& attention);

// Loads transformer/ (config.json + single or sharded safetensors) onto `device`; a directory
// with a seed record (seeded_weights.h) instead draws every parameter on `device`.
struct LoadedTransformer {
  TransformerConfig config;
  TransformerWeights weights;
  std::filesystem::path dir;
};
LoadedTransformer load_transformer(const std::filesystem::path& transformer_dir,
                                   const at::Device& device);

}  // namespace h3p::model
