#include "core/ops/numerics_env.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <dlfcn.h>
#include <torch/version.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <type_traits>

#include "core/io/sha256.h"
#include "core/ops/provider_ops.h"

#ifdef H3P_HAVE_C10_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace h3p::ops {
namespace {

using nlohmann::json;

// The /proc/cpuinfo flags that some library's dispatch reads (x86 and Arm).
const std::set<std::string>& dispatch_flags() {
  static const std::set<std::string> flags = {
      "sse4_1",   "sse4_2",       "avx",         "avx2",        "fma",         "f16c",
      "avx512f",  "avx512bw",     "avx512vl",    "avx512dq",    "avx512cd",    "avx512_vnni",
      "avx512_bf16", "avx512_fp16", "avx_vnni",  "amx_tile",    "amx_bf16",    "amx_int8",
      "asimd",    "sve",          "sve2",        "bf16",        "i8mm",        "asimddp"};
  return flags;
}

json cpu_section() {
  json cpu = json::object();
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
    if (model.empty() && (key == "model name" || key == "CPU part")) model = value;
    if (flags.empty() && (key == "flags" || key == "Features")) flags = value;
  }
  json isa = json::array();
  std::istringstream words(flags);
  std::set<std::string> seen;
  for (std::string w; words >> w;) {
    if (dispatch_flags().contains(w)) seen.insert(w);
  }
  for (const auto& w : seen) isa.push_back(w);
  cpu["model"] = model.empty() ? "unknown" : model;
  cpu["isa"] = isa;
  return cpu;
}

// "CPU capability usage: AVX2" from show_config(); the rest of it hashed as the build.
void torch_build(json& cpu, json& torch) {
  const std::string config = at::show_config();
  std::istringstream lines(config);
  std::string kept, capability = "unknown";
  static const std::string tag = "CPU capability usage: ";
  for (std::string line; std::getline(lines, line);) {
    if (const auto at_tag = line.find(tag); at_tag != std::string::npos) {
      capability = line.substr(at_tag + tag.size());
      continue;
    }
    kept += line + "\n";
  }
  cpu["aten_capability"] = capability;
  torch["version"] = std::to_string(TORCH_VERSION_MAJOR) + "." +
                     std::to_string(TORCH_VERSION_MINOR) + "." +
                     std::to_string(TORCH_VERSION_PATCH);
  torch["build_sha256"] = io::sha256_hex(kept);
}

template <typename Fn>
Fn find_symbol(const char* name) {
  return reinterpret_cast<Fn>(::dlsym(RTLD_DEFAULT, name));
}

void blas_libraries(json& cpu) {
  if (auto corename = find_symbol<const char* (*)()>("openblas_get_corename")) {
    cpu["openblas_core"] = corename();
  }
  const std::string dnn = at::get_mkldnn_version();
  if (!dnn.empty()) cpu["onednn"] = dnn;
  if (at::hasMKL()) cpu["mkl"] = at::get_mkl_version();
  cpu["threads"] = at::get_num_threads();
}

#ifdef H3P_HAVE_C10_CUDA
std::string cuda_version_text(int v) {
  return v <= 0 ? "unknown" : std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// cuBLAS's reduced-precision reduction setting in words: a bool on older LibTorch, an option
// (allow with split-K, disallow but split-K, disallow both) on newer.
template <typename Setting>
std::string reduction_setting(Setting setting) {
  if constexpr (std::is_same_v<Setting, bool>) {
    return setting ? "allowed" : "disallowed";
  } else {
    switch (static_cast<int>(setting)) {
      case 0: return "allowed (split-K allowed)";
      case 1: return "disallowed (split-K allowed)";
      case 2: return "disallowed (no split-K)";
      default: return "option " + std::to_string(static_cast<int>(setting));
    }
  }
}

json cuda_section(const at::Device& device) {
  json cuda = json::object();
  const int index = device.has_index() ? device.index() : 0;
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(index);
  cuda["name"] = std::string(prop->name);
  cuda["compute_capability"] = std::to_string(prop->major) + "." + std::to_string(prop->minor);
  cuda["sm_count"] = prop->multiProcessorCount;
  cuda["memory_bytes"] = static_cast<std::uint64_t>(prop->totalGlobalMem);
  int driver = 0, runtime = 0;
  if (auto f = find_symbol<int (*)(int*)>("cudaDriverGetVersion")) f(&driver);
  if (auto f = find_symbol<int (*)(int*)>("cudaRuntimeGetVersion")) f(&runtime);
  cuda["driver"] = cuda_version_text(driver);
  cuda["runtime"] = cuda_version_text(runtime);
  // cublasGetProperty(MAJOR_VERSION=0 | MINOR_VERSION=1 | PATCH_LEVEL=2, int*).
  if (auto f = find_symbol<int (*)(int, int*)>("cublasGetProperty")) {
    int major = 0, minor = 0, patch = 0;
    f(0, &major);
    f(1, &minor);
    f(2, &patch);
    cuda["cublas"] = std::to_string(major) + "." + std::to_string(minor) + "." +
                     std::to_string(patch);
  } else {
    cuda["cublas"] = "unknown";
  }
  if (auto f = find_symbol<std::size_t (*)()>("cublasLtGetVersion")) {
    cuda["cublaslt"] = std::to_string(f());
  } else {
    cuda["cublaslt"] = "unknown";
  }
  const long cudnn = at::detail::getCUDAHooks().versionCuDNN();
  cuda["cudnn"] = cudnn > 0 ? std::to_string(cudnn) : "none";
  cuda["bf16_reduced_precision_reduction"] =
      reduction_setting(at::globalContext().allowBF16ReductionCuBLAS());
  cuda["fp16_reduced_precision_reduction"] =
      reduction_setting(at::globalContext().allowFP16ReductionCuBLAS());
  return cuda;
}
#endif

// The backend LibTorch's scaled_dot_product_attention selects for this call's shape, probed
// with the provider's own layout (the choice depends on the strides, not only the shape).
std::string selected_sdpa(const at::Device& device, const AttentionShape& shape) {
#if TORCH_VERSION_MAJOR >= 2
  const auto options = at::TensorOptions().dtype(shape.dtype).device(device);
  const at::Tensor q =
      heads_first_view(at::empty({shape.sequence, shape.heads, shape.head_dim}, options));
  const int64_t choice = at::_fused_sdp_choice(q, q, q);
  switch (choice) {
    case 0: return "math";
    case 1: return "flash";
    case 2: return "efficient";
    case 3: return "cudnn";
    default: return "backend " + std::to_string(choice);
  }
#else
  (void)device;
  (void)shape;
  return "math";  // LibTorch 1.x: the provider's composite attention
#endif
}

json attention_section(const NumericsRequest& r) {
  json attention = json::object();
  if (r.ops == nullptr) return attention;
  const std::string name = (*r.ops)(Group::attention).name();
  static const std::string tag = "[attention=";
  if (name.rfind("provider", 0) != 0) {
    attention["requested"] = name;
    attention["selected"] = name;
  } else if (const auto at_tag = name.find(tag); at_tag != std::string::npos) {
    const std::string backend =
        name.substr(at_tag + tag.size(), name.find(']', at_tag) - at_tag - tag.size());
    attention["requested"] = backend;
    attention["selected"] = backend;
  } else {
    attention["requested"] = "default";
    attention["selected"] =
        r.attention ? selected_sdpa(r.device, *r.attention) : std::string("not probed");
  }
  return attention;
}

json kernels_section(const NumericsRequest& r) {
  json kernels = json::object();
  // With the fused call, the blocks run fused and the op sets only embed and head, on the
  // provider: their own kernel paths (CPU kernels) do not run.
  if (r.ops != nullptr && r.fused_call.empty()) {
    for (const Group g : kAllGroups) {
      const OpSet& ops = (*r.ops)(g);
      if (const std::string path = ops.numerics_path(); !path.empty()) kernels[ops.name()] = path;
    }
  }
  if (!r.fused_call.empty()) kernels["fused_call"] = r.fused_call;
  return kernels;
}

}  // namespace

const std::vector<std::string>& numerics_variables() {
  static const std::vector<std::string> names = {
      "ATEN_CPU_CAPABILITY",     "OPENBLAS_CORETYPE",       "OPENBLAS_NUM_THREADS",
      "GOTO_NUM_THREADS",        "OMP_NUM_THREADS",         "MKL_ENABLE_INSTRUCTIONS",
      "MKL_CBWR",                "MKL_DEBUG_CPU_TYPE",      "MKL_NUM_THREADS",
      "ONEDNN_MAX_CPU_ISA",      "DNNL_MAX_CPU_ISA",        "ONEDNN_DEFAULT_FPMATH_MODE",
      "DNNL_DEFAULT_FPMATH_MODE", "H3P_KERNELS_ISA",        "NVIDIA_TF32_OVERRIDE",
      "CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE", "TORCH_BLAS_PREFER_CUBLASLT",
      "TORCH_CUDNN_V8_API_DISABLED", "TORCH_CUDNN_SDPA_ENABLED", "CUDA_MODULE_LOADING"};
  return names;
}

json numerics_environment(const NumericsRequest& request) {
  json cpu = cpu_section();
  json torch = json::object();
  torch_build(cpu, torch);
  blas_libraries(cpu);
  json out = json::object();
  out["cpu"] = cpu;
  out["torch"] = torch;
  out["device"] = std::string(request.device.is_cuda() ? "cuda" : "cpu");
#ifdef H3P_HAVE_C10_CUDA
  if (request.device.is_cuda()) out["cuda"] = cuda_section(request.device);
#endif
  out["attention"] = attention_section(request);
  out["kernels"] = kernels_section(request);
  if (!request.plugin.is_null()) {
    json plugin = json::object();
    for (const char* key : {"kind", "name", "version", "abi_version", "library_sha256"}) {
      if (request.plugin.contains(key)) plugin[key] = request.plugin[key];
    }
    out["plugin"] = plugin;
  }
  json env = json::object();
  for (const std::string& name : numerics_variables()) {
    if (const char* value = std::getenv(name.c_str())) env[name] = std::string(value);
  }
  out["env"] = env;
  return out;
}

}  // namespace h3p::ops
