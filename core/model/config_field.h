#pragma once
// Reading one field of a diffusers config.json into a config struct.
#include <nlohmann/json.hpp>

#include <string>

#include "core/common/error.h"

namespace h3p::model {

// What a null value of a field means: the field's default (the VAE configs write null for
// "use the default") or a wrong type (the transformer's config never holds null).
enum class ConfigNull { is_default, is_wrong_type };

// Reads json[key] into `out`; an absent key leaves `out` (diffusers fills defaults for absent
// keys). InputError "<origin>: field '<key>': has the wrong type" when the value does not convert.
template <typename T>
void read_config_field(const nlohmann::json& json, const char* key, T& out, const std::string& origin,
                       ConfigNull null = ConfigNull::is_wrong_type) {
  auto it = json.find(key);
  if (it == json.end() || (it->is_null() && null == ConfigNull::is_default)) return;
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    throw_input(origin, std::string("field '") + key + "': has the wrong type");
  }
}

}  // namespace h3p::model
