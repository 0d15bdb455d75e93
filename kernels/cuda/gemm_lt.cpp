#include "kernels/cuda/gemm_lt.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.h"

namespace h3p::kernels::cuda {

// Descriptors and the chosen algorithm of one shape; owns its cuBLASLt handles.
struct LtGemm::Plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  int split_k = 1;
  ~Plan() {
    if (op) cublasLtMatmulDescDestroy(op);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
  }
};

namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("cuBLASLt gemm: " + what);
}

int algo_split_k(const cublasLtMatmulAlgo_t& algo) {
  int32_t split = 1;
  size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split,
                                       sizeof(split), &written);
  return written == sizeof(split) && split > 0 ? split : 1;
}

}  // namespace

LtGemm::LtGemm() {
  check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
  check_cuda(cudaMalloc(&workspace_, kWorkspaceBytes), "cuBLASLt workspace");
  workspace_bytes_ = kWorkspaceBytes;
}

LtGemm::~LtGemm() {
  plans_.clear();
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(handle_);
}

int LtGemm::split_k(const GemmShape& shape) const {
  auto it = plans_.find(shape);
  return it == plans_.end() ? 1 : it->second->split_k;
}

LtGemm::Plan& LtGemm::plan_for(const GemmShape& s, const void* x, const void* w,
                               const void* bias, void* y, cudaStream_t stream) {
  if (auto it = plans_.find(s); it != plans_.end()) return *it->second;
  auto plan = std::make_unique<Plan>();
  // Row-major Y = X·Wᵀ is column-major Yᵀ (N×M) = W (K×N, transposed) · Xᵀ (K×M).
  check_cublas(cublasLtMatmulDescCreate(&plan->op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                              sizeof(transa)), "TRANSA");
  check_cublas(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                              sizeof(transb)), "TRANSB");
  if (s.bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    check_cublas(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                &epilogue, sizeof(epilogue)), "EPILOGUE");
    const cudaDataType_t bias_type = CUDA_R_16BF;
    check_cublas(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                &bias_type, sizeof(bias_type)), "BIAS_DATA_TYPE");
  }
  const int64_t ldx = s.ldx ? s.ldx : s.k, ldy = s.ldy ? s.ldy : s.n;
  check_cublas(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_16BF, s.k, s.n, s.k), "layout W");
  check_cublas(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_16BF, s.k, s.m, ldx), "layout X");
  check_cublas(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_16BF, s.n, s.m, ldy), "layout Y");

  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "preference");
  check_cublas(cublasLtMatmulPreferenceSetAttribute(pref,
                                                    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes_, sizeof(workspace_bytes_)),
               "workspace preference");
  std::vector<cublasLtMatmulHeuristicResult_t> found(32);
  int count = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      handle_, plan->op, plan->a, plan->b, plan->c, plan->c, pref,
      static_cast<int>(found.size()), found.data(), &count);
  cublasLtMatmulPreferenceDestroy(pref);
  check_cublas(status, "cublasLtMatmulAlgoGetHeuristic");
  found.resize(static_cast<size_t>(count));
  // Keep the algorithms without split-K (a fixed reduction order), then time them once.
  std::erase_if(found, [](const cublasLtMatmulHeuristicResult_t& r) {
    return r.state != CUBLAS_STATUS_SUCCESS || algo_split_k(r.algo) != 1;
  });
  require(!found.empty(), "no cuBLASLt algorithm without split-K for m=" + std::to_string(s.m) +
                              " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k));
  if (s.bias) {
    check_cublas(cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                &bias, sizeof(bias)), "BIAS_POINTER");
  }
  const float alpha = 1.0f, beta = s.accumulate ? 1.0f : 0.0f;
  size_t best = 0;
  if (found.size() > 1 && !s.accumulate) {  // timing would change Y when accumulating
    cudaEvent_t start = nullptr, stop = nullptr;
    check_cuda(cudaEventCreate(&start), "event");
    check_cuda(cudaEventCreate(&stop), "event");
    float best_ms = 0.0f;
    for (size_t i = 0; i < found.size(); ++i) {
      // One warm-up run, then the median of five.
      std::vector<float> times;
      bool ok = true;
      for (int rep = 0; rep < 6 && ok; ++rep) {
        cudaEventRecord(start, stream);
        ok = cublasLtMatmul(handle_, plan->op, &alpha, w, plan->a, x, plan->b, &beta, y, plan->c,
                            y, plan->c, &found[i].algo, workspace_, workspace_bytes_,
                            stream) == CUBLAS_STATUS_SUCCESS;
        cudaEventRecord(stop, stream);
        cudaEventSynchronize(stop);
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, start, stop);
        if (rep > 0) times.push_back(ms);
      }
      if (!ok) continue;
      std::nth_element(times.begin(), times.begin() + 2, times.end());
      if (i == 0 || times[2] < best_ms) best_ms = times[2], best = i;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  plan->algo = found[best].algo;
  plan->split_k = algo_split_k(plan->algo);
  return *plans_.emplace(s, std::move(plan)).first->second;
}

void LtGemm::run(const GemmShape& s, const void* x, const void* w, const void* bias, void* y,
                 cudaStream_t stream) {
  require(s.m > 0 && s.n > 0 && s.k > 0, "empty shape");
  require(s.n % 8 == 0 && s.k % 8 == 0, "n and k must be multiples of 8");
  require((s.ldx == 0 || (s.ldx >= s.k && s.ldx % 8 == 0)) &&
              (s.ldy == 0 || (s.ldy >= s.n && s.ldy % 8 == 0)),
          "row strides must cover the row and be multiples of 8");
  require(s.bias == (bias != nullptr), "bias pointer does not match the shape's bias flag");
  for (const void* p : {x, w, static_cast<const void*>(y)}) {
    require(p != nullptr && reinterpret_cast<uintptr_t>(p) % 16 == 0,
            "operands must be 16-byte aligned device pointers");
  }
  Plan& plan = plan_for(s, x, w, bias, y, stream);
  if (s.bias) {
    check_cublas(cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                &bias, sizeof(bias)), "BIAS_POINTER");
  }
  const float alpha = 1.0f, beta = s.accumulate ? 1.0f : 0.0f;
  check_cublas(cublasLtMatmul(handle_, plan.op, &alpha, w, plan.a, x, plan.b, &beta, y, plan.c,
                              y, plan.c, &plan.algo, workspace_, workspace_bytes_, stream),
               "cublasLtMatmul");
}

}  // namespace h3p::kernels::cuda
