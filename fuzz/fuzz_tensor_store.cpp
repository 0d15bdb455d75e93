// Fuzz target: the sharded tensor store (TensorStore::open). One input describes a component
// directory: its parts, separated by "\n====\n", are the index JSON
// (model.safetensors.index.json; when empty, no index is written and the second part is the
// single model.safetensors) and up to four shards model-0000N.safetensors (N = 1..4). The
// directory also holds fixed traps an index may name: a symlink leaving the directory, a
// symlink inside it, a subdirectory and a FIFO. An accepted store must find every tensor it
// names, in a file it opened, with bytes inside that file.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/error.h"
#include "core/io/tensor_store.h"
#include "fuzz/fuzz_util.h"

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxShards = 4;

// The component directory with its fixed traps, made once.
const fs::path& component_dir() {
  static const fs::path dir = [] {
    const fs::path root = h3p::fuzz::scratch_dir();
    const fs::path d = root / "component";
    fs::create_directories(d / "subdir.safetensors");
    // A valid, empty safetensors file outside the component, reachable only through a symlink.
    h3p::fuzz::write_file(root / "outside.safetensors", std::string("\x02\0\0\0\0\0\0\0{}", 10));
    fs::create_symlink("../outside.safetensors", d / "escape.safetensors");
    fs::create_symlink("model-00001.safetensors", d / "inside.safetensors");
    if (::mkfifo((d / "fifo.safetensors").c_str(), 0600) != 0) std::abort();
    return d;
  }();
  return dir;
}

std::string shard_name(std::size_t i) {
  return "model-0000" + std::to_string(i + 1) + ".safetensors";
}

// The files an input may lay out, and what each held after the last input (nullopt: absent).
// Only files whose content changes are written or removed, so most executions (a mutation
// touches one part) cost one file write instead of six removals and up to five writes.
struct Layout {
  std::vector<std::string> names;
  std::vector<std::optional<std::string>> held;
  Layout() {
    names.push_back("model.safetensors.index.json");
    names.push_back("model.safetensors");
    for (std::size_t i = 0; i < kMaxShards; ++i) names.push_back(shard_name(i));
    held.resize(names.size());
  }
  // Makes file `slot` hold `content` (or be absent).
  void set(const fs::path& dir, std::size_t slot, std::optional<std::string_view> content) {
    if (!content) {
      if (!held[slot]) return;
      std::error_code ec;
      fs::remove(dir / names[slot], ec);
      if (ec) std::abort();
      held[slot].reset();
      return;
    }
    if (held[slot] && *held[slot] == *content) return;
    h3p::fuzz::write_file(dir / names[slot], *content);
    held[slot] = std::string(*content);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& dir = component_dir();
  static Layout layout;
  const auto parts =
      h3p::fuzz::split_parts(h3p::fuzz::as_text(data, size), "\n====\n", kMaxShards + 1);
  // Step 1: lay the directory out for this input (and only this input).
  std::vector<std::optional<std::string_view>> want(layout.names.size());
  if (!parts[0].empty()) {
    want[0] = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) want[1 + i] = parts[i];
  } else if (parts.size() > 1) {
    want[1] = parts[1];
  }
  for (std::size_t slot = 0; slot < want.size(); ++slot) layout.set(dir, slot, want[slot]);
  // Step 2: open and check what an accepted store promises.
  try {
    const auto store = h3p::io::TensorStore::open(dir, "model");
    for (const auto& name : store.names()) {
      const auto found = store.at(name);
      if (found.file == nullptr || found.info == nullptr || found.info->name != name) std::abort();
      bool owned = false;
      for (const auto& file : store.files()) owned = owned || &file == found.file;
      if (!owned) std::abort();
      const auto bytes = found.file->bytes(*found.info);
      if (bytes.size() != found.info->nbytes()) std::abort();
      const fs::path parent = found.file->path().parent_path();
      if (parent != dir) std::abort();
    }
    if (store.find("\x01 no such tensor").file != nullptr) std::abort();
  } catch (const h3p::InputError&) {
    // Refused with a message: expected for most inputs.
  }
  return 0;
}
