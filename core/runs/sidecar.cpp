#include "core/runs/sidecar.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/common/error.h"
#include "core/contract/json_text.h"
#include "core/runs/identity.h"

namespace h3p::runs {

StepRecord parse_sidecar(std::string_view text, const std::string& context,
                         const SidecarExpectation& expect) {
  const std::string& sidecar = context;
  // A sidecar is a few hundred bytes; the bound keeps the canonical-form check below (which
  // re-serialises with indentation) from amplifying a hostile file into gigabytes.
  if (text.size() > kMaxSidecarBytes) {
    throw_input(sidecar, std::to_string(text.size()) + " bytes, larger than any sidecar (" +
                             std::to_string(kMaxSidecarBytes) + " bytes at most)");
  }
  const nlohmann::json value = contract::parse_json_text(text, sidecar);
  if (!value.is_object()) throw_input(sidecar, "a sidecar must be a JSON object");
  // Canonical form: any edit that leaves valid JSON (whitespace, key order) is still refused.
  if (value.dump(2) + "\n" != text) {
    throw_input(sidecar, "not in the canonical form this build writes (edited or corrupt)");
  }
  static const std::set<std::string> allowed = {"format_version", "step",         "file",
                                                "file_digest",    "input_digest", "previous_digest",
                                                "inputs_saved"};
  for (const auto& [key, item] : value.items()) {
    if (!allowed.contains(key) && key != "segment") throw_field(sidecar, key, "unknown field");
  }
  for (const auto& key : allowed) {
    if (!value.contains(key)) throw_field(sidecar, key, "missing");
  }
  if (!value["format_version"].is_number_integer() ||
      value["format_version"].get<std::int64_t>() != kSidecarFormatVersion) {
    throw_field(sidecar, "format_version",
                "unsupported (this build reads " + std::to_string(kSidecarFormatVersion) + ")");
  }
  StepRecord record;
  if (expect.step) {
    if (!value["step"].is_number_integer() || value["step"].get<std::int64_t>() != *expect.step) {
      throw_field(sidecar, "step",
                  "is " + value["step"].dump() + ", expected " + std::to_string(*expect.step));
    }
    record.step = *expect.step;
  } else {
    if (!value["step"].is_number_unsigned() ||
        value["step"].get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      throw_field(sidecar, "step", "is " + value["step"].dump() + ", expected a step number");
    }
    record.step = static_cast<int>(value["step"].get<std::uint64_t>());
  }
  if (expect.file) {
    if (!value["file"].is_string() || value["file"].get<std::string>() != *expect.file) {
      throw_field(sidecar, "file",
                  "is " + value["file"].dump() + ", expected \"" + *expect.file + "\"");
    }
  } else if (!value["file"].is_string()) {
    throw_field(sidecar, "file", "is " + value["file"].dump() + ", expected a file name");
  }
  for (const char* key : {"file_digest", "input_digest", "previous_digest"}) {
    if (!value[key].is_string() || !is_sha256_hex(value[key].get<std::string>())) {
      throw_field(sidecar, key, "must be a lower-case hex SHA-256");
    }
  }
  record.file_digest = value["file_digest"].get<std::string>();
  record.input_digest = value["input_digest"].get<std::string>();
  record.previous_digest = value["previous_digest"].get<std::string>();
  if (!value["inputs_saved"].is_boolean())
    throw_field(sidecar, "inputs_saved", "must be a boolean");
  record.inputs_saved = value["inputs_saved"].get<bool>();
  if (value.contains("segment")) {
    if (!value["segment"].is_number_unsigned() ||
        value["segment"].get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
      throw_field(sidecar, "segment",
                  "is " + value["segment"].dump() + ", expected a segment number");
    }
    record.segment = static_cast<int>(value["segment"].get<std::uint64_t>());
  }
  return record;
}

}  // namespace h3p::runs
