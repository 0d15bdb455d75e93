#pragma once
// CUDA runtime and cuBLASLt status checks that throw std::runtime_error naming the call.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace h3p::kernels::cuda {

// Throws "<what>: <CUDA error string>" unless `status` is cudaSuccess.
inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

// Throws "<what>: cuBLASLt status N" unless `status` is CUBLAS_STATUS_SUCCESS.
inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": cuBLASLt status " +
                             std::to_string(static_cast<int>(status)));
  }
}

}  // namespace h3p::kernels::cuda
