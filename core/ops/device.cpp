#include "core/ops/device.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Context.h>

#include <thread>

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

}  // namespace h3p::ops
