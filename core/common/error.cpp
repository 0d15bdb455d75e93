#include "core/common/error.h"

namespace h3p {

void throw_input(const std::string& context, const std::string& what) {
  throw InputError(context + ": " + what);
}

}  // namespace h3p
