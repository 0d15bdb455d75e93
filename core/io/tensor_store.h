#pragma once
// Named tensors of one model component stored as diffusers stores them: a single
// `<stem>.safetensors` or a sharded `<stem>.safetensors.index.json` with its shards.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/io/safetensors.h"

namespace h3p::io {

// A located tensor: the file that holds it and its header entry.
struct StoredTensor {
  const SafetensorsFile* file = nullptr;
  const TensorInfo* info = nullptr;
};

// Opens every file of a component. No file of it (index, single file, shard) may be a symlink
// resolving outside the component directory. The index's `weight_map` must name shards that
// are plain file names inside the directory (no separators, no `..`), every listed tensor must
// exist in its shard, and no tensor may appear in two shards. Throws InputError naming the
// index or shard file and the tensor.
class TensorStore {
 public:
  // `dir` holds `<stem>.safetensors` or `<stem>.safetensors.index.json` (the index wins).
  static TensorStore open(const std::filesystem::path& dir, const std::string& stem);

  // All tensor names, sorted.
  std::vector<std::string> names() const;
  // nullopt-like: file == nullptr when absent.
  StoredTensor find(const std::string& name) const;
  // Throws InputError "<dir>: missing tensor '<name>'" when absent.
  StoredTensor at(const std::string& name) const;
  // The files in the order they were opened (one, or the shards sorted by name).
  const std::vector<SafetensorsFile>& files() const { return files_; }

 private:
  std::filesystem::path dir_;  // the component directory, for messages
  std::vector<SafetensorsFile> files_;
  std::map<std::string, std::size_t> where_;  // tensor name -> index in files_
};

}  // namespace h3p::io
