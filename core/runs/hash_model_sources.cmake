# Build-time step of h3p_runs (run with cmake -P): hashes the model-path source files and
# writes the C++ table that compiled_model_sources() serves.
#   -DSOURCE_ROOT=<project source dir>   -DLIST_FILE=<one relative path per line>
#   -DOUTPUT=<generated .cpp>
# The combined digest is the SHA-256 of the lines "<path> <sha256>\n" in sorted path order,
# the same rule as runs::sources_digest_of().
file(STRINGS "${LIST_FILE}" files)
list(SORT files)
set(lines "")
set(entries "")
set(count 0)
foreach(rel IN LISTS files)
  if(rel MATCHES "[\"\\\\]")
    message(FATAL_ERROR "model source path cannot be quoted in C++: ${rel}")
  endif()
  file(SHA256 "${SOURCE_ROOT}/${rel}" hash)
  string(APPEND lines "${rel} ${hash}\n")
  string(APPEND entries "    {\"${rel}\", \"${hash}\"},\n")
  math(EXPR count "${count} + 1")
endforeach()
string(SHA256 digest "${lines}")
file(WRITE "${OUTPUT}"
"// Generated at build time by core/runs/hash_model_sources.cmake from the model-path sources.
// Do not edit; it is rewritten whenever one of those files changes.
#include \"core/runs/compiled_sources.h\"

namespace h3p::runs::generated {

const SourceEntry kModelSources[] = {
${entries}    {nullptr, nullptr},
};
const std::size_t kModelSourceCount = ${count};
const char kModelSourcesDigest[] = \"${digest}\";

}  // namespace h3p::runs::generated
")
