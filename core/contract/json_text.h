#pragma once
// Parsing JSON text for the contract and run files: nlohmann::json silently keeps the last of
// two equal keys, which would let a hand-edited file say two things at once; this refuses it.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace h3p::contract {

// Deepest nesting of arrays and objects accepted; contract and run files nest a few levels,
// and the bound keeps hostile input from driving recursive code (dump, compare) off the stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses `text` as one JSON value. Throws InputError "<context>: ..." for invalid JSON
// (truncated included), nesting deeper than kMaxJsonDepth, or a key repeated inside one object
// (the key is named).
nlohmann::json parse_json_text(std::string_view text, const std::string& context);

}  // namespace h3p::contract
