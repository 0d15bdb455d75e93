#pragma once
// Conversion between safetensors entries and ATen tensors. The only io header that includes
// ATen; include it from .cpp files only.
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "core/io/safetensors.h"

namespace h3p::io {

at::ScalarType to_scalar_type(DType dtype);
// Throws InputError for a scalar type the format does not carry here.
DType to_dtype(at::ScalarType type);

// Copies a stored tensor into a new contiguous CPU tensor of its stored dtype and shape.
at::Tensor load_tensor(const SafetensorsFile& file, const TensorInfo& info);
// Loads a tensor by name; throws InputError naming the file when absent.
at::Tensor load_tensor(const SafetensorsFile& file, std::string_view name);

// A named tensor to write; make_record keeps a contiguous CPU copy alive in `holder`.
struct NamedTensor {
  std::string name;
  at::Tensor tensor;
};
// Records over CPU-contiguous versions of `tensors` (kept in `holder` for the write's duration).
std::vector<TensorRecord> make_records(const std::vector<NamedTensor>& tensors,
                                       std::vector<at::Tensor>& holder);

}  // namespace h3p::io
