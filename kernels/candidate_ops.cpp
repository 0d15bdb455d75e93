#include "kernels/candidate_ops.h"

namespace h3p::kernels {

ops::OpSetPtr make_candidate_ops() { return nullptr; }

}  // namespace h3p::kernels
