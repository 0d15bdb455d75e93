#include "core/sampling/scheduler.h"

#include <ATen/ATen.h>

#include <cmath>
#include <string>

#include "core/common/error.h"

namespace h3p::sampling {

namespace {

// A 0-dim CPU tensor holding `value` rounded to `type`, as torch.tensor(value, dtype=type).
at::Tensor scalar_tensor(double value, at::ScalarType type) {
  return at::scalar_tensor(value, at::TensorOptions().dtype(type).device(at::kCPU));
}

// Unsqueezes trailing dims until `t` has `ndim` dims (the reference's broadcast preparation).
at::Tensor unsqueeze_to(at::Tensor t, int64_t ndim) {
  while (t.dim() < ndim) t = t.unsqueeze(-1);
  return t;
}

}  // namespace

std::vector<float> torch_linspace_f32(float start, float end, int steps) {
  if (steps < 1) throw_input("linspace", "steps must be >= 1, got " + std::to_string(steps));
  std::vector<float> out(static_cast<std::size_t>(steps));
  if (steps == 1) {
    out[0] = start;
    return out;
  }
  // The reference kernel computes `start + step*i` below the halfway point and
  // `end - step*(steps-1-i)` above it; its build contracts each into one fused multiply-add.
  const float step = (end - start) / static_cast<float>(steps - 1);
  const int halfway = steps / 2;
  for (int i = 0; i < steps; ++i) {
    if (i < halfway) {
      out[i] = std::fma(step, static_cast<float>(i), start);
    } else {
      out[i] = std::fma(-step, static_cast<float>(steps - i - 1), end);
    }
  }
  return out;
}

Schedule make_schedule(int grid_points, double shift) {
  if (grid_points < 2) {
    throw_input("schedule", "grid points must be >= 2 (the final 0 included), got " +
                                std::to_string(grid_points));
  }
  if (!(shift > 0.0) || !std::isfinite(shift)) {
    throw_input("schedule", "shift must be a positive finite number, got " + std::to_string(shift));
  }
  const std::vector<float> base_values = torch_linspace_f32(1.0f, 0.0f, grid_points);
  const at::Tensor base =
      at::from_blob(const_cast<float*>(base_values.data()), {grid_points}, at::kFloat).clone();
  // Same ATen ops, operand order and scalar types as the reference: the Python floats `shift`
  // and `shift - 1` enter as double scalars and are rounded to fp32 by the kernels.
  const at::Tensor numerator = at::mul(base, shift);
  const at::Tensor denominator = at::add(at::mul(base, shift - 1.0), 1.0);
  const at::Tensor sigmas = at::div(numerator, denominator).contiguous();

  Schedule schedule;
  const float* s = sigmas.data_ptr<float>();
  for (int i = 0; i < grid_points; ++i) {
    // unique_consecutive: exact equality, so -0 and +0 collapse as torch does.
    if (!schedule.sigmas.empty() && schedule.sigmas.back() == s[i]) continue;
    schedule.sigmas.push_back(s[i]);
  }
  const at::Tensor kept = at::from_blob(schedule.sigmas.data(),
                                        {static_cast<int64_t>(schedule.sigmas.size())}, at::kFloat);
  const at::Tensor timesteps =
      at::rsub(kept.slice(0, 0, kept.size(0) - 1), 1.0).contiguous();
  const float* t = timesteps.data_ptr<float>();
  schedule.timesteps.assign(t, t + timesteps.numel());
  return schedule;
}

at::Tensor scheduler_step(const at::Tensor& velocity, float t, const at::Tensor& sample,
                          const Schedule& schedule, int index) {
  if (index < 0 || static_cast<std::size_t>(index) + 1 >= schedule.sigmas.size()) {
    throw_input("scheduler step", "index " + std::to_string(index) + " outside a schedule of " +
                                      std::to_string(schedule.sigmas.size()) + " sigmas");
  }
  if (!at::isFloatingType(sample.scalar_type()) || !at::isFloatingType(velocity.scalar_type())) {
    throw_input("scheduler step", "sample and velocity must be floating point");
  }
  const at::ScalarType sample_type = sample.scalar_type();

  // 1. x0 from the data-ward velocity, with sigma recovered from the timestep the model saw.
  const at::Tensor timestep = scalar_tensor(static_cast<double>(t), at::kFloat);
  at::Tensor sigma_from_timestep = at::rsub(timestep.to(sample_type), 1);
  sigma_from_timestep = unsqueeze_to(sigma_from_timestep, sample.dim());
  const at::Tensor denoised = at::add(sample, at::mul(sigma_from_timestep, velocity));

  // 2. The Euler blend with the grid ratio, in fp32 for half-precision samples.
  const bool half = sample_type == at::kHalf || sample_type == at::kBFloat16;
  const at::ScalarType compute_type = half ? at::kFloat : sample_type;
  const at::Tensor sigma =
      scalar_tensor(schedule.sigmas[index], at::kFloat).to(compute_type);
  const at::Tensor sigma_next =
      scalar_tensor(schedule.sigmas[index + 1], at::kFloat).to(compute_type);
  const at::Tensor ratio = at::div(sigma_next, sigma);
  const at::Tensor kept = at::mul(ratio, sample.to(compute_type));
  const at::Tensor moved = at::mul(at::rsub(ratio, 1.0), denoised.to(compute_type));
  return at::add(kept, moved).to(sample_type);
}

at::Tensor scale_noise(const at::Tensor& x0, double t, const at::Tensor& noise) {
  at::Tensor timestep = scalar_tensor(t, x0.scalar_type());
  timestep = unsqueeze_to(timestep, x0.dim());
  return at::add(at::mul(timestep, x0), at::mul(at::rsub(timestep, 1.0), noise));
}

}  // namespace h3p::sampling
