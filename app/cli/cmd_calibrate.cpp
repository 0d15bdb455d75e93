// `h3parity calibrate`: the provider and its variants on calibration seeds -> a new contract
// whose bounds follow a stated rule from the provider's own spread, with the calibration
// record inside (covered by the contract digest). The input contract is never modified.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/compare_setup.h"
#include "app/cli/plugin_options.h"
#include "app/cli/progress.h"
#include "app/cli/stop_signals.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/runs/calibration.h"

namespace h3p::cli {
namespace {

// Applies "key=value" to the margins; throws InputError naming the option.
void apply_margin(contract::CalibrationMargins& m, const std::string& text) {
  const std::size_t eq = text.find('=');
  const std::string key = text.substr(0, eq);
  double* target = key == "psnr_db"               ? &m.psnr_db
                   : key == "ssim"                ? &m.ssim
                   : key == "ratio"               ? &m.ratio
                   : key == "psnr_db_cap"         ? &m.psnr_db_cap
                   : key == "temporal_rmse_floor" ? &m.temporal_rmse_floor
                   : key == "audio_rel_l2_floor"  ? &m.audio_rel_l2_floor
                                                  : nullptr;
  if (eq == std::string::npos || target == nullptr) {
    throw InputError("--margin " + text + ": want KEY=VALUE with KEY one of psnr_db, ssim, ratio, "
                     "psnr_db_cap, temporal_rmse_floor, audio_rel_l2_floor");
  }
  const std::string value = text.substr(eq + 1);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(v) || v < 0 ||
      (key == "psnr_db_cap" && v == 0)) {
    throw InputError("--margin " + text + ": the value must be a finite number >= 0" +
                     (key == "psnr_db_cap" ? std::string(" (and > 0)") : std::string()));
  }
  *target = v;
}

}  // namespace

void add_calibrate(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string contract, runs, out, json, name, rule = "worst-variant-margin", device = "cpu";
    std::vector<std::string> variants, margins;
    std::vector<std::uint64_t> seeds;
    int threads = 0;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "provider variants on calibration seeds -> a new contract whose bounds follow a stated "
      "rule from the provider's own spread (run this before any candidate generates)");
  add_check_plugin_flag(cmd);
  cmd->add_option("--contract", opt->contract, "contract JSON (read only)")->required();
  cmd->add_option("--runs", opt->runs,
                  "runs directory; calibration runs go to RUNS/<name>-calibration/<impl>/seed-<n> "
                  "and complete ones are reused")
      ->required();
  cmd->add_option("--out", opt->out, "the calibrated contract to write (never the input)")
      ->required();
  cmd->add_option("--variant", opt->variants,
                  "impl spec measured against the provider (repeatable; any spec: "
                  "provider:attention=math, provider:gemm=cublaslt, candidate, plugin:...); "
                  "default: the device's SDPA backends (cuda: flash, efficient, cudnn, math; "
                  "cpu: math), as provider:attention=<backend>");
  cmd->add_option("--calibration-seeds", opt->seeds,
                  "seeds to calibrate on, disjoint from the contract's (default: the three "
                  "seeds after the contract's largest, max+1, max+2, max+3)")
      ->delimiter(',');
  cmd->add_option("--rule", opt->rule,
                  "how figures become bounds: worst-variant-margin (docs/calibration.md)")
      ->capture_default_str();
  cmd->add_option("--margin", opt->margins,
                  "KEY=VALUE of the rule (repeatable): psnr_db (1), ssim (0.001), ratio (0.5), "
                  "psnr_db_cap (58.92), temporal_rmse_floor (0.00113), audio_rel_l2_floor "
                  "(0.0001)");
  cmd->add_option("--name", opt->name, "name of the new contract (default: <name>-calibrated)");
  cmd->add_option("--device", opt->device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--threads", opt->threads, "compare worker threads (0: one per core)");
  cmd->add_option("--json", opt->json, "write the table and the bounds as JSON");
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      runs::CalibrateParams params;
      params.contract = contract::load_contract(opt->contract);
      std::error_code error;
      if (std::filesystem::equivalent(opt->out, opt->contract, error)) {
        throw InputError("--out " + opt->out + ": is the input contract; calibrate writes a new one");
      }
      params.runs_root = opt->runs;
      params.variants = opt->variants;
      params.seeds = opt->seeds;
      params.rule = opt->rule;
      for (const std::string& m : opt->margins) apply_margin(params.margins, m);
      params.name = opt->name;
      params.generate.device = opt->device;
      params.generate.fused_candidate = fused_candidate_call();
      params.generate.stop_requested = &install_stop_signals();
      params.compare = base_compare_params(global, "", false, opt->threads, "swscale");
      ProgressBar bar("calibrate", parse_progress_mode(global.progress));
      std::string current;
      params.on_run = [&](const std::string& spec, std::uint64_t seed, bool reused) {
        current = spec + " seed " + std::to_string(seed);
        if (reused) std::printf("%s: complete run reused\n", current.c_str());
        std::fflush(stdout);
      };
      params.generate.on_step = [&](const runs::StepEvent& e) {
        bar.update(static_cast<double>(e.step + 1) / e.num_calls,
                   current + " step " + std::to_string(e.step + 1) + "/" +
                       std::to_string(e.num_calls));
      };
      const runs::CalibrateResult r = runs::calibrate(params, candidate_ops());
      bar.finish();
      std::fputs(runs::calibration_table(r.contract).c_str(), stdout);
      io::atomic_write_text(opt->out, contract::to_json(r.contract).dump(2) + "\n");
      if (!opt->json.empty()) {
        nlohmann::json j = runs::calibration_report(r.contract);
        j["out"] = opt->out;
        j["generated"] = r.generated;
        j["reused"] = r.reused;
        io::atomic_write_text(opt->json, j.dump(2) + "\n");
      }
      std::printf("%d runs generated, %d reused; wrote %s (contract '%s', digest %s)\n",
                  r.generated, r.reused, opt->out.c_str(), r.contract.name.c_str(),
                  contract::contract_digest(r.contract).c_str());
      return 0;
    };
  });
}

}  // namespace h3p::cli
