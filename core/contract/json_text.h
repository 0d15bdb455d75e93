#pragma once
// Parsing JSON text for the contract and run files: nlohmann::json silently keeps the last of
// two equal keys, which would let a hand-edited file say two things at once; this refuses it.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace h3p::contract {

// Parses `text` as one JSON value. Throws InputError "<context>: ..." for invalid JSON
// (truncated included) or a key repeated inside one object (the key is named).
nlohmann::json parse_json_text(std::string_view text, const std::string& context);

}  // namespace h3p::contract
