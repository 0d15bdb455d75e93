#include "core/ops/plugin/dlpack_view.h"

#ifdef H3P_HAVE_C10_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include "core/common/error.h"

namespace h3p::ops::plugin {

DlView::DlView(const at::Tensor& tensor)
    : tensor_(!tensor.defined()          ? at::Tensor()
              : tensor.is_contiguous() ? tensor
                                       : tensor.contiguous()) {
  if (!tensor_.defined()) return;
  shape_.assign(tensor_.sizes().begin(), tensor_.sizes().end());
  dl_.data = tensor_.data_ptr();
  dl_.device = dl_device(tensor_.device());
  dl_.ndim = static_cast<int32_t>(shape_.size());
  dl_.dtype = dl_dtype(tensor_.scalar_type());
  dl_.strides = nullptr;  // compact row-major
  dl_.byte_offset = 0;
}

DLTensor* DlView::refresh() const {
  dl_.shape = shape_.data();
  return &dl_;
}

DLDevice dl_device(const at::Device& device) {
  if (device.is_cpu()) return DLDevice{kDLCPU, 0};
  if (device.is_cuda()) return DLDevice{kDLCUDA, device.has_index() ? device.index() : 0};
  throw InputError("plugin ABI: device " + device.str() + " is neither CPU nor CUDA");
}

DLDataType dl_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return DLDataType{kDLFloat, 32, 1};
    case at::kBFloat16: return DLDataType{kDLBfloat, 16, 1};
    case at::kHalf: return DLDataType{kDLFloat, 16, 1};
    case at::kLong: return DLDataType{kDLInt, 64, 1};
    default: break;
  }
  throw InputError(std::string("plugin ABI: dtype ") + c10::toString(type) + " has no DLPack form here");
}

void* current_stream(const at::Device& device) {
  if (!device.is_cuda()) return nullptr;
#ifdef H3P_HAVE_C10_CUDA
  return c10::cuda::getCurrentCUDAStream(device.index()).stream();
#else
  throw InputError("plugin ABI: a CUDA tensor in a build of LibTorch without CUDA");
#endif
}

}  // namespace h3p::ops::plugin
