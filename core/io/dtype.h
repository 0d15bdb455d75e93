#pragma once
// Element types of safetensors files, as the format spells them ("F32", "BF16", ...).
#include <cstddef>
#include <optional>
#include <string_view>

namespace h3p::io {

// Every dtype the model and the run files use.
enum class DType { F32, BF16, F16, F64, I64, I32, U8, BOOL };

// The safetensors spelling of a dtype ("F32", "BF16", "BOOL", ...).
std::string_view dtype_name(DType dtype);
// Parses a safetensors dtype string; nullopt for an unknown or unsupported one.
std::optional<DType> parse_dtype(std::string_view name);
// Bytes per element.
std::size_t dtype_size(DType dtype);

}  // namespace h3p::io
