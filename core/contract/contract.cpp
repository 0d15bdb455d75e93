#include "core/contract/contract.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "core/common/error.h"
#include "core/contract/field_reader.h"
#include "core/contract/json_text.h"
#include "core/io/atomic_file.h"
#include "core/io/sha256.h"

namespace h3p::contract {

namespace {

using nlohmann::json;

bool is_directory_safe(const std::string& name) {
  if (name.empty() || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::filesystem::path resolve(const std::filesystem::path& source, const std::string& text) {
  if (text.empty()) return {};
  std::filesystem::path path(text);
  if (path.is_relative() && !source.empty()) path = source.parent_path() / path;
  return path.lexically_normal();
}

std::string format_number(double value) {
  // Shortest text that parses back to the same double, as the JSON form has it.
  return json(value).dump();
}

Bounds parse_bounds(const json& value, const std::string& file) {
  if (!value.is_object()) {
    throw InputError(file + ": field 'bounds': must be an object");
  }
  FieldReader reader(value, file, "bounds.");
  reader.refuse_unknown({"psnr_db_min", "ssim_min", "temporal_rmse_max", "audio_rel_l2_max"});
  Bounds bounds;
  bounds.psnr_db_min = reader.number("psnr_db_min");
  bounds.ssim_min = reader.number("ssim_min");
  if (bounds.ssim_min < -1.0 || bounds.ssim_min > 1.0) {
    reader.fail("ssim_min", "must be in [-1, 1]");
  }
  bounds.temporal_rmse_max = reader.number("temporal_rmse_max");
  if (bounds.temporal_rmse_max < 0.0) reader.fail("temporal_rmse_max", "must be >= 0");
  bounds.audio_rel_l2_max = reader.number("audio_rel_l2_max");
  if (bounds.audio_rel_l2_max < 0.0) reader.fail("audio_rel_l2_max", "must be >= 0");
  return bounds;
}

std::vector<std::uint64_t> parse_seeds(const FieldReader& reader) {
  const json& value = reader.require("seeds");
  if (!value.is_array()) reader.fail("seeds", "must be an array of non-negative integers");
  if (value.empty()) reader.fail("seeds", "must not be empty");
  std::vector<std::uint64_t> seeds;
  std::set<std::uint64_t> seen;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const json& seed = value[i];
    if (!seed.is_number_unsigned() &&
        !(seed.is_number_integer() && seed.get<std::int64_t>() >= 0)) {
      reader.fail("seeds", "entry " + std::to_string(i) + " must be a non-negative integer");
    }
    const std::uint64_t s = seed.get<std::uint64_t>();
    if (!seen.insert(s).second) {
      reader.fail("seeds", "seed " + std::to_string(s) + " appears twice");
    }
    seeds.push_back(s);
  }
  return seeds;
}

}  // namespace

std::string Bounds::describe() const {
  std::ostringstream out;
  out << "psnr_db_min=" << format_number(psnr_db_min) << " ssim_min=" << format_number(ssim_min)
      << " temporal_rmse_max=" << format_number(temporal_rmse_max)
      << " audio_rel_l2_max=" << format_number(audio_rel_l2_max);
  return out.str();
}

bool Contract::model_is_builtin() const { return is_builtin_model(model); }

std::optional<BuiltinModel> Contract::builtin_model() const { return parse_builtin_model(model); }

std::filesystem::path Contract::model_path() const {
  return model_is_builtin() ? std::filesystem::path() : resolve(source, model);
}

std::filesystem::path Contract::conditioning_path() const {
  return resolve(source, conditioning_file);
}

std::filesystem::path Contract::reference_image_path() const {
  return resolve(source, reference_image);
}

std::string Contract::describe() const {
  std::ostringstream out;
  out << "contract: " << name << "\n";
  out << "  model: " << model << "\n";
  if (!conditioning_file.empty()) {
    out << "  conditioning_file: " << conditioning_file << "\n";
  } else {
    out << "  prompt: " << json(prompt).dump() << "\n";
    out << "  text_tokens: " << text_tokens << "\n";
  }
  if (!reference_image.empty()) out << "  reference_image: " << reference_image << "\n";
  out << "  seeds:";
  for (std::uint64_t seed : seeds) out << " " << seed;
  out << "\n";
  out << "  frames: " << frames << " at " << fps << " fps, " << width << "x" << height << "\n";
  out << "  audio_sample_rate: " << audio_sample_rate << "\n";
  out << "  sampling_steps: " << sampling_steps << " (video_shift " << format_number(video_shift)
      << ", audio_shift " << format_number(audio_shift) << ")\n";
  out << "  bounds: " << bounds.describe() << "\n";
  out << "  require_gate: " << (require_gate ? "true" : "false") << "\n";
  if (calibration) {
    out << "  calibration: rule " << calibration->rule << ", " << calibration->variants.size()
        << " variants on seeds";
    for (std::uint64_t seed : calibration->seeds) out << " " << seed;
    out << "\n";
  }
  return out.str();
}

Contract parse_contract(const json& value, const std::filesystem::path& source) {
  const std::string file = source.empty() ? std::string("<contract>") : source.string();
  if (!value.is_object()) throw InputError(file + ": a contract must be a JSON object");
  FieldReader reader(value, file, "");
  reader.refuse_unknown({"name", "model", "prompt", "text_tokens", "conditioning_file",
                         "reference_image", "seeds", "frames", "width", "height", "fps",
                         "audio_sample_rate", "sampling_steps", "video_shift", "audio_shift",
                         "bounds", "require_gate", "calibration"});
  Contract contract;
  contract.source = source;

  contract.name = reader.non_empty_string("name");
  if (!is_directory_safe(contract.name)) {
    reader.fail("name", "must use only letters, digits, '.', '_', '-' and not start with '.'");
  }

  contract.model = reader.non_empty_string("model");
  try {
    parse_builtin_model(contract.model);
  } catch (const InputError& e) {
    reader.fail("model", e.what());
  }

  // Conditioning: a prompt (synthesised, needs text_tokens) or a file, never both.
  const bool has_prompt = reader.has("prompt");
  const bool has_file = reader.has("conditioning_file");
  if (has_prompt && has_file) {
    reader.fail("conditioning_file", "give either 'prompt' or 'conditioning_file', not both");
  }
  if (!has_prompt && !has_file) {
    reader.fail("prompt", "missing: give either 'prompt' or 'conditioning_file'");
  }
  if (has_prompt) {
    contract.prompt = reader.non_empty_string("prompt");
    contract.text_tokens = reader.integer("text_tokens", 1, 1 << 20, "in [1, 1048576]");
  } else {
    contract.conditioning_file = reader.non_empty_string("conditioning_file");
    if (reader.has("text_tokens")) {
      reader.fail("text_tokens", "only allowed with 'prompt' (a conditioning file sets it)");
    }
  }
  if (reader.has("reference_image")) {
    contract.reference_image = reader.non_empty_string("reference_image");
  }

  contract.seeds = parse_seeds(reader);
  contract.frames = static_cast<int>(reader.integer("frames", 5, 100000, "in [5, 100000]"));
  contract.width =
      static_cast<int>(reader.integer("width", 32, 16384, "a multiple of 32 in [32, 16384]"));
  if (contract.width % 32 != 0) reader.fail("width", "must be a multiple of 32");
  contract.height =
      static_cast<int>(reader.integer("height", 32, 16384, "a multiple of 32 in [32, 16384]"));
  if (contract.height % 32 != 0) reader.fail("height", "must be a multiple of 32");
  contract.fps = static_cast<int>(reader.integer("fps", 1, 1000, "in [1, 1000]"));
  contract.audio_sample_rate =
      static_cast<int>(reader.integer("audio_sample_rate", 1, 1000000, "in [1, 1000000]"));
  contract.sampling_steps =
      static_cast<int>(reader.integer("sampling_steps", 2, 10000, "in [2, 10000]"));
  contract.video_shift = reader.number("video_shift");
  if (contract.video_shift <= 0.0) reader.fail("video_shift", "must be > 0");
  contract.audio_shift = reader.number("audio_shift");
  if (contract.audio_shift <= 0.0) reader.fail("audio_shift", "must be > 0");
  contract.bounds = parse_bounds(reader.require("bounds"), file);
  contract.require_gate = reader.boolean("require_gate");
  if (reader.has("calibration")) {
    contract.calibration = parse_calibration(reader.require("calibration"), file, contract.seeds,
                                             contract.bounds);
  }
  return contract;
}

Contract load_contract(const std::filesystem::path& path) {
  const std::string text = io::read_file(path);
  return parse_contract(parse_json_text(text, path.string()), path);
}

json to_json(const Contract& contract) {
  json out = json::object();
  out["name"] = contract.name;
  out["model"] = contract.model;
  if (!contract.prompt.empty()) out["prompt"] = contract.prompt;
  if (contract.text_tokens != 0) out["text_tokens"] = contract.text_tokens;
  if (!contract.conditioning_file.empty()) out["conditioning_file"] = contract.conditioning_file;
  if (!contract.reference_image.empty()) out["reference_image"] = contract.reference_image;
  out["seeds"] = contract.seeds;
  out["frames"] = contract.frames;
  out["width"] = contract.width;
  out["height"] = contract.height;
  out["fps"] = contract.fps;
  out["audio_sample_rate"] = contract.audio_sample_rate;
  out["sampling_steps"] = contract.sampling_steps;
  out["video_shift"] = contract.video_shift;
  out["audio_shift"] = contract.audio_shift;
  out["bounds"] = {{"psnr_db_min", contract.bounds.psnr_db_min},
                   {"ssim_min", contract.bounds.ssim_min},
                   {"temporal_rmse_max", contract.bounds.temporal_rmse_max},
                   {"audio_rel_l2_max", contract.bounds.audio_rel_l2_max}};
  out["require_gate"] = contract.require_gate;
  // Only when present, so that the digest of a contract without one is what it always was.
  if (contract.calibration) out["calibration"] = to_json(*contract.calibration);
  return out;
}

std::string contract_digest(const Contract& contract) {
  return io::sha256_hex(std::string_view(to_json(contract).dump()));
}

}  // namespace h3p::contract
