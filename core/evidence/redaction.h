#pragma once
// Redaction of what a published evidence bundle must not reveal about the machines and people
// that produced it: host names, user names, home and scratch paths, the runs directory's
// absolute path, Slurm job and node ids. Every replacement is counted per rule, so that the
// bundle's redaction.json says what was replaced, by which placeholder, under which rule.
// Torch-free and Qt-free.
#include <cstddef>
#include <filesystem>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace h3p::evidence {

// One replacement rule.
struct RedactionRule {
  std::string kind;         // class: "host", "user", "path", "slurm"
  std::string rule;         // where the value came from, in words ("gethostname()", "$HOME")
  std::string placeholder;  // what replaces it ("<HOST>")
  std::string value;        // literal value (empty for a pattern rule); never written out
  std::string pattern;      // ECMAScript regex of a pattern rule; group 1 is replaced
  std::size_t count = 0;    // replacements made so far
};

// The rules for one bundle, applied to every text file before it is checksummed. Literal
// values are replaced longest first, as whole tokens (not inside a longer name: the characters
// next to a value that starts or ends with [A-Za-z0-9_] must not be such characters), then
// the patterns. Not thread-safe (counts).
class Redactor {
 public:
  // The machine's rules: gethostname() (and its short form), $USER, $LOGNAME and getpwuid's
  // name, $HOME and getpwuid's home, $TMPDIR, the runs directory's absolute and canonical
  // paths (-> <RUNS>), Slurm values in this process's environment (SLURM_JOB_ID & co.,
  // SLURMD_NODENAME, node lists), and the patterns: /tmp/<name>, /var/tmp/<name>,
  // /scratch/<name> (-> <TMP>, <SCRATCH>), "SLURM_...ID=<id>", "job <id>" and "array <id>_" in
  // Slurm job logs, "on <host>:" in them.
  static Redactor for_machine(const std::filesystem::path& runs_root);

  // Adds a literal rule (ignored when the value is empty or already has a rule of its kind).
  void add_literal(const std::string& kind, const std::string& rule, const std::string& value,
                   const std::string& placeholder);

  // Adds the values recorded in a JSON document: every string under a key "hostname" or "host"
  // (kind host) and under a key starting with "SLURM" or "slurm" (kind slurm), at any depth.
  // `source` names the kind of document in the rule text ("manifests"): no path.
  void add_recorded(const nlohmann::json& document, const std::string& source);

  // `text` with every rule applied; counts the replacements.
  std::string apply(std::string_view text);

  // {"rules": [{"class", "rule", "placeholder", "replacements"}...], "totals": {class: n}}.
  // Values are never written.
  nlohmann::json to_json() const;

  const std::vector<RedactionRule>& rules() const { return rules_; }

 private:
  void add_pattern(const std::string& kind, const std::string& rule, const std::string& pattern,
                   const std::string& placeholder);
  std::vector<RedactionRule> rules_;
  std::vector<std::regex> regexes_;  // parallel to the pattern rules, in rule order
};

}  // namespace h3p::evidence
