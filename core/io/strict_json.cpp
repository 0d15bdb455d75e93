#include "core/io/strict_json.h"

#include <set>
#include <vector>

#include "core/common/error.h"

namespace h3p::io {

namespace {

// One open container while parsing: its keys so far (objects only) and the key it sits under.
struct Frame {
  bool is_object = false;
  std::string under;
  std::string last_key;
  std::set<std::string, std::less<>> keys;
};

}  // namespace

nlohmann::json parse_json_unique_keys(std::string_view text, const std::string& context) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<Frame> stack;
  auto on_event = [&](int /*depth*/, Event event, nlohmann::json& parsed) -> bool {
    switch (event) {
      case Event::object_start:
      case Event::array_start: {
        if (stack.size() >= kMaxJsonDepth) {
          throw_input(context, "invalid JSON: nested deeper than " +
                                   std::to_string(kMaxJsonDepth) + " levels");
        }
        Frame frame;
        frame.is_object = event == Event::object_start;
        if (!stack.empty())
          frame.under = stack.back().is_object ? stack.back().last_key : stack.back().under;
        stack.push_back(std::move(frame));
        break;
      }
      case Event::object_end:
      case Event::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case Event::key: {
        Frame& top = stack.back();
        std::string key = parsed.get<std::string>();
        if (!top.keys.insert(key).second) {
          if (stack.size() == 1) throw_input(context, "duplicate entry '" + key + "'");
          throw_input(context, "'" + top.under + "': duplicate key '" + key + "'");
        }
        top.last_key = std::move(key);
        break;
      }
      case Event::value:
        break;
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), on_event);
  } catch (const nlohmann::json::exception& e) {
    throw_input(context, std::string("invalid JSON: ") + e.what());
  }
}

}  // namespace h3p::io
