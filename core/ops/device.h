#pragma once
// Device and thread setup for the provider (LibTorch): the one place that decides where
// tensors live and how many CPU threads ATen uses.
#include <ATen/core/Tensor.h>

#include <string>

namespace h3p::ops {

// "cpu" or "cuda" / "cuda:N". Throws InputError when CUDA is asked for and none is usable.
at::Device resolve_device(const std::string& name);

// Uses every core for intra-op parallelism (LibTorch defaults to one thread here).
void configure_threads();

// "cpu" or "cuda:0 (<device name>)" for manifests.
std::string describe_device(const at::Device& device);

}  // namespace h3p::ops
