#include "core/runs/environment.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/version.h>
#include <unistd.h>

#include <string>

#ifndef H3P_GIT_COMMIT
#define H3P_GIT_COMMIT "unknown"
#endif

namespace h3p::runs {

using nlohmann::json;

json environment_info() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const bool cuda = at::hasCUDA();
  return {{"torch_version", std::to_string(TORCH_VERSION_MAJOR) + "." +
                                std::to_string(TORCH_VERSION_MINOR) + "." +
                                std::to_string(TORCH_VERSION_PATCH)},
          {"num_threads", at::get_num_threads()},
          {"cpu_available", true},
          {"cuda_available", cuda},
          {"cuda_device_count", cuda ? static_cast<int>(at::getNumGPUs()) : 0},
          {"hostname", std::string(host)},
          {"compiler", std::string(__VERSION__)},
          {"h3parity_commit", std::string(H3P_GIT_COMMIT)}};
}

}  // namespace h3p::runs
