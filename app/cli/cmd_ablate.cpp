// `h3parity ablate`: replay a provider run's saved step with operator groups swapped, or (with
// --all-steps) the teacher-forced per-step drift beside the free-running one.
#include <algorithm>
#include <cstdio>

#include "app/cli/plugin_options.h"
#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "app/cli/progress.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/ops/device.h"
#include "core/ops/impl_spec.h"
#include "core/ops/provider_ops.h"
#include "core/runs/ablation.h"

namespace h3p::cli {
namespace {

std::vector<ops::Group> parse_groups(const std::string& text) {
  std::vector<ops::Group> groups;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? comma : comma - start);
    auto g = ops::parse_group(name);
    if (!g) throw InputError("--groups: unknown group '" + name + "'");
    groups.push_back(*g);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return groups;
}

// --variants: "device" (the provider's variants on the device), "none", or specs by commas.
std::vector<std::string> parse_variants(const std::string& text, const std::string& device) {
  if (text == "none") return {};
  if (text == "device") return ops::provider_variants(ops::resolve_device(device));
  std::vector<std::string> specs;
  std::size_t start = 0;
  while (start <= text.size()) {
    // A spec's overrides are separated by commas too: a new spec starts at a base name.
    std::size_t next = std::string::npos;
    for (const char* base : {",provider", ",candidate", ",plugin:", ",python:"}) {
      next = std::min(next, text.find(base, start));
    }
    const std::string spec = text.substr(start, next == std::string::npos ? next : next - start);
    try {
      specs.push_back(ops::ImplSpec::parse(spec).text);
    } catch (const InputError& e) {
      throw InputError(std::string("--variants: ") + e.what());
    }
    if (next == std::string::npos) break;
    start = next + 1;
  }
  return specs;
}

void print_ablation(const runs::AblationResult& r) {
  std::printf("ablation at step %d: provider %s (%s), candidate %s (%s)\n", r.params.step,
              r.params.provider_run.string().c_str(), r.provider_spec.c_str(),
              r.params.candidate_run.string().c_str(), r.candidate_spec.c_str());
  // The spec column fits the longest spec (plugin specs carry a path).
  int width = 34;
  for (const auto& row : r.rows) width = std::max(width, static_cast<int>(row.impl_spec.size()));
  std::printf("%-*s %12s %12s %12s %12s %8s\n", width, "impl spec", "video rel_l2", "audio rel_l2",
              "video maxabs", "audio maxabs", "bitwise");
  for (const auto& row : r.rows) {
    if (!row.error.empty()) {
      std::printf("%-*s not run: %s\n", width, row.impl_spec.c_str(), row.error.c_str());
      continue;
    }
    std::printf("%-*s %12.3e %12.3e %12.3e %12.3e %8s%s\n", width, row.impl_spec.c_str(),
                row.video.rel_l2, row.audio.rel_l2, row.video.max_abs, row.audio.max_abs,
                row.video.bitwise_equal && row.audio.bitwise_equal ? "yes" : "no",
                row.variant ? "  (variant)" : "");
  }
  if (r.free_video) {
    std::printf("%-*s %12.3e %12.3e %12.3e %12.3e %8s\n", width, "candidate run (free-running)",
                r.free_video->rel_l2, r.free_audio->rel_l2, r.free_video->max_abs,
                r.free_audio->max_abs,
                r.free_video->bitwise_equal && r.free_audio->bitwise_equal ? "yes" : "no");
  }
}

void print_drift(const runs::DriftResult& d, double threshold) {
  std::printf("%4s %9s %9s | %13s %13s | %13s %13s | %s\n", "step", "t_video", "t_audio",
              "teacher video", "teacher audio", "free video", "free audio",
              "variants video");
  for (const auto& r : d.rows) {
    std::printf("%4d %9.6f %9.6f | %13.3e %13.3e |", r.step, r.video_t, r.audio_t,
                r.teacher_video.rel_l2, r.teacher_audio.rel_l2);
    if (r.free_video) {
      std::printf(" %13.3e %13.3e |", r.free_video->rel_l2, r.free_audio->rel_l2);
    } else {
      std::printf(" %13s %13s |", "-", "-");
    }
    for (const auto& v : r.variants) std::printf(" %.3e", v.video.rel_l2);
    std::printf("\n");
  }
  if (!d.rows.empty() && !d.rows.front().variants.empty()) {
    std::printf("variants:");
    for (const auto& v : d.rows.front().variants) std::printf(" %s", v.impl_spec.c_str());
    std::printf("\n");
  }
  for (const auto& e : d.variant_errors) std::printf("variant not run: %s\n", e.c_str());
  const int first = d.first_over(threshold);
  std::printf("first step whose one-step error exceeds %.1e: %s\n", threshold,
              first < 0 ? "none" : std::to_string(first).c_str());
}

}  // namespace

void add_ablate(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    runs::AblationParams params;
    std::string groups, json, markdown, model, variants = "device";
    bool all_steps = false;
    double threshold = 1e-2;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "ablate", "replay a provider run's saved step with the candidate and with each operator "
                "group swapped to the provider; or the teacher-forced drift of every step");
  add_check_plugin_flag(cmd);
  cmd->add_option("--candidate", opt->params.candidate_run, "the candidate's run directory")
      ->required();
  cmd->add_option("--provider", opt->params.provider_run, "the provider's run directory")
      ->required();
  auto* step = cmd->add_option("--step", opt->params.step, "the step to replay");
  auto* all = cmd->add_flag("--all-steps", opt->all_steps,
                            "teacher-forced drift: the candidate on every saved provider step");
  step->excludes(all);
  cmd->add_option("--groups", opt->groups, "groups to swap one at a time (default: all)");
  cmd->add_option("--device", opt->params.device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--model", opt->model, "model directory (default: the provider run's)");
  cmd->add_option("--variants", opt->variants,
                  "provider variants measured beside the candidate: 'device' (the device's "
                  "SDPA backends, and cuBLASLt GEMMs on CUDA), 'none', or impl specs separated "
                  "by commas")
      ->capture_default_str();
  cmd->add_option("--json", opt->json, "write the result as JSON");
  cmd->add_option("--markdown", opt->markdown, "write the result as Markdown");
  cmd->add_option("--threshold", opt->threshold,
                  "relative L2 that marks the first drifting step (--all-steps)")
      ->capture_default_str();
  cmd->callback([&action, &global, opt, step, all] {
    action = [&global, opt, step, all] {
      if (step->count() == 0 && all->count() == 0) {
        throw InputError("ablate: give --step K or --all-steps");
      }
      runs::AblationParams params = opt->params;
      params.groups = parse_groups(opt->groups);
      params.model = opt->model;
      params.variants = parse_variants(opt->variants, params.device);
      params.fused_candidate = fused_candidate_call();
      ProgressBar bar("ablate", parse_progress_mode(global.progress));
      params.progress = [&](double f, const std::string& what) { bar.update(f, what); };
      std::string json_text, markdown;
      if (opt->all_steps) {
        const runs::DriftResult d = runs::teacher_forced_drift(params, candidate_ops());
        bar.finish();
        print_drift(d, opt->threshold);
        nlohmann::json j = d.to_json();
        j["first_step_over_threshold"] = d.first_over(opt->threshold);
        j["threshold"] = opt->threshold;
        json_text = j.dump(2);
        markdown = d.to_markdown();
      } else {
        const runs::AblationResult r = runs::run_ablation(params, candidate_ops());
        bar.finish();
        print_ablation(r);
        json_text = r.to_json().dump(2);
        markdown = r.to_markdown();
      }
      if (!opt->json.empty()) io::atomic_write_text(opt->json, json_text + "\n");
      if (!opt->markdown.empty()) io::atomic_write_text(opt->markdown, markdown);
      return 0;
    };
  });
}

}  // namespace h3p::cli
