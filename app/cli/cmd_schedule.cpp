// `h3parity schedule`: print the sigma grid and timesteps of one scheduler instance.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "app/cli/commands.h"
#include "core/sampling/scheduler.h"

namespace h3p::cli {
namespace {

// The shortest decimal that reads back (strtof) as exactly `v`.
std::string shortest_float(float v) {
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::string json_array(const std::vector<float>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += shortest_float(values[i]);
  }
  return out + "]";
}

}  // namespace

void add_schedule(CLI::App& app, Action& action, const GlobalOptions&) {
  struct Options {
    int steps = 50;
    double shift = 12.0;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "schedule", "print the sigma grid and timesteps for a number of grid points and a shift");
  cmd->add_option("--steps", opt->steps, "grid points, the final 0 included (N gives N-1 calls)")
      ->capture_default_str();
  cmd->add_option("--shift", opt->shift, "exponential shift (video 12, audio 3)")
      ->capture_default_str();
  cmd->add_flag("--json", opt->json,
                "print {\"sigmas\": [...], \"timesteps\": [...]} (values read back as the same "
                "float32)");
  cmd->callback([&action, opt] {
    action = [opt] {
      const sampling::Schedule s = sampling::make_schedule(opt->steps, opt->shift);
      if (opt->json) {
        std::printf("{\"sigmas\": %s, \"timesteps\": %s}\n", json_array(s.sigmas).c_str(),
                    json_array(s.timesteps).c_str());
        return 0;
      }
      std::printf("%5s %12s %12s\n", "call", "sigma", "timestep");
      for (std::size_t i = 0; i < s.sigmas.size(); ++i) {
        std::printf("%5zu %12s %12s\n", i, shortest_float(s.sigmas[i]).c_str(),
                    i < s.timesteps.size() ? shortest_float(s.timesteps[i]).c_str() : "-");
      }
      return 0;
    };
  });
}

}  // namespace h3p::cli
