#include "core/io/seed_record.h"

#include <nlohmann/json.hpp>
#include <set>

#include "core/common/error.h"
#include "core/io/atomic_file.h"

namespace h3p::io {

namespace fs = std::filesystem;

std::string SeedRecord::describe() const {
  return "seeded " + rule + " seed=" + std::to_string(seed) + (all_fp32 ? " fp32" : "");
}

std::optional<SeedRecord> read_seed_record(const fs::path& component_dir) {
  const fs::path file = component_dir / kSeedRecordFile;
  std::error_code error;
  if (!fs::exists(file, error)) return std::nullopt;
  const std::string origin = file.string();
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw_input(origin, std::string("not valid JSON: ") + e.what());
  }
  if (!json.is_object()) throw_input(origin, "must be a JSON object");
  static const std::set<std::string> known = {"format", "rule", "seed", "all_fp32"};
  for (const auto& [key, value] : json.items()) {
    if (!known.contains(key)) throw_input(origin, "field '" + key + "': unknown field");
  }
  if (json.value("format", "") != "h3parity-seeded-weights") {
    throw_input(origin, "field 'format': must be \"h3parity-seeded-weights\"");
  }
  SeedRecord record;
  const auto rule = json.find("rule");
  if (rule == json.end() || !rule->is_string()) throw_input(origin, "field 'rule': missing");
  record.rule = rule->get<std::string>();
  if (record.rule != kSeededRule) {
    throw_input(origin, "field 'rule': '" + record.rule + "' is not a rule this build draws (" +
                            kSeededRule + ")");
  }
  const auto seed = json.find("seed");
  if (seed == json.end() || !seed->is_number_unsigned()) {
    throw_input(origin, "field 'seed': must be a non-negative integer");
  }
  record.seed = seed->get<uint64_t>();
  if (const auto fp32 = json.find("all_fp32"); fp32 != json.end()) {
    if (!fp32->is_boolean()) throw_input(origin, "field 'all_fp32': must be true or false");
    record.all_fp32 = fp32->get<bool>();
  }
  return record;
}

void write_seed_record(const fs::path& component_dir, const SeedRecord& record) {
  const nlohmann::json json = {{"format", "h3parity-seeded-weights"},
                               {"rule", record.rule},
                               {"seed", record.seed},
                               {"all_fp32", record.all_fp32}};
  atomic_write_text(component_dir / kSeedRecordFile, json.dump(2) + "\n");
}

}  // namespace h3p::io
