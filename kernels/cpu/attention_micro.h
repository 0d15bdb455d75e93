#pragma once
// Per-ISA inner step of the attention kernel (attention_scalar.cpp, attention_avx2.cpp,
// attention_avx512.cpp): one query tile against one key tile with the online softmax update.
// Operands arrive packed as fp32 by attention.cpp; every query row's arithmetic depends only on
// its own data and the fixed key tiling, never on the tile or thread that runs it.
#include <cstdint>

namespace h3p::kernels::cpu::attention_detail {

constexpr int kQueryTile = 8;  // query rows per work item
constexpr int kKeyTile = 32;   // keys per online-softmax step
constexpr int kLanes = 16;     // value/output rows are padded to a multiple of this

// One online-softmax step. qt: [d][kQueryTile] queries; kt: [d][kKeyTile] keys; vt:
// [kKeyTile][dp] values (dp = d rounded up to kLanes, zero-padded); keys >= valid_keys are
// ignored. Per query row r: scores t = (q·k)·scale; m_new = max(m[r], max t);
// corr = exp(m[r] - m_new); p = exp(t - m_new); l[r] = l[r]·corr + Σp; m[r] = m_new;
// o[r] = o[r]·corr + Σ p·v, o being [kQueryTile][dp].
using TileStep = void (*)(const float* qt, const float* kt, const float* vt, std::int64_t d,
                          std::int64_t dp, int valid_keys, float scale, float* m, float* l,
                          float* o);

void tile_step_scalar(const float* qt, const float* kt, const float* vt, std::int64_t d,
                      std::int64_t dp, int valid_keys, float scale, float* m, float* l, float* o);
void tile_step_avx2(const float* qt, const float* kt, const float* vt, std::int64_t d,
                    std::int64_t dp, int valid_keys, float scale, float* m, float* l, float* o);
void tile_step_avx512(const float* qt, const float* kt, const float* vt, std::int64_t d,
                      std::int64_t dp, int valid_keys, float scale, float* m, float* l, float* o);

}  // namespace h3p::kernels::cpu::attention_detail
