// `h3parity generate`: one seed of a contract with one impl spec; resumable.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/plugin_options.h"
#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/progress.h"
#include "app/cli/stop_signals.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/ops/device.h"
#include "core/runs/generation.h"

namespace h3p::cli {
namespace {

// What `generate --timings` writes: the stages and calls of this process, as they happen.
class TimingLog {
 public:
  explicit TimingLog(const std::string& device)
      : device_(ops::resolve_device(device)), start_(Clock::now()), last_(start_) {
    ops::reset_peak_memory(device_);
  }

  void stage(const std::string& name, double seconds) {
    json_["stages"][name + "_seconds"] = seconds;
    last_ = Clock::now();
  }

  // One call: its own time and the wall time since the previous event (inputs, call, save).
  void step(const runs::StepEvent& e) {
    const auto now = Clock::now();
    json_["calls"].push_back({{"step", e.step},
                              {"replayed", e.replayed},
                              {"seconds", e.seconds},
                              {"wall_seconds", seconds(last_, now)}});
    last_ = now;
  }

  // Adds totals, peak memory and the run's step-store bytes; written atomically.
  void write(const std::filesystem::path& file, const std::filesystem::path& run_dir) {
    namespace fs = std::filesystem;
    json_["total_seconds"] = seconds(start_, Clock::now());
    const ops::PeakMemory peak = ops::peak_memory(device_);
    json_["peak_host_bytes"] = peak.host_bytes;
    if (peak.device_bytes) json_["peak_device_bytes"] = *peak.device_bytes;
    std::uintmax_t bytes = 0;
    std::error_code error;
    for (fs::recursive_directory_iterator it(run_dir / "steps", error), end; !error && it != end;
         it.increment(error)) {
      if (it->is_regular_file(error)) bytes += it->file_size(error);
    }
    json_["step_store_bytes"] = bytes;
    json_["device"] = device_.str();
    // RUNS-relative: <contract>/<impl spec>/seed-<n>.
    json_["run"] = (run_dir.parent_path().parent_path().filename() /
                    run_dir.parent_path().filename() / run_dir.filename()).string();
    io::atomic_write_text(file, json_.dump(2) + "\n");
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double seconds(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }
  at::Device device_;
  Clock::time_point start_, last_;
  nlohmann::json json_ = {{"stages", nlohmann::json::object()}, {"calls", nlohmann::json::array()}};
};

}  // namespace

void add_generate(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string contract, impl = "provider", runs, device = "cpu", save_inputs = "every";
    int64_t seed = -1;
    int64_t seed_index = -1;
    bool verify_last_step = false;
    bool accept_new_numerics = false;
    std::string gate;
    bool skip_gate = false;
    std::string timings;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "generate one seed of a contract with one impl spec; resumes a run that "
                  "exists, replaying its saved steps with every input digest checked");
  add_check_plugin_flag(cmd);
  cmd->add_option("--contract", opt->contract, "contract JSON")->required();
  cmd->add_option("--impl", opt->impl, "impl spec (provider, candidate, candidate:gemm=provider, "
                                       "...)")->capture_default_str();
  auto* seed = cmd->add_option("--seed", opt->seed, "seed (one of the contract's seeds)");
  auto* index = cmd->add_option("--seed-index", opt->seed_index,
                                "index into the contract's seeds (for Slurm arrays)");
  seed->excludes(index);
  cmd->add_option("--runs", opt->runs, "runs directory")->required();
  cmd->add_option("--device", opt->device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--save-inputs", opt->save_inputs,
                  "which calls keep their inputs: every | first | none")->capture_default_str();
  cmd->add_flag("--verify-last-step", opt->verify_last_step,
                "recompute the last saved call and require a bitwise match");
  cmd->add_flag("--accept-new-numerics", opt->accept_new_numerics,
                "resuming under a different numerics environment whose recomputed last step "
                "differs: continue anyway and mark the run mixed (default: refuse, exit 2)");
  auto* gate = cmd->add_option("--gate", opt->gate,
                               "gate result to check when the contract requires the gate "
                               "(default: gate.json next to the model)");
  cmd->add_flag("--skip-gate", opt->skip_gate,
                "start without a passed gate although the contract requires it (recorded in "
                "the manifest)")->excludes(gate);
  cmd->add_option("--timings", opt->timings,
                  "write this process's stage times as JSON: identity hashing, model load, each "
                  "call (and its wall time with input building and saving), decode, peak host "
                  "and device memory, step-store bytes");
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      runs::GenerateParams params;
      params.contract = contract::load_contract(opt->contract);
      const auto& seeds = params.contract.seeds;
      if (opt->seed_index >= 0) {
        if (opt->seed_index >= static_cast<int64_t>(seeds.size())) {
          throw InputError("--seed-index " + std::to_string(opt->seed_index) + ": " +
                           opt->contract + " has " + std::to_string(seeds.size()) + " seeds");
        }
        params.seed = seeds[static_cast<std::size_t>(opt->seed_index)];
      } else if (opt->seed >= 0) {
        params.seed = static_cast<uint64_t>(opt->seed);
        if (std::find(seeds.begin(), seeds.end(), params.seed) == seeds.end()) {
          throw InputError("--seed " + std::to_string(opt->seed) + ": not among the seeds of " +
                           opt->contract);
        }
      } else {
        throw InputError("generate: give --seed or --seed-index");
      }
      params.impl_spec = opt->impl;
      params.runs_root = opt->runs;
      params.device = opt->device;
      params.fused_candidate = fused_candidate_call();
      params.save_inputs = runs::parse_save_inputs(opt->save_inputs);
      params.verify_last_step = opt->verify_last_step;
      params.accept_new_numerics = opt->accept_new_numerics;
      // One line per start, so a job log shows where every stretch of steps was computed.
      params.on_numerics = [](const nlohmann::json& numerics) {
        std::printf("numerics environment: %s\n", numerics.dump().c_str());
        std::fflush(stdout);
      };
      params.gate_file = opt->gate;
      params.skip_gate = opt->skip_gate;
      params.stop_requested = &install_stop_signals();
      ProgressBar bar("seed " + std::to_string(params.seed), parse_progress_mode(global.progress));
      TimingLog timings(params.device);
      params.on_stage = [&](const std::string& stage, double seconds) {
        timings.stage(stage, seconds);
      };
      params.on_step = [&](const runs::StepEvent& e) {
        timings.step(e);
        bar.update(static_cast<double>(e.step + 1) / e.num_calls,
                   "step " + std::to_string(e.step + 1) + "/" + std::to_string(e.num_calls) +
                       (e.replayed ? " (replayed)" : ""));
      };
      params.on_decode = [&](const std::string& what) {
        bar.finish();
        std::printf("%s\n", what.c_str());
        std::fflush(stdout);
      };
      const runs::GenerateResult r = runs::generate_run(params, candidate_ops());
      bar.finish();
      if (!r.decoded) std::printf("not decoded: the model has no video decoder (vae/)\n");
      std::printf("%s: %d calls, %d replayed from disk, %d computed%s\n",
                  r.run_dir.string().c_str(), r.num_calls, r.replayed, r.computed,
                  r.verified_last_step ? ", last saved step verified bitwise" : "");
      if (r.numerics_check == "verified" || r.numerics_check == "accepted" ||
          r.numerics_check == "unchecked") {
        std::printf("numerics: segment %d (%s) after a change of %s\n", r.segment,
                    r.numerics_check.c_str(), r.numerics_changes.c_str());
      }
      if (r.segment > 0) {
        std::printf("segments: %s%s\n", r.segments.c_str(), r.mixed ? " - the run is mixed" : "");
      }
      if (!opt->timings.empty()) timings.write(opt->timings, r.run_dir);
      return 0;
    };
  });
}

}  // namespace h3p::cli
