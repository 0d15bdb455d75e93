// Fuzz target: the safetensors reader (SafetensorsFile::open) on arbitrary file bytes. An
// accepted file must be internally consistent (every tensor's bytes inside the mapping, found
// by name) and must survive a round trip through the writer unchanged.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/common/error.h"
#include "core/io/safetensors.h"
#include "fuzz/fuzz_util.h"

namespace {

using h3p::io::SafetensorsFile;

// Checks what every accepted file must satisfy; aborts (a finding) otherwise.
void check_accepted(const SafetensorsFile& file) {
  std::vector<h3p::io::TensorRecord> records;
  volatile std::uint8_t sink = 0;
  for (const auto& info : file.tensors()) {
    if (file.find(info.name) != &info) std::abort();
    const auto bytes = file.bytes(info);
    if (bytes.size() != info.nbytes()) std::abort();
    if (info.numel() * h3p::io::dtype_size(info.dtype) != info.nbytes()) std::abort();
    if (!bytes.empty())
      sink =
          sink + static_cast<std::uint8_t>(bytes.front()) + static_cast<std::uint8_t>(bytes.back());
    records.push_back({info.name, info.dtype, info.shape, bytes});
  }
  // Round trip: the writer's image of what was read must read back identically.
  const auto image = h3p::io::encode_safetensors(records, file.metadata());
  const auto path = h3p::fuzz::scratch_dir() / "roundtrip.safetensors";
  h3p::fuzz::write_file(path, {reinterpret_cast<const char*>(image.data()), image.size()});
  const auto again = SafetensorsFile::open(path);
  if (again.metadata() != file.metadata()) std::abort();
  if (again.tensors().size() != file.tensors().size()) std::abort();
  for (const auto& info : file.tensors()) {
    const auto* other = again.find(info.name);
    if (other == nullptr || other->dtype != info.dtype || other->shape != info.shape) std::abort();
    const auto a = file.bytes(info);
    const auto b = again.bytes(*other);
    if (a.size() != b.size() || (!a.empty() && std::memcmp(a.data(), b.data(), a.size()) != 0))
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto path = h3p::fuzz::scratch_dir() / "input.safetensors";
  h3p::fuzz::write_file(path, h3p::fuzz::as_text(data, size));
  try {
    check_accepted(SafetensorsFile::open(path));
  } catch (const h3p::InputError&) {
    // A refusal with a message is the expected outcome for most inputs.
  }
  return 0;
}
