#pragma once
// Private to core/runs: the table the build writes into generated/h3p_model_sources.cpp
// (see hash_model_sources.cmake). Read it through identity.h.
#include <cstddef>

namespace h3p::runs::generated {

// One model-path source file: path relative to the source root, lower-case hex SHA-256.
struct SourceEntry {
  const char* path;
  const char* sha256;
};

// kModelSourceCount entries sorted by path, then a {nullptr, nullptr} terminator.
extern const SourceEntry kModelSources[];
extern const std::size_t kModelSourceCount;
// SHA-256 over the lines "<path> <sha256>\n" of kModelSources in order.
extern const char kModelSourcesDigest[];

}  // namespace h3p::runs::generated
