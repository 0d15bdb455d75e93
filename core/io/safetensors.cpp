#include "core/io/safetensors.h"

#include <initializer_list>
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <tuple>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/mapped_file.h"
#include "core/io/strict_json.h"

namespace h3p::io {

// The format stores lengths and tensor bytes little-endian; reading and writing them as
// host-order memory is only right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes little-endian");

namespace {

constexpr std::string_view kMetadataKey = "__metadata__";
constexpr std::size_t kLengthBytes = 8;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

// numel * dtype size, or nullopt when a dim is negative or the product overflows 64 bits.
std::optional<std::uint64_t> byte_count(const std::vector<std::int64_t>& shape, DType dtype) {
  std::uint64_t total = dtype_size(dtype);
  for (std::int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (__builtin_mul_overflow(total, static_cast<std::uint64_t>(dim), &total)) {
      return std::nullopt;
    }
  }
  return total;
}

std::uint64_t read_le64(const std::byte* p) {
  std::uint64_t value = 0;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// ---- reading -------------------------------------------------------------------------------

std::vector<std::int64_t> parse_shape(const nlohmann::json& shape, const std::string& ctx) {
  if (!shape.is_array()) throw_input(ctx, "shape: not an array");
  std::vector<std::int64_t> dims;
  dims.reserve(shape.size());
  for (const auto& dim : shape) {
    if (!dim.is_number_integer()) throw_input(ctx, "shape: dim " + dim.dump() + " not an integer");
    if (dim.is_number_unsigned()) {
      auto value = dim.get<std::uint64_t>();
      if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        throw_input(ctx, "shape: dim " + dim.dump() + " too large");
      }
      dims.push_back(static_cast<std::int64_t>(value));
    } else {
      auto value = dim.get<std::int64_t>();
      if (value < 0) throw_input(ctx, "shape: negative dim " + std::to_string(value));
      dims.push_back(value);
    }
  }
  return dims;
}

std::uint64_t parse_offset(const nlohmann::json& value, const std::string& ctx) {
  if (!value.is_number_unsigned()) {
    throw_input(ctx, "data_offsets: " + value.dump() + " not a non-negative integer");
  }
  return value.get<std::uint64_t>();
}

TensorInfo parse_entry(const std::string& name, const nlohmann::json& entry,
                       const std::string& path) {
  const std::string ctx = path + ": tensor " + single_quoted(name);
  if (!entry.is_object()) throw_input(ctx, "entry not a JSON object");
  for (const auto& [key, value] : entry.items()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      throw_input(ctx, "unknown field " + single_quoted(key));
    }
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(field)) throw_input(ctx, std::string("missing field '") + field + "'");
  }
  TensorInfo info;
  info.name = name;

  const auto& dtype = entry["dtype"];
  if (!dtype.is_string()) throw_input(ctx, "dtype: not a string");
  auto parsed = parse_dtype(dtype.get<std::string>());
  if (!parsed) throw_input(ctx, "dtype: unknown or unsupported dtype " + dtype.dump());
  info.dtype = *parsed;

  info.shape = parse_shape(entry["shape"], ctx);

  const auto& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    throw_input(ctx, "data_offsets: not an array [begin, end]");
  }
  info.begin = parse_offset(offsets[0], ctx);
  info.end = parse_offset(offsets[1], ctx);
  if (info.end < info.begin) {
    throw_input(ctx, "data_offsets: end " + std::to_string(info.end) + " before begin " +
                         std::to_string(info.begin));
  }
  auto expected = byte_count(info.shape, info.dtype);
  if (!expected) throw_input(ctx, "shape " + shape_text(info.shape) + " overflows 64 bits");
  if (info.end - info.begin != *expected) {
    throw_input(ctx, "data_offsets: [" + std::to_string(info.begin) + ", " +
                         std::to_string(info.end) + "] hold " +
                         std::to_string(info.end - info.begin) + " bytes, shape " +
                         shape_text(info.shape) + " " + std::string(dtype_name(info.dtype)) +
                         " needs " + std::to_string(*expected));
  }
  return info;
}

std::map<std::string, std::string> parse_metadata(const nlohmann::json& meta,
                                                  const std::string& path) {
  const std::string ctx = path + ": " + std::string(kMetadataKey);
  if (!meta.is_object()) throw_input(ctx, "not a JSON object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : meta.items()) {
    if (!value.is_string()) throw_input(ctx, single_quoted(key) + ": value not a string");
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

// Checks that the sorted tensors tile [0, data_size) exactly.
void check_layout(const std::vector<TensorInfo>& tensors, std::uint64_t data_size,
                  const std::string& path) {
  std::uint64_t expected = 0;
  const TensorInfo* previous = nullptr;
  for (const auto& info : tensors) {
    const std::string ctx = path + ": tensor " + single_quoted(info.name);
    if (info.begin > expected) {
      throw_input(ctx, "gap of " + std::to_string(info.begin - expected) +
                           " bytes before its data (begins at " + std::to_string(info.begin) +
                           ", previous data ends at " + std::to_string(expected) + ")");
    }
    if (info.begin < expected) {
      throw_input(ctx, "data overlaps tensor " + single_quoted(previous ? previous->name : "") +
                           " (begins at " + std::to_string(info.begin) +
                           ", previous data ends at " + std::to_string(expected) + ")");
    }
    if (info.end > data_size) {
      throw_input(ctx, "data_offsets: end " + std::to_string(info.end) +
                           " past the end of the file (data section holds " +
                           std::to_string(data_size) + " bytes)");
    }
    expected = info.end;
    previous = &info;
  }
  if (expected != data_size) {
    throw_input(path, std::to_string(data_size - expected) +
                          " trailing bytes after the last tensor's data");
  }
}

}  // namespace

std::uint64_t TensorInfo::numel() const {
  std::uint64_t n = 1;
  for (std::int64_t dim : shape) n *= static_cast<std::uint64_t>(dim);
  return n;
}

struct SafetensorsFile::Impl {
  std::filesystem::path path;
  std::optional<MappedFile> map;  // a file read by open()
  std::vector<std::byte> owned;   // an image handed to parse()
  std::span<const std::byte> image;
  std::size_t data_offset = 0;
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::size_t, std::less<>> by_name;
  std::map<std::string, std::string> metadata;
};

SafetensorsFile::SafetensorsFile(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  impl->map.emplace(path);
  impl->image = impl->map->bytes();
  return validated(std::move(impl));
}

SafetensorsFile SafetensorsFile::parse(std::vector<std::byte> image,
                                       const std::filesystem::path& name) {
  auto impl = std::make_shared<Impl>();
  impl->path = name;
  impl->owned = std::move(image);
  impl->image = impl->owned;
  return validated(std::move(impl));
}

SafetensorsFile SafetensorsFile::validated(std::shared_ptr<Impl> impl) {
  const std::string where = impl->path.string();
  const auto file = impl->image;

  // Step 1: the header length and the header's place in the file.
  if (file.size() < kLengthBytes) {
    throw_input(where, "truncated: " + std::to_string(file.size()) +
                           " bytes, shorter than the 8-byte header length");
  }
  const std::uint64_t header_len = read_le64(file.data());
  if (header_len > kMaxHeaderBytes) {
    throw_input(where, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                           std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (header_len > file.size() - kLengthBytes) {
    throw_input(where, "header length " + std::to_string(header_len) +
                           " runs past the end of the file (" + std::to_string(file.size()) +
                           " bytes)");
  }
  impl->data_offset = kLengthBytes + static_cast<std::size_t>(header_len);

  // Step 2: the header JSON, duplicate keys refused.
  const std::string_view text(reinterpret_cast<const char*>(file.data()) + kLengthBytes,
                              static_cast<std::size_t>(header_len));
  const nlohmann::json header = parse_json_unique_keys(text, where + ": header");
  if (!header.is_object()) throw_input(where, "header: not a JSON object");

  // Step 3: every entry.
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      impl->metadata = parse_metadata(value, where);
    } else {
      impl->tensors.push_back(parse_entry(key, value, where));
    }
  }

  // Step 4: the data section is tiled exactly, in file order.
  std::sort(impl->tensors.begin(), impl->tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) {
              return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
            });
  check_layout(impl->tensors, file.size() - impl->data_offset, where);
  for (std::size_t i = 0; i < impl->tensors.size(); ++i) {
    impl->by_name.emplace(impl->tensors[i].name, i);
  }
  return SafetensorsFile(std::move(impl));
}

const std::filesystem::path& SafetensorsFile::path() const { return impl_->path; }

const std::vector<TensorInfo>& SafetensorsFile::tensors() const { return impl_->tensors; }

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto it = impl_->by_name.find(name);
  return it == impl_->by_name.end() ? nullptr : &impl_->tensors[it->second];
}

const TensorInfo& SafetensorsFile::at(std::string_view name) const {
  const TensorInfo* info = find(name);
  if (info == nullptr) throw_input(impl_->path.string(), "no tensor " + single_quoted(name));
  return *info;
}

std::span<const std::byte> SafetensorsFile::bytes(const TensorInfo& info) const {
  const auto file = impl_->image;
  const std::uint64_t data_size = file.size() - impl_->data_offset;
  if (info.begin > info.end || info.end > data_size) {
    throw_input(impl_->path.string(),
                "tensor " + single_quoted(info.name) + ": data_offsets outside this file");
  }
  return file.subspan(impl_->data_offset + info.begin, info.end - info.begin);
}

const std::map<std::string, std::string>& SafetensorsFile::metadata() const {
  return impl_->metadata;
}

// ---- writing -------------------------------------------------------------------------------

namespace {

std::string json_string(std::string_view text, const std::string& ctx) {
  try {
    return nlohmann::json(std::string(text)).dump();
  } catch (const nlohmann::json::exception&) {
    throw_input(ctx, "not valid UTF-8");
  }
}

// The padded header JSON for `tensors`; validates names, shapes and byte counts.
std::string build_header(const std::vector<TensorRecord>& tensors,
                         const std::map<std::string, std::string>& metadata,
                         const std::string& where) {
  std::string json = "{";
  bool first = true;
  if (!metadata.empty()) {
    json += json_string(kMetadataKey, where) + ":{";
    bool first_key = true;
    for (const auto& [key, value] : metadata) {
      const std::string ctx = where + ": " + std::string(kMetadataKey) + ": " + single_quoted(key);
      if (!first_key) json += ",";
      json += json_string(key, ctx) + ":" + json_string(value, ctx);
      first_key = false;
    }
    json += "}";
    first = false;
  }
  std::set<std::string_view> seen;
  std::uint64_t offset = 0;
  for (const auto& record : tensors) {
    const std::string ctx = where + ": tensor " + single_quoted(record.name);
    if (record.name == kMetadataKey) throw_input(ctx, "reserved name");
    if (!seen.insert(record.name).second) throw_input(ctx, "duplicate name");
    auto expected = byte_count(record.shape, record.dtype);
    if (!expected) throw_input(ctx, "invalid shape " + shape_text(record.shape));
    if (record.bytes.size() != *expected) {
      throw_input(ctx, std::to_string(record.bytes.size()) + " bytes given, shape " +
                           shape_text(record.shape) + " " + std::string(dtype_name(record.dtype)) +
                           " needs " + std::to_string(*expected));
    }
    if (!first) json += ",";
    first = false;
    json += json_string(record.name, ctx) + ":{\"dtype\":\"" +
            std::string(dtype_name(record.dtype)) + "\",\"shape\":" + shape_text(record.shape) +
            ",\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(offset + *expected) + "]}";
    offset += *expected;
  }
  json += "}";
  json.append((8 - json.size() % 8) % 8, ' ');
  if (json.size() > kMaxHeaderBytes) {
    throw_input(where, "header of " + std::to_string(json.size()) + " bytes exceeds the limit");
  }
  return json;
}

std::array<std::byte, kLengthBytes> le64_bytes(std::uint64_t value) {
  std::array<std::byte, kLengthBytes> out{};
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

}  // namespace

std::vector<std::byte> encode_safetensors(const std::vector<TensorRecord>& tensors,
                                          const std::map<std::string, std::string>& metadata) {
  const std::string header = build_header(tensors, metadata, "safetensors encode");
  std::size_t total = kLengthBytes + header.size();
  for (const auto& record : tensors) total += record.bytes.size();
  std::vector<std::byte> out;
  out.reserve(total);
  const auto length = le64_bytes(header.size());
  out.insert(out.end(), length.begin(), length.end());
  const auto* text = reinterpret_cast<const std::byte*>(header.data());
  out.insert(out.end(), text, text + header.size());
  for (const auto& record : tensors) {
    out.insert(out.end(), record.bytes.begin(), record.bytes.end());
  }
  return out;
}

std::string write_safetensors(const std::filesystem::path& path,
                              const std::vector<TensorRecord>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  // Validate before any file exists.
  const std::string header = build_header(tensors, metadata, path.string());
  return atomic_write(path, [&](FileSink& sink) {
    sink.write(le64_bytes(header.size()));
    sink.write(std::string_view(header));
    for (const auto& record : tensors) sink.write(record.bytes);
  });
}

}  // namespace h3p::io
