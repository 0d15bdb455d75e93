#include "core/io/aten_bridge.h"

#include <cstring>

#include "core/common/error.h"

namespace h3p::io {

at::ScalarType to_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return at::kFloat;
    case DType::BF16:
      return at::kBFloat16;
    case DType::F16:
      return at::kHalf;
    case DType::F64:
      return at::kDouble;
    case DType::I64:
      return at::kLong;
    case DType::I32:
      return at::kInt;
    case DType::U8:
      return at::kByte;
    case DType::BOOL:
      return at::kBool;
  }
  throw std::logic_error("aten_bridge: invalid DType value");
}

DType to_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return DType::F32;
    case at::kBFloat16:
      return DType::BF16;
    case at::kHalf:
      return DType::F16;
    case at::kDouble:
      return DType::F64;
    case at::kLong:
      return DType::I64;
    case at::kInt:
      return DType::I32;
    case at::kByte:
      return DType::U8;
    case at::kBool:
      return DType::BOOL;
    default:
      break;
  }
  throw_input("dtype",
              std::string("scalar type ") + c10::toString(type) + " has no safetensors dtype here");
}

at::Tensor load_tensor(const SafetensorsFile& file, const TensorInfo& info) {
  const auto bytes = file.bytes(info);
  at::Tensor out = at::empty(info.shape, at::TensorOptions().dtype(to_scalar_type(info.dtype)));
  const std::size_t nbytes = static_cast<std::size_t>(out.numel()) * out.element_size();
  if (nbytes != bytes.size()) {
    throw_input(file.path().string(), "tensor '" + info.name + "': byte count mismatch");
  }
  if (nbytes > 0) std::memcpy(out.data_ptr(), bytes.data(), nbytes);
  return out;
}

at::Tensor load_tensor(const SafetensorsFile& file, std::string_view name) {
  return load_tensor(file, file.at(name));
}

std::vector<TensorRecord> make_records(const std::vector<NamedTensor>& tensors,
                                       std::vector<at::Tensor>& holder) {
  std::vector<TensorRecord> records;
  records.reserve(tensors.size());
  holder.reserve(holder.size() + tensors.size());
  for (const auto& named : tensors) {
    if (!named.tensor.defined()) throw_input("tensor '" + named.name + "'", "undefined tensor");
    DType dtype;
    try {
      dtype = to_dtype(named.tensor.scalar_type());
    } catch (const InputError& e) {
      throw_input("tensor '" + named.name + "'", e.what());
    }
    // A CPU-contiguous tensor is used as it is (the holder keeps it alive); others are copied.
    at::Tensor cpu = named.tensor.to(at::kCPU).contiguous();
    holder.push_back(cpu);
    const std::size_t nbytes = static_cast<std::size_t>(cpu.numel()) * cpu.element_size();
    const auto* data = nbytes > 0 ? static_cast<const std::byte*>(cpu.data_ptr()) : nullptr;
    records.push_back(TensorRecord{
        named.name, dtype, std::vector<std::int64_t>(cpu.sizes().begin(), cpu.sizes().end()),
        std::span<const std::byte>(data, nbytes)});
  }
  return records;
}

}  // namespace h3p::io
