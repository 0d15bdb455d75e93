#pragma once
// Contracts compiled into the binary (resources/contracts/), so `demo` runs from anywhere.
#include <string_view>

namespace h3p::cli {

// The text of resources/contracts/demo.json as it was at build time.
std::string_view demo_contract_json();

}  // namespace h3p::cli
