#include "core/evidence/redaction.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

namespace h3p::evidence {
namespace fs = std::filesystem;
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// `text` with whole-token occurrences of `value` replaced; adds to `count`.
std::string replace_literal(std::string_view text, const std::string& value,
                            const std::string& placeholder, std::size_t& count) {
  std::string out;
  out.reserve(text.size());
  const bool check_left = word_char(value.front());
  const bool check_right = word_char(value.back());
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = text.find(value, pos);
    if (hit == std::string_view::npos) break;
    const std::size_t end = hit + value.size();
    const bool left_ok = !check_left || hit == 0 || !word_char(text[hit - 1]);
    const bool right_ok = !check_right || end == text.size() || !word_char(text[end]);
    if (left_ok && right_ok) {
      out.append(text.substr(pos, hit - pos));
      out += placeholder;
      ++count;
      pos = end;
    } else {
      out.append(text.substr(pos, hit + 1 - pos));
      pos = hit + 1;
    }
  }
  out.append(text.substr(pos));
  return out;
}

// `text` with group 1 of every match of `re` replaced; adds to `count`.
std::string replace_pattern(const std::string& text, const std::regex& re,
                            const std::string& placeholder, std::size_t& count) {
  std::string out;
  std::size_t pos = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    if (!m[1].matched) continue;
    const auto start = static_cast<std::size_t>(m.position(1));
    out.append(text, pos, start - pos);
    out += placeholder;
    pos = start + static_cast<std::size_t>(m.length(1));
    ++count;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

void walk(const nlohmann::json& j, const std::string& key, Redactor& r, const std::string& source) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) walk(v, k, r, source);
  } else if (j.is_array()) {
    for (const auto& v : j) walk(v, key, r, source);
  } else if (j.is_string() || j.is_number_integer() || j.is_number_unsigned()) {
    const std::string value = j.is_string() ? j.get<std::string>() : j.dump();
    if (key == "hostname" || key == "host") {
      r.add_literal("host", "\"" + key + "\" fields of " + source, value, "<HOST>");
    } else if (key.rfind("SLURM", 0) == 0 || key.rfind("slurm", 0) == 0) {
      // A numeric id would also match figures elsewhere: ids are replaced where they are keyed.
      const bool numeric = std::all_of(value.begin(), value.end(),
                                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      if (!numeric) r.add_literal("slurm", "\"" + key + "\" fields of " + source, value, "<SLURM>");
    }
  }
}

}  // namespace

void Redactor::add_literal(const std::string& kind, const std::string& rule,
                           const std::string& value, const std::string& placeholder) {
  if (value.empty() || value == "/" || value == "?") return;
  for (const RedactionRule& r : rules_) {
    if (r.pattern.empty() && r.value == value) return;
  }
  rules_.push_back({kind, rule, placeholder, value, {}, 0});
}

void Redactor::add_pattern(const std::string& kind, const std::string& rule,
                           const std::string& pattern, const std::string& placeholder) {
  rules_.push_back({kind, rule, placeholder, {}, pattern, 0});
  regexes_.emplace_back(pattern, std::regex::ECMAScript | std::regex::optimize);
}

Redactor Redactor::for_machine(const fs::path& runs_root) {
  Redactor r;
  // Paths first in the rule list (the longest value wins anyway when applied).
  const fs::path absolute = fs::absolute(runs_root).lexically_normal();
  std::string runs = absolute.string();
  while (runs.size() > 1 && runs.back() == '/') runs.pop_back();
  r.add_literal("path", "the runs directory's absolute path", runs, "<RUNS>");
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  if (!ec) r.add_literal("path", "the runs directory's canonical path", canonical.string(), "<RUNS>");
  const passwd* pw = ::getpwuid(::getuid());
  r.add_literal("path", "$HOME", env("HOME"), "<HOME>");
  if (pw != nullptr && pw->pw_dir != nullptr) {
    r.add_literal("path", "getpwuid(getuid())->pw_dir", pw->pw_dir, "<HOME>");
  }
  std::string tmpdir = env("TMPDIR");
  while (tmpdir.size() > 1 && tmpdir.back() == '/') tmpdir.pop_back();
  if (tmpdir != "/tmp") r.add_literal("path", "$TMPDIR", tmpdir, "<TMPDIR>");
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') {
    const std::string h(host);
    r.add_literal("host", "gethostname()", h, "<HOST>");
    r.add_literal("host", "gethostname() up to the first dot", h.substr(0, h.find('.')), "<HOST>");
  }
  r.add_literal("user", "$USER", env("USER"), "<USER>");
  r.add_literal("user", "$LOGNAME", env("LOGNAME"), "<USER>");
  if (pw != nullptr && pw->pw_name != nullptr) {
    r.add_literal("user", "getpwuid(getuid())->pw_name", pw->pw_name, "<USER>");
  }
  for (const char* name : {"SLURMD_NODENAME", "SLURM_NODELIST", "SLURM_JOB_NODELIST",
                           "SLURM_SUBMIT_HOST", "SLURM_CLUSTER_NAME", "SLURM_TOPOLOGY_ADDR"}) {
    r.add_literal("slurm", std::string("$") + name, env(name), "<SLURM>");
  }
  r.add_pattern("path", "/tmp/<name>: a temporary directory", R"((?:^|[^A-Za-z0-9_.])(/tmp/[^/\s"'<>:;,|()\\]+))", "<TMP>");
  r.add_pattern("path", "/var/tmp/<name>: a temporary directory", R"((/var/tmp/[^/\s"'<>:;,|()\\]+))", "<TMP>");
  r.add_pattern("path", "/scratch/<name>: a scratch directory", R"((/scratch/[^/\s"'<>:;,|()\\]+))", "<SCRATCH>");
  r.add_pattern("slurm", "SLURM_*ID= / SLURM_*NODE*= values",
                R"(SLURM[A-Z_]*(?:ID|NODELIST|NODENAME)["']?\s*[=:]\s*["']?([^\s"',}]+))", "<SLURM>");
  r.add_pattern("slurm", "Slurm job logs: \"job <id>\"", R"(\bjob (\d+))", "<SLURM_JOB>");
  r.add_pattern("slurm", "Slurm job logs: \"array <id>_<task>\"", R"(\barray (\d+)_)", "<SLURM_JOB>");
  r.add_pattern("slurm", "Slurm job log names: <name>-<id>_<task>.out", R"(-(\d+)_\d+\.out\b)", "<SLURM_JOB>");
  r.add_pattern("host", "Slurm job logs: \"start on <host>:\"", R"(\bstart on ([^\s:]+):)", "<HOST>");
  return r;
}

void Redactor::add_recorded(const nlohmann::json& document, const std::string& source) {
  walk(document, std::string(), *this, source);
}

std::string Redactor::apply(std::string_view text) {
  std::vector<RedactionRule*> literals;
  for (RedactionRule& r : rules_) {
    if (r.pattern.empty()) literals.push_back(&r);
  }
  std::stable_sort(literals.begin(), literals.end(), [](const RedactionRule* a, const RedactionRule* b) {
    return a->value.size() > b->value.size();
  });
  std::string out(text);
  for (RedactionRule* r : literals) {
    if (out.find(r->value) == std::string::npos) continue;
    out = replace_literal(out, r->value, r->placeholder, r->count);
  }
  std::size_t p = 0;
  for (RedactionRule& r : rules_) {
    if (r.pattern.empty()) continue;
    out = replace_pattern(out, regexes_[p++], r.placeholder, r.count);
  }
  return out;
}

nlohmann::json Redactor::to_json() const {
  nlohmann::json rules = nlohmann::json::array();
  std::map<std::string, std::size_t> totals;
  for (const RedactionRule& r : rules_) {
    rules.push_back({{"class", r.kind},
                     {"rule", r.rule},
                     {"placeholder", r.placeholder},
                     {"kind", r.pattern.empty() ? "value" : "pattern"},
                     {"replacements", r.count}});
    if (!r.pattern.empty()) rules.back()["pattern"] = r.pattern;
    totals[r.kind] += r.count;
  }
  return {{"applied_before_checksums", true}, {"rules", rules}, {"totals", totals}};
}

}  // namespace h3p::evidence
