#include "core/ops/impl_spec.h"

#include <set>
#include <sstream>
#include <vector>

#include "core/common/error.h"

namespace h3p::ops {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

bool is_backend_of(Group g, std::string_view value) {
  if (g == Group::attention) {
    return value == "flash" || value == "efficient" || value == "math" || value == "cudnn";
  }
  if (g == Group::gemm) return value == "cublaslt";
  return false;
}

}  // namespace

ImplSpec ImplSpec::parse(std::string_view text) {
  const std::string context = "impl spec '" + std::string(text) + "'";
  ImplSpec spec;
  spec.text = std::string(text);
  std::size_t colon = text.find(':');
  std::string_view base = text.substr(0, colon);
  if (base == "provider") {
    spec.base = Impl::provider;
  } else if (base == "candidate") {
    spec.base = Impl::candidate;
  } else if (base == "plugin" || base == "python") {
    spec.base = Impl::plugin;
    spec.plugin.kind = base == "plugin" ? PluginKind::library : PluginKind::python;
    if (colon == std::string_view::npos) {
      throw_input(context, std::string(base) + " needs a reference: " + std::string(base) +
                               (base == "plugin" ? ":PATH.so or plugin:NAME"
                                                 : ":FILE.py or python:MODULE"));
    }
    const std::size_t ref_end = text.find(':', colon + 1);
    spec.plugin.ref = std::string(text.substr(colon + 1, ref_end == std::string_view::npos
                                                             ? std::string_view::npos
                                                             : ref_end - colon - 1));
    if (spec.plugin.ref.empty()) throw_input(context, std::string(base) + " reference is empty");
    if (spec.plugin.ref.find(',') != std::string::npos) {
      throw_input(context, "plugin reference '" + spec.plugin.ref + "' must not contain ','");
    }
    colon = ref_end;
  } else {
    throw_input(context, "base must be 'provider', 'candidate', 'plugin:PATH' or "
                         "'python:FILE', got '" + std::string(base) + "'");
  }
  for (auto& c : spec.groups) c = GroupChoice{spec.base, ""};
  if (colon == std::string_view::npos) return spec;

  const bool plugin_base = spec.base == Impl::plugin;
  std::set<Group> named;
  for (std::string_view item : split(text.substr(colon + 1), ',')) {
    std::size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      throw_input(context, "override '" + std::string(item) + "' is not of the form group=value");
    }
    std::string_view target = item.substr(0, eq);
    std::string_view value = item.substr(eq + 1);
    std::vector<Group> targets;
    const bool is_rest = target == "rest";
    if (is_rest) {
      if (!plugin_base) throw_input(context, "'rest' is for plugin specs (plugin:PATH:rest=...)");
      if (spec.rest) throw_input(context, "'rest' is named twice");
    } else if (target == "all") {
      targets.assign(kAllGroups.begin(), kAllGroups.end());
    } else if (target == "interim") {
      for (Group g : kAllGroups) {
        if (is_interim(g)) targets.push_back(g);
      }
    } else if (auto g = parse_group(target)) {
      if (!named.insert(*g).second) {
        throw_input(context, "group '" + std::string(target) + "' is named twice");
      }
      targets.push_back(*g);
    } else {
      std::string known;
      for (Group g2 : kAllGroups) known += std::string(group_name(g2)) + " ";
      throw_input(context, "unknown group '" + std::string(target) + "' (known: " + known +
                               "interim all" + (plugin_base ? " rest)" : ")"));
    }
    GroupChoice choice;
    if (value == "provider") {
      choice = {Impl::provider, ""};
    } else if (value == "candidate") {
      choice = {Impl::candidate, ""};
    } else if (value == "plugin" && plugin_base && !is_rest) {
      choice = {Impl::plugin, ""};
    } else if (targets.size() == 1 && is_backend_of(targets.front(), value)) {
      choice = {Impl::provider, std::string(value)};
    } else {
      throw_input(context, "unknown value '" + std::string(value) + "' for '" +
                               std::string(target) + "' (provider, candidate, " +
                               (plugin_base && !is_rest ? "plugin, " : "") +
                               "or a backend: attention=flash|efficient|math|cudnn, "
                               "gemm=cublaslt)");
    }
    if (is_rest) spec.rest = choice;
    for (Group g : targets) spec.groups[static_cast<std::size_t>(g)] = choice;
  }
  return spec;
}

bool ImplSpec::uses_candidate() const {
  for (const auto& c : groups) {
    if (c.impl == Impl::candidate) return true;
  }
  return false;
}

bool ImplSpec::uses_plugin() const {
  for (const auto& c : groups) {
    if (c.impl == Impl::plugin) return true;
  }
  return false;
}

bool ImplSpec::is_plain_provider() const {
  for (const auto& c : groups) {
    if (c.impl != Impl::provider || !c.backend.empty()) return false;
  }
  return true;
}

std::string ImplSpec::with_override(std::string_view override_text) const {
  const bool has_overrides = text.find('=') != std::string::npos;
  return text + (has_overrides ? "," : ":") + std::string(override_text);
}

std::string ImplSpec::describe() const {
  std::ostringstream out;
  for (Group g : kAllGroups) {
    const GroupChoice& c = choice(g);
    out << group_name(g) << "="
        << (c.impl == Impl::provider    ? "provider"
            : c.impl == Impl::candidate ? "candidate"
                                        : "plugin");
    if (!c.backend.empty()) out << "[" << c.backend << "]";
    out << "\n";
  }
  return out.str();
}

}  // namespace h3p::ops
