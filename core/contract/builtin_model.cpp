#include "core/contract/builtin_model.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <string_view>
#include <vector>

#include "core/common/error.h"

namespace h3p::contract {
namespace {

constexpr std::string_view kPreset = "preset:";
constexpr std::string_view kSeeded = "seeded:";

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = {"tiny", "small", "full-shape"};
  return names;
}

const std::vector<std::string>& decoder_names() {
  static const std::vector<std::string> names = {"tiny", "released", "none"};
  return names;
}

std::string listing(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

uint64_t parse_unsigned(std::string_view key, std::string_view value) {
  uint64_t out = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    throw InputError("setting '" + std::string(key) + "': '" + std::string(value) +
                     "' is not a non-negative integer");
  }
  return out;
}

}  // namespace

std::string BuiltinModel::directory_name() const {
  if (!seeded && !layers && !seed && decoders.empty()) return preset;
  std::string name = (seeded ? "seeded-" : "") + preset;
  if (layers) name += "-l" + std::to_string(*layers);
  if (seed) name += "-s" + std::to_string(*seed);
  if (!decoders.empty()) name += "-" + decoders;
  return name;
}

bool is_builtin_model(const std::string& text) {
  return text.starts_with(kPreset) || text.starts_with(kSeeded);
}

std::optional<BuiltinModel> parse_builtin_model(const std::string& text) {
  if (!is_builtin_model(text)) return std::nullopt;
  BuiltinModel model;
  model.seeded = text.starts_with(kSeeded);
  const std::string_view rest = std::string_view(text).substr(kPreset.size());
  const std::size_t query = rest.find('?');
  model.preset = std::string(rest.substr(0, query));
  const auto& presets = preset_names();
  if (std::find(presets.begin(), presets.end(), model.preset) == presets.end()) {
    throw InputError("unknown preset '" + model.preset + "' (known: " + listing(presets) + ")");
  }
  if (query == std::string_view::npos) return model;
  std::set<std::string> seen;
  std::string_view settings = rest.substr(query + 1);
  while (true) {
    const std::size_t amp = settings.find('&');
    const std::string_view item = settings.substr(0, amp);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw InputError("setting '" + std::string(item) + "': expected key=value");
    }
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    if (!seen.insert(key).second) throw InputError("setting '" + key + "': given twice");
    if (key == "layers") {
      const uint64_t layers = parse_unsigned(key, value);
      if (layers < 1 || layers > 1000) {
        throw InputError("setting 'layers': must be 1..1000, got " + std::string(value));
      }
      model.layers = static_cast<int64_t>(layers);
    } else if (key == "seed") {
      model.seed = parse_unsigned(key, value);
    } else if (key == "decoders") {
      model.decoders = std::string(value);
      const auto& names = decoder_names();
      if (std::find(names.begin(), names.end(), model.decoders) == names.end()) {
        throw InputError("setting 'decoders': unknown '" + model.decoders +
                         "' (known: " + listing(names) + ")");
      }
    } else {
      throw InputError("setting '" + key + "': unknown (known: layers, seed, decoders)");
    }
    if (amp == std::string_view::npos) break;
    settings = settings.substr(amp + 1);
  }
  return model;
}

}  // namespace h3p::contract
