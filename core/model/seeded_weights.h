#pragma once
// Seeded weights: a model component whose weight files are replaced by a seed record
// (core/io/seed_record.h), its tensors drawn on the device that loads them. For rehearsals and
// benchmarks at the released size where no checkpoint is present (the released transformer is
// 62 GB). The draw is a
// counter-based rule over integer and exactly rounded float operations, so CPU and CUDA give
// the same bits and no tensor depends on another's size or order.
#include <ATen/core/Tensor.h>

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/io/seed_record.h"

namespace h3p::model {

// fp32 values of unit variance, one per element of `shape`, on `device`. Element i of the
// stream named `stream` under `seed` is (u0 + u1 + u2 + u3 − 2)·√3, where u0..u3 are the four
// 24-bit fields (bits 40–63 and 16–39) of splitmix64 outputs 2i and 2i+1, each scaled by 2^-24;
// output n mixes key + (n+1)·γ with key = mix(seed + γ) XOR FNV-1a-64(stream), γ splitmix64's
// increment. The sums run in a fixed order, each rounded once in fp32.
at::Tensor seeded_unit_normal(const std::vector<int64_t>& shape, uint64_t seed,
                              const std::string& stream, const at::Device& device);

}  // namespace h3p::model
