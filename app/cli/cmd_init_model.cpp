// `h3parity init-model`: write a diffusers-layout model directory for a preset.
#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/progress.h"
#include "core/model/init_decoders.h"
#include "core/model/init_model.h"

namespace h3p::cli {

void add_init_model(CLI::App& app, Action& action, const GlobalOptions& global) {
  struct Options {
    std::string preset = "tiny";
    std::string out;
    int64_t seed = -1;
    int64_t layers = -1;
    bool fp32 = false;
    std::string decoders = "tiny";
    bool dry_run = false;
    std::string weights = "files";
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "init-model", "write a model directory for a preset (tiny, small, full-shape) with seeded "
                    "weights, diffusers names and checkpoint dtypes, and its decoders (--decoders)");
  cmd->add_option("--preset", opt->preset, "tiny | small | full-shape")->capture_default_str();
  cmd->add_option("--out", opt->out, "model directory to write (transformer/ inside)")->required();
  cmd->add_option("--seed", opt->seed, "weight seed (default: the preset's)");
  cmd->add_option("--layers", opt->layers, "number of transformer blocks (full-shape: default 1)");
  cmd->add_flag("--fp32", opt->fp32, "store every parameter in fp32");
  cmd->add_option("--decoders", opt->decoders,
                  "vae/ and audio_vae/ to write: tiny (real geometry, small widths) | released "
                  "(the released configs, billions of parameters) | none")
      ->check(CLI::IsMember({"tiny", "released", "none"}))
      ->capture_default_str();
  cmd->add_option("--weights", opt->weights,
                  "files: safetensors weight files | seeded: only configs and seed records, the "
                  "weights drawn on the device at load time (a released-size model without "
                  "62 GB on disk)")
      ->check(CLI::IsMember({"files", "seeded"}))
      ->capture_default_str();
  cmd->add_flag("--dry-run", opt->dry_run,
                "write nothing; print the configs that would be written (transformer, vae, "
                "audio_vae; null for none) and each component's parameter count as JSON");
  cmd->callback([&action, &global, opt] {
    action = [&global, opt] {
      model::InitModelParams params;
      params.preset = model::find_preset(opt->preset, opt->layers);
      params.seed = opt->seed >= 0 ? static_cast<uint64_t>(opt->seed) : params.preset.seed;
      params.all_fp32 = opt->fp32;
      params.decoders = opt->decoders;
      params.seeded_weights = opt->weights == "seeded";
      if (opt->dry_run) {
        std::printf("%s\n", model::init_model_plan(params).dump(2).c_str());
        return 0;
      }
      if (opt->decoders != "none") {
        std::printf("%s\n", model::describe_decoder_preset(opt->decoders).c_str());
        std::fflush(stdout);
      }
      ProgressBar bar("init-model", parse_progress_mode(global.progress));
      auto dir = model::init_model(opt->out, params, [&](double f) { bar.update(f); });
      bar.finish();
      std::printf("wrote %s (preset %s, seed %llu, %lld layers%s)\n", dir.string().c_str(),
                  params.preset.name.c_str(), static_cast<unsigned long long>(params.seed),
                  static_cast<long long>(params.preset.config.num_layers),
                  params.seeded_weights ? ", seeded weights" : "");
      return 0;
    };
  });
}

}  // namespace h3p::cli
