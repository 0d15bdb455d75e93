#pragma once
// The MiniMax-H3 rectified-flow Euler scheduler (eta = 0), bit-exact with the reference:
// sigma grid `s*b / (1 + (s-1)*b)` over b = linspace(1, 0, N) in fp32 (N grid points, the
// final 0 included, consecutive duplicates collapsed), timesteps t = 1 - sigma[:-1] (t = 1 is
// clean), and the step `x0 = x + (1 - t)*v`, `x_next = r*x + (1 - r)*x0` with r from the grid.
// Two instances run per request (video shift 12, audio shift 3); both are plain values here.
#include <ATen/core/Tensor.h>

#include <vector>

namespace h3p::sampling {

// A sigma grid and its timesteps; sigmas.size() == timesteps.size() + 1, sigmas.back() == 0.
struct Schedule {
  std::vector<float> sigmas;     // strictly decreasing from 1 to 0
  std::vector<float> timesteps;  // t = 1 - sigma for every sigma but the last; one per call
};

// The reference's fp32 torch.linspace(start, end, steps) on CPU: both halves are evaluated
// from their own end with one rounding each (fused multiply-add). steps >= 1.
std::vector<float> torch_linspace_f32(float start, float end, int steps);

// The schedule of `grid_points` points (calls = size - 1, fewer when the shift collapses
// values) for `shift`. Throws InputError for grid_points < 2 or a shift that is not > 0.
Schedule make_schedule(int grid_points, double shift);

// One Euler step for rows at schedule position `index` (0 <= index < timesteps.size()).
// `velocity` is the model output (the reference loop passes it as fp32, `.float()`; do the
// same for parity), `t` the timestep the model was given,
// `sample` the current rows; returns the next rows in sample's dtype (computed in fp32 for
// half-precision samples). Throws InputError for an index outside the schedule or shapes
// that do not broadcast.
at::Tensor scheduler_step(const at::Tensor& velocity, float t, const at::Tensor& sample,
                          const Schedule& schedule, int index);

// The forward process `t*x0 + (1 - t)*noise` in x0's dtype (t taken at face value, not looked
// up in a schedule); used to noise conditioning anchors to t = 0.999.
at::Tensor scale_noise(const at::Tensor& x0, double t, const at::Tensor& noise);

}  // namespace h3p::sampling
