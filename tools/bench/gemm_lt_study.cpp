// gemm_lt_study: why is a bf16 GEMM through cublasLtMatmul, with an algorithm we pick, slower than
// the same product through cublasGemmEx (what PyTorch's at::linear calls)?
//
// Build (from the repository root; standalone, not part of CMake):
//   /usr/local/cuda/bin/nvcc -std=c++20 -O2 -x cu -arch=sm_90a tools/bench/gemm_lt_study.cpp -lcublasLt -lcublas -o /tmp/gemm_lt_study
// Run:
//   /tmp/gemm_lt_study [--shape all|qkv|out|ffproj|ffout] [--rounds 9] [--reps 3]
//                      [--finalists 6] [--warmup-ms 200] [--order rotate|fixed]
//                      [--logcfg 66,470,35,5,3,0|none] [-v]
//
// The product: row-major Y (M x N) = X (M x K) · Wᵀ, W stored N x K (nn.Linear), bf16 in and
// out, fp32 compute and scale, no bias, beta = 0. In column-major cuBLAS terms Yᵀ (N x M, ld N)
// = op(A) · B with A = W as K x N (ld K, transa = T) and B = X as K x M (ld K, transb = N).
//
// Per shape it measures, in interleaved rounds (every variant once a round, the start of the
// round rotated by one each round unless --order fixed; --reps back-to-back launches per sample;
// ~200 ms of GEMMs before the first round; medians reported):
//   gemmex_ws32M       cublasGemmEx(T, N, ..., CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)
//                      on a handle given a 32 MiB cublasSetWorkspace (PyTorch on Hopper): the peer
//   gemmex_wsdefault   the same on a handle without cublasSetWorkspace
//   a16_fI_ws*         the I-th fastest (one-shot screen) of up to 64 results of
//                      cublasLtMatmulAlgoGetHeuristic asked with MIN_ALIGNMENT_{A,B,C,D}_BYTES = 16
//                      (split-K 1 only);
//                      ws32M: the whole 32 MiB workspace passed (what our code does), wsneed: only
//                      the result's workspaceSize (same pointer), wsnull: nullptr/0 (if it needs 0)
//   a16_h0_ws*         the first heuristic result of that query (if not already a finalist)
//   a256_h0_ws*        the first result of the query without the alignment preferences
//                      (cuBLASLt then assumes 256-byte alignment; cudaMalloc gives 256)
//   logcfg_ws*         cublasLtMatmulAlgoInit + config attributes from --logcfg (by default the one
//                      cuBLAS's API log shows: algo 66, tile 470 = 192x208, stages 35 = 64xAUTO,
//                      custom option 5, cluster 3 = 2x1x1, swizzle 0), if AlgoCheck accepts it
// Every variant's output is compared bit for bit with the peer's (the peer's own line checks that
// a second run of the peer reproduces it). Both query's results are listed with their configs;
// `hash` is an FNV-1a of the opaque cublasLtMatmulAlgo_t bytes (equal hash: same descriptor).
// Needs about 5 GiB of device memory (ffproj: two 2.2 GB outputs).

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------------------
// Error checks: every CUDA / cuBLAS call goes through one of these; failure exits naming the call.

[[noreturn]] void die(const std::string& what, const char* why, int line) {
  std::fprintf(stderr, "gemm_lt_study: %s failed: %s (line %d)\n", what.c_str(), why, line);
  std::exit(1);
}

void check_cuda(cudaError_t e, const std::string& what, int line) {
  if (e != cudaSuccess) die(what, cudaGetErrorString(e), line);
}

void check_cublas(cublasStatus_t s, const std::string& what, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) die(what, cublasGetStatusName(s), line);
}

#define CUDA_CHECK(call) check_cuda((call), #call, __LINE__)
#define CUBLAS_CHECK(call) check_cublas((call), #call, __LINE__)

// ---------------------------------------------------------------------------------------------
// RAII: unique_ptr over the opaque handle types, destroyed by the matching API call.

template <auto Destroy>
struct Deleter {
  template <typename P>
  void operator()(P p) const noexcept {
    (void)Destroy(p);
  }
};

template <typename Handle, auto Destroy>
using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, Deleter<Destroy>>;

using LtHandle = Owned<cublasLtHandle_t, cublasLtDestroy>;
using BlasHandle = Owned<cublasHandle_t, cublasDestroy_v2>;
using Stream = Owned<cudaStream_t, cudaStreamDestroy>;
using Event = Owned<cudaEvent_t, cudaEventDestroy>;
using OpDesc = Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using Layout = Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference = Owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;
using DevicePtr = std::unique_ptr<void, Deleter<cudaFree>>;

struct DeviceBuffer {
  DevicePtr ptr;
  size_t bytes = 0;
  void* get() const { return ptr.get(); }
};

DeviceBuffer device_alloc(size_t bytes, const char* what) {
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), std::string("cudaMalloc ") + what, __LINE__);
  return DeviceBuffer{DevicePtr(p), bytes};
}

Event make_event() {
  cudaEvent_t e = nullptr;
  CUDA_CHECK(cudaEventCreate(&e));
  return Event(e);
}

// ---------------------------------------------------------------------------------------------
// Device kernels: pseudo-random bf16 fill, and a bitwise comparison of two buffers.

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform on [-sqrt(3), sqrt(3)) (unit variance) times `scale`.
__global__ void fill_bf16_kernel(__nv_bfloat16* p, size_t n, uint64_t seed, float scale) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float u = static_cast<float>(splitmix64(seed ^ (i * 0xD1B54A32D192ED03ull)) >> 40) *
                    (1.0f / 16777216.0f);
    p[i] = __float2bfloat16_rn((2.0f * u - 1.0f) * 1.7320508f * scale);
  }
}

// Counts the 16-bit words that differ between a and b (n_words 16-bit words).
__global__ void count_diff_kernel(const uint16_t* a, const uint16_t* b, size_t n_words,
                                  unsigned long long* diff) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  const size_t n_vec = n_words / 8;
  const auto* va = reinterpret_cast<const uint4*>(a);
  const auto* vb = reinterpret_cast<const uint4*>(b);
  unsigned long long local = 0;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n_vec; i += stride) {
    const uint4 x = va[i], y = vb[i];
    const uint32_t xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
    for (int j = 0; j < 4; ++j) {
      local += ((xs[j] ^ ys[j]) & 0xFFFFu) != 0;
      local += ((xs[j] ^ ys[j]) >> 16) != 0;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    for (size_t i = n_vec * 8; i < n_words; ++i) local += a[i] != b[i];
  }
  if (local) atomicAdd(diff, local);
}

void fill_bf16(void* p, size_t n, uint64_t seed, float scale, cudaStream_t stream) {
  fill_bf16_kernel<<<1024, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(p), n, seed, scale);
  CUDA_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------------------------
// Problem, options.

struct Shape {
  const char* name;
  int64_t m, n, k;
};

constexpr Shape kShapes[] = {
    {"qkv", 38718, 21504, 5376},
    {"out", 38718, 5376, 7168},
    {"ffproj", 38718, 28672, 5376},
    {"ffout", 38718, 5376, 14336},
};

constexpr size_t kWorkspaceBytes = size_t{32} << 20;
constexpr int kHeuristicRequest = 64;

struct LogConfig {
  int32_t algo_id = 66;
  uint32_t tile = 470, stages = 35, custom = 5;
  uint16_t cluster = 3;  // CUBLASLT_CLUSTER_SHAPE_2x1x1
  uint32_t swizzle = 0;
};

struct Options {
  std::string shape = "all";
  int rounds = 9;
  int reps = 3;
  size_t finalists = 6;
  double warmup_ms = 200.0;
  bool rotate = true;
  std::optional<LogConfig> logcfg = LogConfig{};
  bool verbose = false;
};

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "gemm_lt_study: %s\nusage: gemm_lt_study [--shape all|qkv|out|ffproj|ffout] "
               "[--rounds N] [--reps N] [--finalists N] [--warmup-ms MS] [--order rotate|fixed] "
               "[--logcfg ALGO,TILE,STAGES,CUSTOM,CLUSTER,SWIZZLE|none] [-v]\n",
               msg);
  std::exit(2);
}

std::optional<LogConfig> parse_logcfg(const std::string& s) {
  if (s == "none") return std::nullopt;
  long v[6];
  if (std::sscanf(s.c_str(), "%ld,%ld,%ld,%ld,%ld,%ld", &v[0], &v[1], &v[2], &v[3], &v[4],
                  &v[5]) != 6) {
    usage("--logcfg wants six comma-separated integers or none");
  }
  return LogConfig{static_cast<int32_t>(v[0]), static_cast<uint32_t>(v[1]),
                   static_cast<uint32_t>(v[2]), static_cast<uint32_t>(v[3]),
                   static_cast<uint16_t>(v[4]), static_cast<uint32_t>(v[5])};
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value");
      return argv[++i];
    };
    if (arg == "--shape") {
      o.shape = value();
    } else if (arg == "--rounds") {
      o.rounds = std::atoi(value().c_str());
    } else if (arg == "--reps") {
      o.reps = std::atoi(value().c_str());
    } else if (arg == "--finalists") {
      o.finalists = static_cast<size_t>(std::atoi(value().c_str()));
    } else if (arg == "--warmup-ms") {
      o.warmup_ms = std::atof(value().c_str());
    } else if (arg == "--order") {
      const std::string v = value();
      if (v != "rotate" && v != "fixed") usage("--order is rotate or fixed");
      o.rotate = v == "rotate";
    } else if (arg == "--logcfg") {
      o.logcfg = parse_logcfg(value());
    } else if (arg == "-v" || arg == "--verbose") {
      o.verbose = true;
    } else {
      usage(("unknown argument " + std::string(arg)).c_str());
    }
  }
  if (o.rounds < 1 || o.reps < 1 || o.finalists < 1) usage("counts must be positive");
  bool known = o.shape == "all";
  for (const Shape& s : kShapes) known |= o.shape == s.name;
  if (!known) usage("unknown --shape");
  return o;
}

// ---------------------------------------------------------------------------------------------
// cuBLASLt descriptors and algorithm configs.

struct LtProblem {
  OpDesc op;
  Layout a, b, c;  // c also serves as D
};

LtProblem make_lt_problem(const Shape& s) {
  LtProblem p;
  cublasLtMatmulDesc_t op = nullptr;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  p.op.reset(op);
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                              sizeof(transa)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                              sizeof(transb)));
  auto layout = [](uint64_t rows, uint64_t cols, int64_t ld) {
    cublasLtMatrixLayout_t l = nullptr;
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, CUDA_R_16BF, rows, cols, ld));
    return Layout(l);
  };
  p.a = layout(s.k, s.n, s.k);  // W
  p.b = layout(s.k, s.m, s.k);  // X
  p.c = layout(s.n, s.m, s.n);  // Y
  return p;
}

struct AlgoConfig {
  int32_t algo_id = -1;
  uint32_t tile = 0, stages = 0, custom = 0, swizzle = 0, reduction = 0;
  uint16_t cluster = 0, inner = 0;
  int32_t split_k = 1;
};

template <typename T>
T config_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr,
              const char* name) {
  T value{};
  size_t written = 0;
  check_cublas(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof(value), &written),
               std::string("cublasLtMatmulAlgoConfigGetAttribute ") + name, __LINE__);
  if (written != sizeof(value)) {
    die(std::string("cublasLtMatmulAlgoConfigGetAttribute ") + name, "unexpected size", __LINE__);
  }
  return value;
}

// Types per cublasLt.h (CUDA 13.0): ID and SPLITK_NUM int32_t; TILE, STAGES, CUSTOM_OPTION,
// CTA_SWIZZLING, REDUCTION_SCHEME uint32_t; CLUSTER_SHAPE_ID and INNER_SHAPE_ID uint16_t.
AlgoConfig read_config(const cublasLtMatmulAlgo_t& a) {
  AlgoConfig c;
  c.algo_id = config_attr<int32_t>(a, CUBLASLT_ALGO_CONFIG_ID, "ID");
  c.tile = config_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID, "TILE_ID");
  c.stages = config_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, "STAGES_ID");
  c.custom = config_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "CUSTOM_OPTION");
  c.swizzle = config_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "CTA_SWIZZLING");
  c.reduction =
      config_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "REDUCTION_SCHEME");
  c.cluster = config_attr<uint16_t>(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "CLUSTER_SHAPE_ID");
  c.inner = config_attr<uint16_t>(a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, "INNER_SHAPE_ID");
  c.split_k = config_attr<int32_t>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "SPLITK_NUM");
  return c;
}

uint64_t algo_hash(const cublasLtMatmulAlgo_t& a) {
  uint64_t h = 0xCBF29CE484222325ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(a.data);
  for (size_t i = 0; i < sizeof(a.data); ++i) h = (h ^ bytes[i]) * 0x100000001B3ull;
  return h;
}

bool same_algo(const cublasLtMatmulAlgo_t& x, const cublasLtMatmulAlgo_t& y) {
  return std::memcmp(x.data, y.data, sizeof(x.data)) == 0;
}

std::string algo_hex(const cublasLtMatmulAlgo_t& a) {
  std::string s;
  char buf[20];
  for (uint64_t d : a.data) {
    std::snprintf(buf, sizeof(buf), "%016llx ", static_cast<unsigned long long>(d));
    s += buf;
  }
  return s;
}

struct Candidate {
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;  // the heuristic's (or AlgoCheck's) workspaceSize
  float waves = 0.0f;
  AlgoConfig cfg;
  float screen_ms = -1.0f;
  int heuristic_index = -1;
};

// Up to kHeuristicRequest results with split-K 1 and state SUCCESS, in the heuristic's order.
std::vector<Candidate> query_heuristic(cublasLtHandle_t lt, const LtProblem& p,
                                       std::optional<uint32_t> min_alignment, int* raw_count) {
  cublasLtMatmulPreference_t pref_raw = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_raw));
  Preference pref(pref_raw);
  const uint64_t max_ws = kWorkspaceBytes;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref_raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)));
  if (min_alignment) {
    const uint32_t align = *min_alignment;
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
      CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_raw, attr, &align, sizeof(align)));
    }
  }
  // A std::array, not a std::vector: nvcc 13.0's front end crashes instantiating the vector's
  // destructor for this anonymous typedef'd struct.
  std::array<cublasLtMatmulHeuristicResult_t, kHeuristicRequest> found{};
  int count = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, p.op.get(), p.a.get(), p.b.get(), p.c.get(),
                                              p.c.get(), pref_raw, kHeuristicRequest,
                                              found.data(), &count));
  *raw_count = count;
  std::vector<Candidate> out;
  for (int i = 0; i < count; ++i) {
    if (found[i].state != CUBLAS_STATUS_SUCCESS) continue;
    Candidate c;
    c.algo = found[i].algo;
    c.workspace = found[i].workspaceSize;
    c.waves = found[i].wavesCount;
    c.cfg = read_config(c.algo);
    c.heuristic_index = i;
    if (c.cfg.split_k == 1) out.push_back(c);
  }
  return out;
}

// The algorithm cuBLAS's API log names, built by hand; nullopt (with a note) if rejected.
std::optional<Candidate> algo_from_config(cublasLtHandle_t lt, const LtProblem& p,
                                          const LogConfig& lc) {
  auto note = [](const char* call, cublasStatus_t st) {
    std::printf("  logcfg: %s -> %s; variant skipped\n", call, cublasGetStatusName(st));
    return std::nullopt;
  };
  Candidate c;
  cublasStatus_t st = cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF,
                                             CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, lc.algo_id,
                                             &c.algo);
  if (st != CUBLAS_STATUS_SUCCESS) return note("cublasLtMatmulAlgoInit", st);
  const int32_t split_k = 1;
  struct Attr {
    cublasLtMatmulAlgoConfigAttributes_t attr;
    const void* value;
    size_t size;
    const char* name;
  };
  const Attr attrs[] = {
      {CUBLASLT_ALGO_CONFIG_TILE_ID, &lc.tile, sizeof(lc.tile), "TILE_ID"},
      {CUBLASLT_ALGO_CONFIG_STAGES_ID, &lc.stages, sizeof(lc.stages), "STAGES_ID"},
      {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &lc.custom, sizeof(lc.custom), "CUSTOM_OPTION"},
      {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &lc.cluster, sizeof(lc.cluster), "CLUSTER_SHAPE_ID"},
      {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &lc.swizzle, sizeof(lc.swizzle), "CTA_SWIZZLING"},
      {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split_k, sizeof(split_k), "SPLITK_NUM"},
  };
  for (const Attr& a : attrs) {
    st = cublasLtMatmulAlgoConfigSetAttribute(&c.algo, a.attr, a.value, a.size);
    if (st != CUBLAS_STATUS_SUCCESS) return note(a.name, st);
  }
  cublasLtMatmulHeuristicResult_t result{};
  st = cublasLtMatmulAlgoCheck(lt, p.op.get(), p.a.get(), p.b.get(), p.c.get(), p.c.get(), &c.algo,
                               &result);
  if (st != CUBLAS_STATUS_SUCCESS) return note("cublasLtMatmulAlgoCheck", st);
  c.workspace = result.workspaceSize;
  c.waves = result.wavesCount;
  c.cfg = read_config(c.algo);
  return c;
}

void print_candidate(const char* tag, size_t rank, const Candidate& c) {
  std::printf(
      "  %s #%-2zu h%-2d algo %3d tile %4u stages %3u cluster %2u custom %u swizzle %u inner %u "
      "red %u ws %9zu waves %6.3f hash %016llx",
      tag, rank, c.heuristic_index, c.cfg.algo_id, c.cfg.tile, c.cfg.stages, c.cfg.cluster,
      c.cfg.custom, c.cfg.swizzle, c.cfg.inner, c.cfg.reduction, c.workspace, c.waves,
      static_cast<unsigned long long>(algo_hash(c.algo)));
  if (c.screen_ms >= 0.0f) std::printf(" screen %.3f ms", c.screen_ms);
  std::printf("\n");
}

// ---------------------------------------------------------------------------------------------
// The benchmark context of one shape and its variants.

struct Bench {
  const Shape& shape;
  cudaStream_t stream;
  cublasLtHandle_t lt;
  const LtProblem& problem;
  void* x;
  void* w;
  void* lt_workspace;  // kWorkspaceBytes
  cudaEvent_t start, stop;
};

struct Variant {
  std::string name;
  cublasHandle_t blas = nullptr;  // set: cublasGemmEx variant
  Candidate lt;                   // otherwise: cublasLtMatmul with this algo
  void* ws = nullptr;
  size_t ws_bytes = 0;
  std::vector<float> ms;
  long long diff = -1;  // differing bf16 values vs the peer's output
};

Variant gemmex_variant(std::string name, cublasHandle_t blas) {
  Variant v;
  v.name = std::move(name);
  v.blas = blas;
  return v;
}

Variant lt_variant(std::string name, const Candidate& c, void* ws, size_t ws_bytes) {
  Variant v;
  v.name = std::move(name);
  v.lt = c;
  v.ws = ws;
  v.ws_bytes = ws_bytes;
  return v;
}

cublasStatus_t launch(const Bench& b, const Variant& v, void* y) {
  const float alpha = 1.0f, beta = 0.0f;
  const Shape& s = b.shape;
  if (v.blas) {
    return cublasGemmEx(v.blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.n),
                        static_cast<int>(s.m), static_cast<int>(s.k), &alpha, b.w, CUDA_R_16BF,
                        static_cast<int>(s.k), b.x, CUDA_R_16BF, static_cast<int>(s.k), &beta, y,
                        CUDA_R_16BF, static_cast<int>(s.n), CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  }
  return cublasLtMatmul(b.lt, b.problem.op.get(), &alpha, b.w, b.problem.a.get(), b.x,
                        b.problem.b.get(), &beta, y, b.problem.c.get(), y, b.problem.c.get(),
                        &v.lt.algo, v.ws, v.ws_bytes, b.stream);
}

void launch_checked(const Bench& b, const Variant& v, void* y) {
  check_cublas(launch(b, v, y),
               std::string(v.blas ? "cublasGemmEx" : "cublasLtMatmul") + " [" + v.name + "]",
               __LINE__);
}

// Milliseconds per launch of `reps` back-to-back launches, timed with events on the stream.
template <typename F>
float time_launches(const Bench& b, int reps, F&& launch_once) {
  CUDA_CHECK(cudaEventRecord(b.start, b.stream));
  for (int i = 0; i < reps; ++i) launch_once();
  CUDA_CHECK(cudaEventRecord(b.stop, b.stream));
  CUDA_CHECK(cudaEventSynchronize(b.stop));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, b.start, b.stop));
  return ms / static_cast<float>(reps);
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

// Screens every candidate once (a warm-up launch, then one timed launch with the full workspace);
// candidates whose launch fails are reported and dropped. Returns them sorted by screen time.
std::vector<Candidate> screen(const Bench& b, std::vector<Candidate> cands, void* y) {
  std::vector<Candidate> ok;
  for (Candidate& c : cands) {
    const Variant v = lt_variant("screen", c, b.lt_workspace, kWorkspaceBytes);
    const cublasStatus_t st = launch(b, v, y);
    if (st != CUBLAS_STATUS_SUCCESS) {
      std::printf("  screen: h%d algo %d tile %u: cublasLtMatmul -> %s; dropped\n",
                  c.heuristic_index, c.cfg.algo_id, c.cfg.tile, cublasGetStatusName(st));
      continue;
    }
    c.screen_ms = time_launches(b, 1, [&] { launch_checked(b, v, y); });
    ok.push_back(c);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const Candidate& p, const Candidate& q) {
    return p.screen_ms < q.screen_ms;
  });
  return ok;
}

// The Lt variants of one candidate: full workspace, only what it needs, and nullptr/0 if 0.
void add_lt_variants(std::vector<Variant>& out, const std::string& base, const Candidate& c,
                     void* workspace) {
  out.push_back(lt_variant(base + "_ws32M", c, workspace, kWorkspaceBytes));
  out.push_back(lt_variant(base + "_wsneed", c, workspace, c.workspace));
  if (c.workspace == 0) out.push_back(lt_variant(base + "_wsnull", c, nullptr, 0));
}

void warm_up(const Bench& b, const Variant& peer, void* y, double warmup_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  int launches = 0;
  for (;;) {
    for (int i = 0; i < 4; ++i, ++launches) launch_checked(b, peer, y);
    CUDA_CHECK(cudaStreamSynchronize(b.stream));
    const std::chrono::duration<double, std::milli> dt = std::chrono::steady_clock::now() - t0;
    if (dt.count() >= warmup_ms) {
      std::printf("  warm-up: %d peer launches, %.0f ms\n", launches, dt.count());
      return;
    }
  }
}

void run_rounds(const Bench& b, std::vector<Variant>& vs, void* y, const Options& o) {
  const size_t n = vs.size();
  for (int r = 0; r < o.rounds; ++r) {
    for (size_t j = 0; j < n; ++j) {
      Variant& v = vs[(j + (o.rotate ? static_cast<size_t>(r) : 0)) % n];
      v.ms.push_back(time_launches(b, o.reps, [&] { launch_checked(b, v, y); }));
    }
  }
}

long long count_diff(const void* a, const void* b, size_t bytes, unsigned long long* d_counter,
                     cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(d_counter, 0, sizeof(*d_counter), stream));
  count_diff_kernel<<<1024, 256, 0, stream>>>(static_cast<const uint16_t*>(a),
                                              static_cast<const uint16_t*>(b), bytes / 2,
                                              d_counter);
  CUDA_CHECK(cudaGetLastError());
  unsigned long long host = 0;
  CUDA_CHECK(cudaMemcpyAsync(&host, d_counter, sizeof(host), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<long long>(host);
}

// Each variant once into a poisoned buffer, compared bit for bit with the peer's output.
void check_outputs(const Bench& b, std::vector<Variant>& vs, const void* y_peer, void* y,
                   size_t y_bytes, unsigned long long* d_counter) {
  for (Variant& v : vs) {
    CUDA_CHECK(cudaMemsetAsync(y, 0xFF, y_bytes, b.stream));
    launch_checked(b, v, y);
    v.diff = count_diff(y_peer, y, y_bytes, d_counter, b.stream);
  }
}

struct ShapeSummary {
  std::string shape;
  double peer_ms = 0, peer_defaultws_ms = 0;
  std::string best_name, best_ws32_name, best_wsneed_name;
  double best_ms = 0, best_ws32_ms = 0, best_wsneed_ms = 0, a256_ms = 0;
  bool best_equal = false;
};

ShapeSummary report(const Shape& s, const std::vector<Variant>& vs, int reps, bool verbose) {
  const double flop = 2.0 * static_cast<double>(s.m) * s.n * s.k;
  const double peer = median(vs.front().ms);
  // ws_need: the heuristic's workspaceSize; ws_passed: what cublasLtMatmul is given. Times in ms;
  // ratio: median / the peer's median; bitwise: output vs the peer's (DIFF: bf16 values differing).
  std::printf("\n  %-7s %-18s %4s %5s %6s %7s %6s %7s %9s %9s %9s %9s %9s %7s %7s %8s %16s\n",
              "shape", "variant", "algo", "tile", "stages", "cluster", "custom", "swizzle",
              "ws_need", "ws_passed", "median", "min", "max", "TFLOP/s", "ratio", "bitwise",
              "algo_hash");
  ShapeSummary sum;
  sum.shape = s.name;
  sum.peer_ms = peer;
  sum.best_ms = sum.best_ws32_ms = sum.best_wsneed_ms = 1e30;
  for (const Variant& v : vs) {
    const double med = median(v.ms);
    const double lo = *std::min_element(v.ms.begin(), v.ms.end());
    const double hi = *std::max_element(v.ms.begin(), v.ms.end());
    const bool equal = v.diff == 0;
    char bitwise[32];
    if (equal) {
      std::snprintf(bitwise, sizeof(bitwise), "equal");
    } else {
      std::snprintf(bitwise, sizeof(bitwise), "DIFF:%lld", v.diff);
    }
    if (v.blas) {
      std::printf("  %-7s %-18s %4s %5s %6s %7s %6s %7s %9s %9s", s.name, v.name.c_str(), "-",
                  "-", "-", "-", "-", "-", "-", "-");
    } else {
      std::printf("  %-7s %-18s %4d %5u %6u %7u %6u %7u %9zu %9zu", s.name, v.name.c_str(),
                  v.lt.cfg.algo_id, v.lt.cfg.tile, v.lt.cfg.stages, v.lt.cfg.cluster,
                  v.lt.cfg.custom, v.lt.cfg.swizzle, v.lt.workspace, v.ws_bytes);
    }
    std::printf(" %9.4f %9.4f %9.4f %7.1f %7.4f %8s", med, lo, hi, flop / (med * 1e-3) / 1e12,
                med / peer, bitwise);
    if (!v.blas) std::printf(" %016llx", static_cast<unsigned long long>(algo_hash(v.lt.algo)));
    std::printf("\n");
    if (verbose) {
      std::printf("      samples (ms, %d launches each):", reps);
      for (float m : v.ms) std::printf(" %.4f", m);
      std::printf("\n");
    }
    if (v.name == "gemmex_wsdefault") sum.peer_defaultws_ms = med;
    if (v.blas) continue;
    if (med < sum.best_ms) sum.best_ms = med, sum.best_name = v.name, sum.best_equal = equal;
    const bool ws32 = v.name.ends_with("_ws32M");
    if (ws32 && med < sum.best_ws32_ms) sum.best_ws32_ms = med, sum.best_ws32_name = v.name;
    if (!ws32 && med < sum.best_wsneed_ms) {
      sum.best_wsneed_ms = med, sum.best_wsneed_name = v.name;
    }
    if (v.name == "a256_h0_ws32M") sum.a256_ms = med;
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// One shape end to end.

ShapeSummary study_shape(const Shape& s, const Options& o, cudaStream_t stream, cublasLtHandle_t lt,
                         cublasHandle_t blas_ws, cublasHandle_t blas_default, void* lt_workspace,
                         unsigned long long* d_counter) {
  std::printf("\n=== shape %s: M %lld N %lld K %lld ===\n", s.name, static_cast<long long>(s.m),
              static_cast<long long>(s.n), static_cast<long long>(s.k));
  const size_t x_elems = static_cast<size_t>(s.m * s.k), w_elems = static_cast<size_t>(s.n * s.k);
  const size_t y_bytes = static_cast<size_t>(s.m * s.n) * 2;
  DeviceBuffer x = device_alloc(x_elems * 2, "X");
  DeviceBuffer w = device_alloc(w_elems * 2, "W");
  DeviceBuffer y_peer = device_alloc(y_bytes, "Y peer");
  DeviceBuffer y = device_alloc(y_bytes, "Y");
  fill_bf16(x.get(), x_elems, 0x1234'5678ull, 1.0f, stream);
  fill_bf16(w.get(), w_elems, 0x9ABC'DEF0ull, 1.0f / std::sqrt(static_cast<float>(s.k)), stream);

  const LtProblem problem = make_lt_problem(s);
  Event start = make_event(), stop = make_event();
  const Bench b{s, stream, lt, problem, x.get(), w.get(), lt_workspace, start.get(), stop.get()};

  const Variant peer = gemmex_variant("gemmex_ws32M", blas_ws);
  const Variant peer_default = gemmex_variant("gemmex_wsdefault", blas_default);
  launch_checked(b, peer, y_peer.get());  // the reference output
  CUDA_CHECK(cudaStreamSynchronize(stream));

  int raw16 = 0, raw256 = 0;
  std::vector<Candidate> a16 = query_heuristic(lt, problem, 16u, &raw16);
  std::vector<Candidate> a256 = query_heuristic(lt, problem, std::nullopt, &raw256);
  std::printf("  heuristic, min alignment 16: %d results, %zu with split-K 1\n", raw16, a16.size());
  std::printf("  heuristic, no alignment pref: %d results, %zu with split-K 1\n", raw256,
              a256.size());
  if (a16.empty()) {
    die("cublasLtMatmulAlgoGetHeuristic (alignment 16)", "no usable result", __LINE__);
  }
  const Candidate a16_first = a16.front();

  std::vector<Candidate> screened = screen(b, a16, y.get());
  if (screened.empty()) die("screening", "no candidate ran", __LINE__);
  std::printf("  screened (alignment 16 query, by screen time):\n");
  for (size_t i = 0; i < screened.size(); ++i) {
    if (o.verbose || i < 12) print_candidate("a16 ", i, screened[i]);
  }
  size_t only256 = 0;
  for (const Candidate& c : a256) {
    only256 += std::none_of(a16.begin(), a16.end(),
                            [&](const Candidate& d) { return same_algo(c.algo, d.algo); });
  }
  std::printf("  no-alignment-pref query (heuristic order; %zu of %zu not in the 16 query):\n",
              only256, a256.size());
  for (size_t i = 0; i < a256.size(); ++i) {
    if (o.verbose || i < 8) print_candidate("a256", i, a256[i]);
  }

  std::vector<Variant> vs{peer, peer_default};
  const size_t n_final = std::min(o.finalists, screened.size());
  bool first_is_finalist = false;
  for (size_t i = 0; i < n_final; ++i) {
    add_lt_variants(vs, "a16_f" + std::to_string(i + 1), screened[i], lt_workspace);
    first_is_finalist |= same_algo(screened[i].algo, a16_first.algo);
  }
  if (first_is_finalist) {
    std::printf("  the alignment-16 query's first result is among the finalists (no a16_h0)\n");
  } else {
    add_lt_variants(vs, "a16_h0", a16_first, lt_workspace);
  }
  if (!a256.empty()) add_lt_variants(vs, "a256_h0", a256.front(), lt_workspace);
  if (o.logcfg) {
    if (auto c = algo_from_config(lt, problem, *o.logcfg)) {
      print_candidate("logc", 0, *c);
      if (o.verbose) std::printf("  logcfg algo bytes: %s\n", algo_hex(c->algo).c_str());
      add_lt_variants(vs, "logcfg", *c, lt_workspace);
    }
  }
  if (o.verbose) {
    for (const Variant& v : vs) {
      if (v.blas) continue;
      std::printf("  %-18s algo bytes: %s\n", v.name.c_str(), algo_hex(v.lt.algo).c_str());
    }
  }

  // One untimed launch of each (loads kernels; the default-workspace handle allocates its own).
  for (const Variant& v : vs) launch_checked(b, v, y.get());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  warm_up(b, peer, y.get(), o.warmup_ms);
  run_rounds(b, vs, y.get(), o);
  check_outputs(b, vs, y_peer.get(), y.get(), y_bytes, d_counter);
  return report(s, vs, o.reps, o.verbose);
}

void print_device(int dev) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  int runtime = 0, driver = 0;
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  std::printf("device %d: %s, sm_%d%d, %d SMs, peak clock %d MHz, L2 %d KiB, %.1f GiB\n", dev,
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, clock_khz / 1000,
              prop.l2CacheSize / 1024, static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  std::printf("CUDA runtime %d, driver %d, cuBLASLt %zu\n", runtime, driver, cublasLtGetVersion());
}

void print_summary(const std::vector<ShapeSummary>& all) {
  std::printf("\nsummary (medians, ms; ratio = Lt / gemmex_ws32M):\n{\n  \"shapes\": [\n");
  for (size_t i = 0; i < all.size(); ++i) {
    const ShapeSummary& s = all[i];
    std::printf(
        "    {\"shape\": \"%s\", \"peer_ms\": %.4f, \"peer_wsdefault_ms\": %.4f, "
        "\"best_lt\": \"%s\", \"best_lt_ms\": %.4f, \"best_lt_ratio\": %.4f, "
        "\"best_lt_bitwise_equal\": %s, \"best_ws32M\": \"%s\", \"best_ws32M_ratio\": %.4f, "
        "\"best_wsneed\": \"%s\", \"best_wsneed_ratio\": %.4f, \"a256_h0_ws32M_ratio\": %.4f}%s\n",
        s.shape.c_str(), s.peer_ms, s.peer_defaultws_ms, s.best_name.c_str(), s.best_ms,
        s.best_ms / s.peer_ms, s.best_equal ? "true" : "false", s.best_ws32_name.c_str(),
        s.best_ws32_ms / s.peer_ms, s.best_wsneed_name.c_str(), s.best_wsneed_ms / s.peer_ms,
        s.a256_ms / s.peer_ms, i + 1 < all.size() ? "," : "");
  }
  std::printf("  ]\n}\n");
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  print_device(dev);
  std::printf("rounds %d, reps %d per sample, finalists %zu, warm-up %.0f ms, order %s\n",
              o.rounds, o.reps, o.finalists, o.warmup_ms, o.rotate ? "rotate" : "fixed");

  cudaStream_t stream_raw = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_raw, cudaStreamNonBlocking));
  Stream stream(stream_raw);
  cublasLtHandle_t lt_raw = nullptr;
  CUBLAS_CHECK(cublasLtCreate(&lt_raw));
  LtHandle lt(lt_raw);

  // Peer handles: one with a 32 MiB workspace of its own (as PyTorch sets), one left default.
  DeviceBuffer blas_workspace = device_alloc(kWorkspaceBytes, "cuBLAS workspace");
  DeviceBuffer lt_workspace = device_alloc(kWorkspaceBytes, "cuBLASLt workspace");
  DeviceBuffer counter = device_alloc(sizeof(unsigned long long), "diff counter");
  cublasHandle_t blas_ws_raw = nullptr, blas_default_raw = nullptr;
  CUBLAS_CHECK(cublasCreate(&blas_ws_raw));
  BlasHandle blas_ws(blas_ws_raw);
  CUBLAS_CHECK(cublasCreate(&blas_default_raw));
  BlasHandle blas_default(blas_default_raw);
  for (cublasHandle_t h : {blas_ws_raw, blas_default_raw}) {
    CUBLAS_CHECK(cublasSetStream(h, stream_raw));
  }
  CUBLAS_CHECK(cublasSetWorkspace(blas_ws_raw, blas_workspace.get(), kWorkspaceBytes));

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<ShapeSummary> summaries;
  for (const Shape& s : kShapes) {
    if (o.shape != "all" && o.shape != s.name) continue;
    summaries.push_back(study_shape(s, o, stream_raw, lt_raw, blas_ws_raw, blas_default_raw,
                                    lt_workspace.get(),
                                    static_cast<unsigned long long*>(counter.get())));
  }
  print_summary(summaries);
  const std::chrono::duration<double> dt = std::chrono::steady_clock::now() - t0;
  std::printf("total %.1f s\n", dt.count());
  return 0;
}
