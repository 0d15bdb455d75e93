#pragma once
// DLTensor views of ATen tensors for the plugin ABI: borrowed (no copy, no ownership), compact
// row-major, with the device and stream a call passes explicitly.
#include <ATen/core/Tensor.h>
#include <dlpack/dlpack.h>

#include <vector>

namespace h3p::ops::plugin {

// A DLTensor over `tensor` made compact (a copy only when it is not), alive as long as the
// view; an undefined tensor gives a null view (an absent optional operand).
class DlView {
 public:
  explicit DlView(const at::Tensor& tensor);
  const DLTensor* get() const { return tensor_.defined() ? refresh() : nullptr; }
  DLTensor* mutable_get() { return tensor_.defined() ? refresh() : nullptr; }

 private:
  DLTensor* refresh() const;
  at::Tensor tensor_;
  mutable std::vector<int64_t> shape_;
  mutable DLTensor dl_{};
};

// kDLCPU or kDLCUDA with the device index; InputError for other devices.
DLDevice dl_device(const at::Device& device);
// The dtype as DLPack spells it (f32, bf16, f16, int64); InputError for others.
DLDataType dl_dtype(at::ScalarType type);
// The CUDA stream LibTorch runs on for `device` (a cudaStream_t), NULL on the CPU.
void* current_stream(const at::Device& device);

}  // namespace h3p::ops::plugin
