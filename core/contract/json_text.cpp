#include "core/contract/json_text.h"

#include <set>
#include <vector>

#include "core/common/error.h"

namespace h3p::contract {

nlohmann::json parse_json_text(std::string_view text, const std::string& context) {
  using Event = nlohmann::json::parse_event_t;
  // One entry per open container; arrays hold no keys, so their set stays empty.
  std::vector<std::set<std::string>> open;
  std::string duplicate;
  auto on_event = [&](int /*depth*/, Event event, nlohmann::json& parsed) -> bool {
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (open.size() >= kMaxJsonDepth) {
          throw_input(context, "not valid JSON: nested deeper than " +
                                   std::to_string(kMaxJsonDepth) + " levels");
        }
        open.emplace_back();
        break;
      case Event::object_end:
      case Event::array_end:
        if (!open.empty()) open.pop_back();
        break;
      case Event::key:
        if (!open.empty() && !open.back().insert(parsed.get<std::string>()).second &&
            duplicate.empty()) {
          duplicate = parsed.get<std::string>();
        }
        break;
      case Event::value:
        break;
    }
    return true;
  };
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text.begin(), text.end(), on_event);
  } catch (const nlohmann::json::exception& e) {
    // Drop the library's "[json.exception.parse_error.101] " tag; keep line, column and reason.
    std::string reason = e.what();
    if (reason.starts_with("[json.exception.")) {
      if (auto end = reason.find("] "); end != std::string::npos) reason.erase(0, end + 2);
    }
    throw_input(context, "not valid JSON (truncated or corrupt): " + reason);
  }
  if (!duplicate.empty()) throw_input(context, "duplicate key '" + duplicate + "'");
  return value;
}

}  // namespace h3p::contract
