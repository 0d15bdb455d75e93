#pragma once
// Taking a module's tensors out of a loaded name -> tensor map, one at a time.
#include <ATen/core/Tensor.h>

#include <map>
#include <string>

#include "core/common/error.h"

namespace h3p::model {

// Removes `name` from `tensors` and returns it; InputError("<missing> 'name'") when absent.
inline at::Tensor take_tensor(std::map<std::string, at::Tensor>& tensors, const std::string& name,
                              const char* missing) {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw InputError(std::string(missing) + " '" + name + "'");
  at::Tensor out = std::move(it->second);
  tensors.erase(it);
  return out;
}

}  // namespace h3p::model
