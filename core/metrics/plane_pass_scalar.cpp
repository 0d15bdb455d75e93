// The portable path of plane_pass.h: plane_pass_impl.h over single fp32 lanes.
#include "core/metrics/plane_pass_impl.h"

namespace h3p::metrics::pass_kernel {

void run_scalar(const Args& args, Out* out) { run_pass<ScalarLanes>(args, out); }

}  // namespace h3p::metrics::pass_kernel
