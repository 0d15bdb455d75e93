#pragma once
// Reading the fields of one JSON object of a contract strictly (inside core/contract only):
// every error is an InputError "<file>: field '<prefix><key>': <what>".
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "core/common/error.h"

namespace h3p::contract {

// Reads fields of one JSON object, naming `<file>: field '<prefix><key>'` in every error.
class FieldReader {
 public:
  using json = nlohmann::json;
  FieldReader(const json& object, std::string file, std::string prefix)
      : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(file_ + ": field '" + prefix_ + key + "': " + what);
  }

  // Refuses every key not in `allowed`.
  void refuse_unknown(const std::set<std::string>& allowed) const {
    for (const auto& [key, value] : object_.items()) {
      if (!allowed.contains(key)) fail(key, "unknown field");
    }
  }

  bool has(const std::string& key) const { return object_.contains(key); }

  const json& require(const std::string& key) const {
    auto it = object_.find(key);
    if (it == object_.end()) fail(key, "missing");
    return *it;
  }

  std::string string(const std::string& key) const {
    const json& value = require(key);
    if (!value.is_string()) fail(key, "must be a string");
    return value.get<std::string>();
  }

  std::string non_empty_string(const std::string& key) const {
    std::string value = string(key);
    if (value.empty()) fail(key, "must not be empty");
    return value;
  }

  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max,
                       const std::string& range_text) const {
    const json& value = require(key);
    if (!value.is_number_integer()) fail(key, "must be an integer, " + range_text);
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
      fail(key, "must be " + range_text);
    }
    const std::int64_t result = value.get<std::int64_t>();
    if (result < min || result > max) fail(key, "must be " + range_text);
    return result;
  }

  double number(const std::string& key) const {
    const json& value = require(key);
    if (!value.is_number()) fail(key, "must be a number");
    const double result = value.get<double>();
    if (!std::isfinite(result)) fail(key, "must be finite");
    return result;
  }

  bool boolean(const std::string& key) const {
    const json& value = require(key);
    if (!value.is_boolean()) fail(key, "must be true or false");
    return value.get<bool>();
  }

  const std::string& file() const { return file_; }

 private:
  const json& object_;
  std::string file_;
  std::string prefix_;
};

}  // namespace h3p::contract
