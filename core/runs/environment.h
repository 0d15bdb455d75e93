#pragma once
// What a run records about the machine it ran on (manifest "environment"). Kept apart from
// identity.h: this is the only part of the run records that asks LibTorch anything.
#include <nlohmann/json.hpp>

namespace h3p::runs {

// Facts about the machine and libraries: torch_version, num_threads, cuda_available,
// cuda_device_count, hostname, compiler, h3parity_commit (git rev-parse --short HEAD when the
// build was configured, "unknown" outside git). Informational: never a reason to refuse a resume.
nlohmann::json environment_info();

}  // namespace h3p::runs
