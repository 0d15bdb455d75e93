#include "app/cli/candidate.h"

#include "kernels/candidate_ops.h"

namespace h3p::cli {

ops::OpSetPtr candidate_ops() { return kernels::make_candidate_ops(); }

}  // namespace h3p::cli
