#include "core/io/dtype.h"

#include <array>
#include <stdexcept>

namespace h3p::io {

namespace {

struct DTypeRow {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeRow, 8> kRows{{
    {DType::F32, "F32", 4},
    {DType::BF16, "BF16", 2},
    {DType::F16, "F16", 2},
    {DType::F64, "F64", 8},
    {DType::I64, "I64", 8},
    {DType::I32, "I32", 4},
    {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1},
}};

const DTypeRow& row(DType dtype) {
  for (const auto& r : kRows) {
    if (r.dtype == dtype) return r;
  }
  throw std::logic_error("dtype: invalid DType value");
}

}  // namespace

std::string_view dtype_name(DType dtype) { return row(dtype).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& r : kRows) {
    if (r.name == name) return r.dtype;
  }
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) { return row(dtype).size; }

}  // namespace h3p::io
