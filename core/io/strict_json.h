#pragma once
// Private to core/io: JSON parsing that refuses duplicate object keys. nlohmann::json keeps
// the last of two equal keys silently; a file format that names tensors by key must not.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace h3p::io {

// Deepest nesting of arrays and objects accepted. The formats read here nest three levels;
// the bound keeps hostile input from driving recursive code (dump, compare) off the stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses `text` as one JSON value (surrounding whitespace allowed). Throws InputError
// "<context>: ..." on invalid JSON, on nesting deeper than kMaxJsonDepth, or on a key repeated
// inside one object, naming the key and the key of the object that holds it.
nlohmann::json parse_json_unique_keys(std::string_view text, const std::string& context);

}  // namespace h3p::io
