// Fuzz target: the safetensors reader on arbitrary file bytes, parsed in memory
// (SafetensorsFile::parse runs the same validation as open() without the per-input file write
// and mapping, which made this target five times slower). An accepted file must be internally
// consistent (every tensor's bytes inside the image, found by name) and must survive a round
// trip through the writer unchanged.
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
  const auto again =
      SafetensorsFile::parse(h3p::io::encode_safetensors(records, file.metadata()), "roundtrip");
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
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  try {
    check_accepted(SafetensorsFile::parse({bytes, bytes + size}, "input.safetensors"));
  } catch (const h3p::InputError&) {
    // A refusal with a message is the expected outcome for most inputs.
  }
  return 0;
}
