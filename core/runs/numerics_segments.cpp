#include "core/runs/numerics_segments.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

#include "core/common/error.h"
#include "core/contract/json_text.h"
#include "core/io/atomic_file.h"

namespace h3p::runs {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Fields recorded for the reader but not compared: the CPU's marketing name (what dispatch
// reads is cpu.isa and each library's own choice).
const std::set<std::string>& informational_fields() {
  static const std::set<std::string> fields = {"cpu.model"};
  return fields;
}

void collect_leaves(const json& value, const std::string& path, std::map<std::string, json>& out) {
  if (value.is_object()) {  // an empty object has no fields
    for (const auto& [key, item] : value.items()) {
      collect_leaves(item, path.empty() ? key : path + "." + key, out);
    }
  } else {
    out[path] = value;
  }
}

std::string show(const std::map<std::string, json>& leaves, const std::string& field) {
  const auto it = leaves.find(field);
  return it == leaves.end() ? std::string("absent") : it->second.dump();
}

// A step number as the run files hold it: an unsigned integer no larger than 2^30.
bool is_step_number(const json& v) {
  return v.is_number_unsigned() && v.get<std::uint64_t>() <= (std::uint64_t{1} << 30);
}

NumericsSegment segment_from_json(const json& v, const std::string& file, std::size_t at) {
  const std::string where = "segments[" + std::to_string(at) + "]";
  if (!v.is_object()) throw_field(file, where, "must be an object");
  static const std::set<std::string> allowed = {"segment",  "first_step",     "check",
                                                "changed",  "recomputed_steps", "difference",
                                                "numerics", "host"};
  for (const auto& [key, item] : v.items()) {
    if (!allowed.contains(key)) throw_field(file, where + "." + key, "unknown field");
  }
  NumericsSegment s;
  auto integer = [&](const char* key) {
    if (!v.contains(key) || !is_step_number(v[key])) {
      throw_field(file, where + "." + key, "missing or not a step number");
    }
    return static_cast<int>(v[key].get<std::uint64_t>());
  };
  s.index = integer("segment");
  s.first_step = integer("first_step");
  if (!v.contains("check") || !v["check"].is_string())
    throw_field(file, where + ".check", "missing");
  s.check = v["check"].get<std::string>();
  static const std::set<std::string> checks = {"initial", "verified", "accepted", "unchecked"};
  if (!checks.contains(s.check)) {
    throw_field(file, where + ".check", "must be initial, verified, accepted or unchecked");
  }
  if (v.contains("changed")) {
    if (!v["changed"].is_array())
      throw_field(file, where + ".changed", "must be an array of strings");
    for (const json& c : v["changed"]) {
      if (!c.is_string()) throw_field(file, where + ".changed", "must be an array of strings");
      s.changed.push_back(c.get<std::string>());
    }
  }
  if (v.contains("recomputed_steps")) {
    const json& r = v["recomputed_steps"];
    if (!r.is_array())
      throw_field(file, where + ".recomputed_steps", "must be an array of step numbers");
    for (const json& step : r) {
      if (!is_step_number(step)) {
        throw_field(file, where + ".recomputed_steps", "must be an array of step numbers");
      }
      s.recomputed_steps.push_back(static_cast<int>(step.get<std::uint64_t>()));
    }
  }
  if (v.contains("difference") && !v["difference"].is_null()) {
    const json& d = v["difference"];
    if (!d.is_object() || !d.contains("step") || !is_step_number(d["step"]) ||
        !d.contains("output") || !d["output"].is_string() || !d.contains("rel_l2") ||
        !d["rel_l2"].is_number() || !d.contains("max_abs") || !d["max_abs"].is_number()) {
      throw_field(file, where + ".difference",
                  "must hold step (a step number), output (string), rel_l2 and max_abs (numbers)");
    }
    s.difference = OutputDifference{static_cast<int>(d["step"].get<std::uint64_t>()),
                                    d["output"].get<std::string>(), d["rel_l2"].get<double>(),
                                    d["max_abs"].get<double>()};
  }
  if (v.contains("numerics")) s.numerics = v["numerics"];
  if (!s.numerics.is_null() && !s.numerics.is_object()) {
    throw_field(file, where + ".numerics", "must be an object or null");
  }
  if (v.contains("host")) {
    if (!v["host"].is_string()) throw_field(file, where + ".host", "must be a string");
    s.host = v["host"].get<std::string>();
  }
  return s;
}

json manifest_numerics(const Manifest& manifest) {
  const auto it = manifest.environment.find("numerics");
  return it == manifest.environment.end() ? json() : *it;
}

std::string manifest_host(const Manifest& manifest) {
  const auto it = manifest.environment.find("hostname");
  return it != manifest.environment.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string short_figure(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

json segment_to_json(const NumericsSegment& s) {
  json v = {{"segment", s.index}, {"first_step", s.first_step}, {"check", s.check}};
  if (s.index > 0) {
    v["changed"] = s.changed;
    v["recomputed_steps"] = s.recomputed_steps;
    v["difference"] = s.difference ? json{{"step", s.difference->step},
                                          {"output", s.difference->output},
                                          {"rel_l2", s.difference->rel_l2},
                                          {"max_abs", s.difference->max_abs}}
                                   : json();
  }
  v["numerics"] = s.numerics;
  v["host"] = s.host;
  return v;
}

std::vector<NumericsSegment> parse_segments(std::string_view text, const std::string& context,
                                            const json& manifest_numerics) {
  const std::string& file = context;
  const json root = contract::parse_json_text(text, file);
  if (!root.is_object()) throw_input(file, "must be a JSON object");
  for (const auto& [key, item] : root.items()) {
    if (key != "format_version" && key != "segments") throw_field(file, key, "unknown field");
  }
  if (!root.contains("format_version") || !root["format_version"].is_number_integer() ||
      root["format_version"].get<std::int64_t>() != kSegmentsFormatVersion) {
    throw_field(file, "format_version",
                "unsupported (this build reads " + std::to_string(kSegmentsFormatVersion) + ")");
  }
  if (!root.contains("segments") || !root["segments"].is_array() || root["segments"].empty()) {
    throw_field(file, "segments", "must be a non-empty array");
  }
  std::vector<NumericsSegment> out;
  for (std::size_t i = 0; i < root["segments"].size(); ++i) {
    NumericsSegment s = segment_from_json(root["segments"][i], file, i);
    const std::string where = "segments[" + std::to_string(i) + "]";
    if (s.index != static_cast<int>(i)) {
      throw_field(file, where + ".segment",
                  "is " + std::to_string(s.index) + ", expected " + std::to_string(i));
    }
    if (i == 0 && (s.first_step != 0 || s.check != "initial")) {
      throw_field(file, where, "segment 0 must start at step 0 with check \"initial\"");
    }
    if (i > 0 && (s.first_step < out.back().first_step || s.check == "initial")) {
      throw_field(file, where,
                  "a later segment must not start before the previous one or be \"initial\"");
    }
    out.push_back(std::move(s));
  }
  if (out.front().numerics != manifest_numerics) {
    throw_field(file, "segments[0].numerics", "differs from the manifest's environment.numerics");
  }
  return out;
}

std::vector<NumericsSegment> read_segments(const RunPaths& paths, const Manifest& manifest) {
  const fs::path file = paths.segments();
  if (!fs::exists(file)) {
    NumericsSegment first;
    first.numerics = manifest_numerics(manifest);
    first.host = manifest_host(manifest);
    return {first};
  }
  return parse_segments(io::read_file(file), file.string(), manifest_numerics(manifest));
}

RunSegments read_run_segments(const RunPaths& paths, const Manifest& manifest) {
  RunSegments out;
  out.segments = read_segments(paths, manifest);
  while (fs::exists(paths.step_sidecar(out.saved))) ++out.saved;
  out.mixed = is_mixed(out.segments);
  out.text = describe_segments(out.segments, out.saved);
  return out;
}

void write_segments(const RunPaths& paths, const std::vector<NumericsSegment>& segments) {
  json list = json::array();
  for (const NumericsSegment& s : segments) list.push_back(segment_to_json(s));
  const json root = {{"format_version", kSegmentsFormatVersion}, {"segments", list}};
  io::atomic_write_text(paths.segments(), root.dump(2) + "\n");
}

std::vector<std::string> numerics_changes(const json& run, const json& now) {
  if (run.is_null() || now.is_null()) {
    return run == now ? std::vector<std::string>{} : std::vector<std::string>{"numerics"};
  }
  std::map<std::string, json> a, b;
  collect_leaves(run, "", a);
  collect_leaves(now, "", b);
  std::set<std::string> fields;
  for (const auto& [k, v] : a) {
    if (const auto it = b.find(k); it == b.end() || it->second != v) fields.insert(k);
  }
  for (const auto& [k, v] : b) {
    if (!a.contains(k)) fields.insert(k);
  }
  std::vector<std::string> out;
  for (const std::string& f : fields) {
    if (!informational_fields().contains(f)) out.push_back(f);
  }
  return out;
}

std::string describe_changes(const json& run, const json& now,
                             const std::vector<std::string>& fields) {
  std::map<std::string, json> a, b;
  if (!run.is_null()) collect_leaves(run, "", a);
  if (!now.is_null()) collect_leaves(now, "", b);
  std::string out;
  for (const std::string& f : fields) {
    if (!out.empty()) out += "; ";
    if (f == "numerics") {
      out += std::string("numerics: ") + (run.is_null() ? "not recorded by the run" : "recorded") +
             " -> " + (now.is_null() ? "not recorded" : "recorded");
      continue;
    }
    out += f + ": " + show(a, f) + " -> " + show(b, f);
  }
  return out;
}

bool is_mixed(const std::vector<NumericsSegment>& segments) {
  return std::any_of(segments.begin(), segments.end(),
                     [](const NumericsSegment& s) { return s.check == "accepted"; });
}

std::vector<int> segment_starts(const std::vector<NumericsSegment>& segments) {
  std::vector<int> starts;
  for (const NumericsSegment& s : segments) starts.push_back(s.first_step);
  return starts;
}

int segment_of_step(const std::vector<NumericsSegment>& segments, int step) {
  int index = 0;
  for (const NumericsSegment& s : segments) {
    if (s.first_step <= step) index = s.index;
  }
  return index;
}

std::string describe_segments(const std::vector<NumericsSegment>& segments, int saved) {
  std::string out;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const NumericsSegment& s = segments[i];
    const int last = i + 1 < segments.size() ? segments[i + 1].first_step - 1 : saved - 1;
    if (!out.empty()) out += "; ";
    out += last < s.first_step ? "no steps"
           : last == s.first_step ? "step " + std::to_string(s.first_step)
                                  : "steps " + std::to_string(s.first_step) + "-" +
                                        std::to_string(last);
    out += ": segment " + std::to_string(s.index) + " (" + s.check;
    if (!s.changed.empty()) {
      out += ": changed";
      for (const std::string& c : s.changed) out += " " + c;
    }
    if (!s.recomputed_steps.empty() && !s.difference) {
      out += "; recomputed step";
      if (s.recomputed_steps.size() > 1) out += "s";
      for (std::size_t k = 0; k < s.recomputed_steps.size(); ++k) {
        out += (k == 0 ? " " : ", ") + std::to_string(s.recomputed_steps[k]);
      }
      out += " bitwise equal";
    }
    if (s.difference) {
      out += "; step " + std::to_string(s.difference->step) + " differed in " +
             s.difference->output + ", rel L2 " + short_figure(s.difference->rel_l2);
    }
    if (!s.host.empty()) out += ", host " + s.host;
    out += ")";
  }
  return out;
}

}  // namespace h3p::runs
