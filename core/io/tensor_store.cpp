#include "core/io/tensor_store.h"

#include <nlohmann/json.hpp>
#include <system_error>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/strict_json.h"

namespace h3p::io {

namespace {

namespace fs = std::filesystem;

// Refuses a shard name that is not a plain file name inside the directory.
void check_shard_name(const std::string& shard, const std::string& index) {
  const std::string ctx = index + ": weight_map: shard " + single_quoted(shard);
  if (shard.empty()) throw_input(ctx, "not a plain file name (empty)");
  if (shard.find('/') != std::string::npos || shard.find('\\') != std::string::npos) {
    throw_input(ctx, "not a plain file name (path separator)");
  }
  if (shard.find('\0') != std::string::npos) throw_input(ctx, "not a plain file name (NUL)");
  if (shard == "." || shard.find("..") != std::string::npos) {
    throw_input(ctx, "not a plain file name ('.' or '..')");
  }
}

// Refuses a file of the component (index, single file or shard) that is a symlink resolving
// outside `dir`; `ctx` names it in the error.
void check_confined(const fs::path& dir, const fs::path& path, const std::string& ctx) {
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (ec || !fs::is_symlink(status)) return;  // a missing or plain file fails or passes on open
  const fs::path real = fs::canonical(path, ec);
  if (ec) throw_input(ctx, "symlink cannot be resolved: " + ec.message());
  const fs::path base = fs::canonical(dir, ec);
  if (ec) throw_input(dir.string(), "cannot resolve directory: " + ec.message());
  const fs::path rel = real.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    throw_input(ctx, "symlink resolves outside the directory, to " + real.string());
  }
}

// weight_map: tensor name -> shard file name, checked for shape and non-emptiness.
std::map<std::string, std::string> read_weight_map(const fs::path& index_path) {
  const std::string where = index_path.string();
  const nlohmann::json index = parse_json_unique_keys(read_file(index_path), where);
  if (!index.is_object()) throw_input(where, "not a JSON object");
  if (!index.contains("weight_map")) throw_input(where, "missing field 'weight_map'");
  const auto& map = index["weight_map"];
  if (!map.is_object()) throw_input(where, "weight_map: not a JSON object");
  if (map.empty()) throw_input(where, "weight_map: empty");
  std::map<std::string, std::string> out;
  for (const auto& [tensor, shard] : map.items()) {
    if (!shard.is_string())
      throw_input(where, "weight_map: " + single_quoted(tensor) + ": not a string");
    out.emplace(tensor, shard.get<std::string>());
  }
  return out;
}

}  // namespace

TensorStore TensorStore::open(const fs::path& dir, const std::string& stem) {
  TensorStore store;
  store.dir_ = dir;
  const fs::path index_path = dir / (stem + ".safetensors.index.json");
  const fs::path single_path = dir / (stem + ".safetensors");
  std::error_code ec;

  if (!fs::exists(index_path, ec)) {
    if (!fs::exists(single_path, ec)) {
      throw_input(dir.string(), "neither " + single_path.filename().string() + " nor " +
                                    index_path.filename().string() + " exists");
    }
    check_confined(dir, single_path, single_path.string());
    store.files_.push_back(SafetensorsFile::open(single_path));
    for (const auto& info : store.files_.front().tensors()) store.where_.emplace(info.name, 0);
    return store;
  }

  // Sharded: group the map by shard (std::map keeps the shards sorted by name).
  const std::string index = index_path.string();
  check_confined(dir, index_path, index);
  const auto weight_map = read_weight_map(index_path);
  std::map<std::string, std::vector<std::string>> by_shard;
  for (const auto& [tensor, shard] : weight_map) by_shard[shard].push_back(tensor);

  for (const auto& [shard, listed] : by_shard) {
    check_shard_name(shard, index);
    const fs::path shard_path = dir / shard;
    check_confined(dir, shard_path, index + ": shard " + single_quoted(shard));
    SafetensorsFile file = SafetensorsFile::open(shard_path);
    const std::size_t slot = store.files_.size();
    // Every listed tensor is in its shard ...
    for (const auto& tensor : listed) {
      if (file.find(tensor) == nullptr) {
        throw_input(index, "tensor " + single_quoted(tensor) + ": missing from shard " +
                               single_quoted(shard));
      }
      store.where_.emplace(tensor, slot);
    }
    // ... and every tensor of the shard is listed for this shard.
    for (const auto& info : file.tensors()) {
      auto it = weight_map.find(info.name);
      if (it == weight_map.end()) {
        throw_input(shard_path.string(), "tensor " + single_quoted(info.name) +
                                             ": not listed in the weight_map of " + index);
      }
      if (it->second != shard) {
        throw_input(shard_path.string(), "tensor " + single_quoted(info.name) + ": also in shard " +
                                             single_quoted(it->second) +
                                             " (a tensor may be in one shard only)");
      }
    }
    store.files_.push_back(std::move(file));
  }
  return store;
}

std::vector<std::string> TensorStore::names() const {
  std::vector<std::string> out;
  out.reserve(where_.size());
  for (const auto& [name, slot] : where_) out.push_back(name);
  return out;
}

StoredTensor TensorStore::find(const std::string& name) const {
  auto it = where_.find(name);
  if (it == where_.end()) return {};
  const SafetensorsFile& file = files_[it->second];
  return {&file, file.find(name)};
}

StoredTensor TensorStore::at(const std::string& name) const {
  StoredTensor found = find(name);
  if (found.file == nullptr) throw_input(dir_.string(), "missing tensor " + single_quoted(name));
  return found;
}

}  // namespace h3p::io
