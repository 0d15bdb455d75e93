#include "core/common/error.h"

namespace h3p {

void throw_input(const std::string& context, const std::string& what) {
  throw InputError(context + ": " + what);
}

void throw_field(const std::string& context, const std::string& field, const std::string& what) {
  throw InputError(context + ": field '" + field + "': " + what);
}

std::string single_quoted(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out.append(1, '\'').append(name).append(1, '\'');
  return out;
}

}  // namespace h3p
