// `h3parity decode`: decode latents (video and/or audio) into media tensors with the model's
// VAE decoders, as the reference pipeline ends generation.
#include <ATen/ATen.h>

#include <cstdio>

#include "app/cli/commands.h"
#include "core/common/error.h"
#include "core/metrics/tensor_diff.h"
#include "core/model/decode_file.h"
#include "core/ops/device.h"

namespace h3p::cli {

void add_decode(CLI::App& app, Action& action, const GlobalOptions&) {
  struct Options {
    std::string model, latents, out, device = "cpu", autocast = "auto";
    int64_t tile = 256, tile_overlap = 64;
    bool no_tiling = false;
    double max_rel_l2 = -1;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "decode",
      "decode `latents` (1,24,T,H,W) and/or `audio_latents` (2,32,N), normalised as the "
      "sampler leaves them, into `video` (1,3,F,16H,16W) fp32 in [0,1] and `audio` "
      "(1,2,S) fp32; when the input also holds `video` / `audio`, report the "
      "difference against them");
  cmd->add_option("--model", opt->model, "model directory with vae/ and audio_vae/")->required();
  cmd->add_option("--latents", opt->latents, "input safetensors")->required();
  cmd->add_option("--out", opt->out, "output safetensors")->required();
  cmd->add_option("--device", opt->device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--autocast", opt->autocast,
                  "video decode precision: auto (float16 autocast on CUDA, as the reference "
                  "pipeline; fp32 on CPU) | on | off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_option("--tile", opt->tile, "spatial tile size in pixels (multiple of 16)")
      ->capture_default_str();
  cmd->add_option("--tile-overlap", opt->tile_overlap, "minimum tile overlap in pixels")
      ->capture_default_str();
  cmd->add_flag("--no-tiling", opt->no_tiling, "decode each frame in one piece");
  cmd->add_option("--max-rel-l2", opt->max_rel_l2,
                  "exit 1 when an output's relative L2 against the one in the input exceeds this");
  cmd->callback([&action, opt] {
    action = [opt] {
      ops::configure_threads();
      model::DecodeFileParams p;
      p.model = opt->model;
      p.latents = opt->latents;
      p.out = opt->out;
      p.device = opt->device;
      p.options.video_autocast = opt->autocast == "on" ? model::DecodeOptions::Autocast::on
                                 : opt->autocast == "off"
                                     ? model::DecodeOptions::Autocast::off
                                     : model::DecodeOptions::Autocast::automatic;
      p.options.tiling.enabled = !opt->no_tiling;
      p.options.tiling.tile_height = p.options.tiling.tile_width = opt->tile;
      p.options.tiling.min_overlap_height = p.options.tiling.min_overlap_width = opt->tile_overlap;
      p.before_decode = [](const std::string& what) {
        std::printf("%s\n", what.c_str());
        std::fflush(stdout);
      };
      const model::DecodeFileResult r = model::decode_file(p);
      if (r.video.defined()) {
        std::printf("video %s in %.2f s\n", c10::str(r.video.sizes()).c_str(), r.video_seconds);
      }
      if (r.audio.defined()) {
        std::printf("audio %s at %lld Hz in %.2f s\n", c10::str(r.audio.sizes()).c_str(),
                    static_cast<long long>(r.sample_rate), r.audio_seconds);
      }
      std::printf("wrote %s (device %s)\n", opt->out.c_str(), opt->device.c_str());
      bool ok = true, compared = false;
      for (auto [name, got, want] : {std::tuple{"video", r.video, r.saved_video},
                                     std::tuple{"audio", r.audio, r.saved_audio}}) {
        if (!got.defined() || !want.defined()) continue;
        if (!compared)
          std::printf("%-6s %14s %14s %8s\n", "output", "rel_l2", "max_abs", "bitwise");
        compared = true;
        auto d = metrics::diff_tensors(got, want, opt->latents + ": " + name);
        std::printf("%-6s %14.6e %14.6e %8s\n", name, d.rel_l2, d.max_abs,
                    d.bitwise_equal ? "yes" : "no");
        ok = ok && d.finite && (opt->max_rel_l2 < 0 || d.rel_l2 <= opt->max_rel_l2);
      }
      if (opt->max_rel_l2 >= 0 && !compared) {
        throw InputError(opt->latents + ": holds no video or audio to compare against");
      }
      if (!ok)
        throw CheckFailed(opt->out + ": outputs differ from " + opt->latents +
                          " beyond the requested bound");
      return 0;
    };
  });
}

}  // namespace h3p::cli
