// The provider's own ATen ops behind the candidate plugin ABI, for the groups whose every
// primitive has an ATen `out=` form: gemm (at::linear_out), adaln (linear_out, silu_out,
// index_select_out), swiglu (mul_out of value and silu(gate)) and residual (add_out of x and
// gate*y), in the provider's order (core/ops/provider_ops.cpp). With `rest=provider` it is
// bitwise the provider, so `bench --impl provider --impl plugin:h3p_aten_provider:rest=provider`
// times nothing but the ABI (tools/bench/plugin_abi.sh; docs/benchmarks.md). It runs in
// h3parity's process on h3parity's LibTorch (tensors are wrapped, not copied) and launches on
// LibTorch's current stream, which is the stream h3parity passes. Built with a CUDA LibTorch.
#include <ATen/ATen.h>
#include <h3parity/candidate_plugin.h>

#include <cstdio>
#include <exception>
#include <vector>

namespace {

at::Tensor wrap(const DLTensor* t) {
  const at::ScalarType dtype = t->dtype.code == kDLBfloat    ? at::kBFloat16
                               : t->dtype.code == kDLInt     ? at::kLong
                               : t->dtype.bits == 16         ? at::kHalf
                                                             : at::kFloat;
  const at::Device device = t->device.device_type == kDLCUDA
                                ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(t->device.device_id))
                                : at::Device(at::kCPU);
  return at::from_blob(static_cast<char*>(t->data) + t->byte_offset,
                       at::IntArrayRef(t->shape, t->ndim),
                       at::TensorOptions().dtype(dtype).device(device));
}

template <typename Body>
int32_t guarded(const H3pCall* call, const char* op, Body body) {
  try {
    body();
    return H3P_OK;
  } catch (const std::exception& e) {
    std::snprintf(call->error, call->error_size, "h3p-aten-provider %s: %s", op, e.what());
    return H3P_ERROR;
  }
}

int32_t linear(const H3pCall* call, const DLTensor* x, const DLTensor* w, const DLTensor* b,
               DLTensor* out) {
  return guarded(call, "linear", [&] {
    at::Tensor o = wrap(out);
    if (b) {
      at::linear_out(o, wrap(x), wrap(w), wrap(b));
    } else {
      at::linear_out(o, wrap(x), wrap(w));
    }
  });
}

int32_t silu(const H3pCall* call, const DLTensor* x, DLTensor* out) {
  return guarded(call, "silu", [&] {
    at::Tensor o = wrap(out);
    at::silu_out(o, wrap(x));
  });
}

int32_t gather_rows(const H3pCall* call, const DLTensor* table, const DLTensor* rows,
                    DLTensor* out) {
  return guarded(call, "gather_rows", [&] {
    at::Tensor o = wrap(out);
    at::index_select_out(o, wrap(table), 0, wrap(rows));
  });
}

int32_t swiglu(const H3pCall* call, const DLTensor* h, DLTensor* out) {
  return guarded(call, "swiglu", [&] {
    auto halves = wrap(h).chunk(2, -1);
    at::Tensor o = wrap(out);
    at::mul_out(o, halves[0], at::silu(halves[1]));
  });
}

int32_t gated_residual(const H3pCall* call, const DLTensor* x, const DLTensor* gate,
                       const DLTensor* y, DLTensor* out) {
  return guarded(call, "gated_residual", [&] {
    at::Tensor o = wrap(out);
    at::add_out(o, wrap(x), at::mul(wrap(gate), wrap(y)));
  });
}

H3pOps make_ops() {
  H3pOps ops{};
  ops.struct_size = sizeof(H3pOps);
  ops.linear = linear;
  ops.silu = silu;
  ops.gather_rows = gather_rows;
  ops.swiglu = swiglu;
  ops.gated_residual = gated_residual;
  return ops;
}

const H3pOps kOps = make_ops();

H3pPlugin make_table() {
  H3pPlugin p{};
  p.struct_size = sizeof(H3pPlugin);
  p.abi_version = H3P_PLUGIN_ABI_VERSION;
  p.flags = H3P_PLUGIN_THREAD_SAFE;
  p.name = "h3p-aten-provider";
  p.version = "1.0";
  p.gemm = &kOps;
  p.adaln = &kOps;
  p.swiglu = &kOps;
  p.residual = &kOps;
  return p;
}

const H3pPlugin kPlugin = make_table();

}  // namespace

extern "C" H3P_PLUGIN_EXPORT const H3pPlugin* h3p_candidate_plugin(uint32_t host_abi_version) {
  return H3P_PLUGIN_ABI_VERSION_MAJOR(host_abi_version) == H3P_PLUGIN_ABI_MAJOR ? &kPlugin
                                                                                : nullptr;
}
