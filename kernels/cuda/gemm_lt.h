#pragma once
// Candidate GEMMs on the GPU through cuBLASLt: Y = X·Wᵀ (+ bias) (+ Y when accumulate), bf16
// operands, fp32 accumulation and scale, row-major X (M×K), W (N×K, nn.Linear's layout) and Y
// (M×N). One algorithm is chosen per shape on first use and then reused with a fixed workspace:
// cuBLASLt's heuristic candidates without split-K, each timed once, the close ones again over
// interleaved rounds. Results are bitwise repeatable on one GPU model and cuBLAS version.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace h3p::kernels::cuda {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t ldx = 0, ldy = 0;  // row strides of X and Y in elements (0: k and n)
  bool bias = false;         // add a bf16 bias of n elements
  bool accumulate = false;   // Y += X·Wᵀ instead of Y = X·Wᵀ
  auto key() const { return std::tie(m, n, k, ldx, ldy, bias, accumulate); }
  bool operator<(const GemmShape& o) const { return key() < o.key(); }
};

// How the plan kept for a shape computes, for reports and tests.
struct GemmChoice {
  int algo_id = -1, tile_id = -1, stages_id = -1, cluster_id = -1;  // cuBLASLt's config
  int swizzle = 0, custom_option = 0;
  int split_k = 1;
  int timed = 0;    // candidates timed for the shape
  double ms = 0.0;  // the kept algorithm's median time in the search (0: nothing was timed)
  std::string describe() const;  // "cuBLASLt algo 66 tile 24 stages 35 cluster 2 ..."
};

class LtGemm {
 public:
  // Creates the cuBLASLt handle and a 32 MiB workspace on the current device.
  LtGemm();
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Y = X·Wᵀ (+ bias) on `stream`; pointers 16-byte aligned, strides multiples of 8. Throws
  // std::invalid_argument for bad shapes and std::runtime_error for cuBLASLt failures.
  void run(const GemmShape& shape, const void* x, const void* w, const void* bias, void* y,
           cudaStream_t stream);

  // The split-K count of the algorithm kept for `shape` (1 when none is kept yet).
  int split_k(const GemmShape& shape) const { return choice(shape).split_k; }
  // The plan kept for `shape` (a default GemmChoice when none is kept yet).
  GemmChoice choice(const GemmShape& shape) const;

 private:
  struct Plan;
  Plan& plan_for(const GemmShape& shape, const void* x, const void* w, const void* bias,
                 void* y, cudaStream_t stream);

  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::map<GemmShape, std::unique_ptr<Plan>> plans_;
};

}  // namespace h3p::kernels::cuda
