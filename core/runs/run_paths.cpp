#include "core/runs/run_paths.h"

#include <initializer_list>
#include <algorithm>
#include <cstdio>
#include <system_error>

#include "core/common/error.h"

namespace h3p::runs {

namespace {

bool is_plain_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == '=';
}

}  // namespace

std::string impl_dir_name(std::string_view impl_spec) {
  const std::string context = "impl spec '" + std::string(impl_spec) + "'";
  if (impl_spec.empty()) throw_input("impl spec", "must not be empty");
  if (impl_spec.front() == '.') throw_input(context, "must not start with '.'");
  // A plugin's path names its run directory by the file name alone; the manifest keeps the
  // spec verbatim.
  std::string spec(impl_spec);
  if (spec.starts_with("plugin:") || spec.starts_with("python:")) {
    const std::size_t start = 7, end = spec.find(':', start);
    const std::string ref = spec.substr(start, end == std::string::npos ? end : end - start);
    std::string file = ref.substr(ref.find_last_of('/') == std::string::npos ? 0 : ref.find_last_of('/') + 1);
    if (file.empty() || file.front() == '.') {
      throw_input(context, "plugin reference '" + ref + "' has no file name for a run directory");
    }
    spec.replace(start, ref.size(), file);
  }
  std::string out;
  out.reserve(spec.size());
  for (char c : spec) {
    if (c == ':') {
      out.push_back('@');
    } else if (c == ',') {
      out.push_back('+');
    } else if (is_plain_char(c)) {
      out.push_back(c);
    } else {
      throw_input(context,
                  std::string("character '") + c + "' cannot appear in a run directory name");
    }
  }
  return out;
}

std::string impl_spec_from_dir_name(std::string_view dir_name) {
  const std::string context = "run directory '" + std::string(dir_name) + "'";
  if (dir_name.empty() || dir_name.front() == '.') {
    throw_input(context, "not an impl spec directory name");
  }
  std::string out;
  out.reserve(dir_name.size());
  for (char c : dir_name) {
    if (c == '@') {
      out.push_back(':');
    } else if (c == '+') {
      out.push_back(',');
    } else if (is_plain_char(c)) {
      out.push_back(c);
    } else {
      throw_input(context, std::string("character '") + c + "' is not used by impl_dir_name");
    }
  }
  return out;
}

std::string step_stem(int step) {
  if (step < 0) throw_input("step " + std::to_string(step), "must be >= 0");
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%03d", step);
  return buffer;
}

RunPaths RunPaths::locate(const std::filesystem::path& runs_root, const std::string& contract_name,
                          std::string_view impl_spec, std::uint64_t seed) {
  const bool safe = !contract_name.empty() && contract_name.front() != '.' &&
                    std::all_of(contract_name.begin(), contract_name.end(),
                                [](char c) { return is_plain_char(c) && c != '='; });
  if (!safe) throw_input("contract name '" + contract_name + "'", "not a safe directory name");
  return RunPaths(runs_root / contract_name / impl_dir_name(impl_spec) /
                  ("seed-" + std::to_string(seed)));
}

RunPaths::RunPaths(std::filesystem::path root) : root_(std::move(root)) {}

std::filesystem::path RunPaths::step_file(int step) const {
  return steps_dir() / (step_stem(step) + ".safetensors");
}

std::filesystem::path RunPaths::step_sidecar(int step) const {
  return steps_dir() / (step_stem(step) + ".json");
}

void RunPaths::create_directories() const {
  for (const auto& dir : {root_, inputs_dir(), steps_dir(), metrics_dir()}) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) throw_input(dir.string(), "cannot create directory: " + error.message());
  }
}

}  // namespace h3p::runs
