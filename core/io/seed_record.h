#pragma once
// The seed record that stands in for a model component's weight files when its weights are
// seeded (core/model/seeded_weights.h draws them): which rule, which seed, which dtypes.
// Torch-free, so identity hashing and the front end read it without LibTorch.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace h3p::io {

// The file that stands in for a component's weight files.
inline constexpr const char* kSeedRecordFile = "h3parity-seeded-weights.json";
// The draw rule this build implements; a record naming another rule is refused.
inline constexpr const char* kSeededRule = "splitmix64-irwin-hall4-v1";

struct SeedRecord {
  uint64_t seed = 0;
  std::string rule = kSeededRule;
  bool all_fp32 = false;  // transformer only: every tensor fp32 instead of the checkpoint dtypes

  // "seeded <rule> seed=<n>[ fp32]": how a run's identity names the weights.
  std::string describe() const;
};

// The component directory's seed record, or nullopt when it has none. A record that is not
// valid JSON, has unknown fields or names another rule throws InputError naming the file.
std::optional<SeedRecord> read_seed_record(const std::filesystem::path& component_dir);

// Writes `<component_dir>/h3parity-seeded-weights.json` atomically.
void write_seed_record(const std::filesystem::path& component_dir, const SeedRecord& record);

}  // namespace h3p::io
