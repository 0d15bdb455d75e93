#include "core/ops/device.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Context.h>

#include <fstream>
#include <sstream>
#include <thread>

#ifdef H3P_HAVE_C10_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "core/common/error.h"

namespace h3p::ops {

at::Device resolve_device(const std::string& name) {
  if (name == "cpu") return at::Device(at::kCPU);
  if (name.rfind("cuda", 0) == 0) {
    if (!at::hasCUDA()) {
      throw InputError("--device " + name + ": no CUDA device is available to this build");
    }
    try {
      return at::Device(name);
    } catch (const c10::Error&) {
      throw InputError("--device " + name + ": not a valid CUDA device name");
    }
  }
  throw InputError("--device " + name + ": must be cpu or cuda[:N]");
}

void configure_threads() {
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0) at::set_num_threads(static_cast<int>(cores));
}

std::string describe_device(const at::Device& device) { return device.str(); }

void wait_for_device(const at::Device& device) {
  // Reading a value back waits on the device's current stream, where ATen queued the work.
  if (!device.is_cpu()) (void)at::zeros({1}, at::TensorOptions().device(device)).item<float>();
}

void reset_peak_memory(const at::Device& device) {
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM (Linux 4.0+); ignored elsewhere
#ifdef H3P_HAVE_C10_CUDA
  if (device.is_cuda()) {
    // The caching allocator has no per-device state before the first allocation there.
    try {
      (void)at::empty({1}, at::TensorOptions().device(device));
      c10::cuda::CUDACachingAllocator::resetPeakStats(device.index() < 0 ? 0 : device.index());
    } catch (const c10::Error&) {
      // another allocator: peak_memory reports no device figure
    }
  }
#else
  (void)device;
#endif
}

PeakMemory peak_memory(const at::Device& device) {
  PeakMemory peak;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      std::int64_t kib = 0;
      fields >> kib;
      peak.host_bytes = kib * 1024;
    }
  }
#ifdef H3P_HAVE_C10_CUDA
  if (device.is_cuda()) {
    try {
      (void)at::empty({1}, at::TensorOptions().device(device));  // as in reset_peak_memory
      const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(
          device.index() < 0 ? 0 : device.index());
      peak.device_bytes = stats.allocated_bytes[0].peak;  // aggregate over pools
    } catch (const c10::Error&) {
      // another allocator (PYTORCH_NO_CUDA_MEMORY_CACHING): no figure rather than a wrong one
    }
  }
#else
  (void)device;
#endif
  return peak;
}

}  // namespace h3p::ops
