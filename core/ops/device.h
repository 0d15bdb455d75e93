#pragma once
// Device and thread setup for the provider (LibTorch): the one place that decides where
// tensors live and how many CPU threads ATen uses.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>

namespace h3p::ops {

// "cpu" or "cuda" / "cuda:N". Throws InputError when CUDA is asked for and none is usable.
at::Device resolve_device(const std::string& name);

// Uses every core for intra-op parallelism (LibTorch defaults to one thread here).
void configure_threads();

// "cpu" or "cuda:0 (<device name>)" for manifests.
std::string describe_device(const at::Device& device);

// Returns when the work queued on `device` so far has finished (a no-op on the CPU): for wall
// times of asynchronous stages.
void wait_for_device(const at::Device& device);

// This process's peak memory since the last reset_peak_memory: resident host bytes (VmHWM)
// and, on a CUDA device of a CUDA build, the bytes LibTorch's caching allocator had allocated
// at most (unset on CPU).
struct PeakMemory {
  std::int64_t host_bytes = 0;
  std::optional<std::int64_t> device_bytes;
};
// Starts a new peak window (the host counter through /proc/self/clear_refs, where the kernel
// allows it; otherwise the host peak stays the process's peak so far).
void reset_peak_memory(const at::Device& device);
PeakMemory peak_memory(const at::Device& device);

}  // namespace h3p::ops
