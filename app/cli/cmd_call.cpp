// `h3parity call`: replay one transformer call file with an impl spec and write its outputs.
#include <initializer_list>
#include <ATen/ATen.h>

#include <cstdio>

#include "app/cli/plugin_options.h"
#include "app/cli/candidate.h"
#include "app/cli/commands.h"
#include "core/common/error.h"
#include "core/io/safetensors.h"
#include "core/metrics/tensor_diff.h"
#include "core/model/call_file.h"
#include "core/ops/device.h"
#include "core/runs/call_runner.h"
#include "core/ops/provider_ops.h"

namespace h3p::cli {

void add_call(CLI::App& app, Action& action, const GlobalOptions&) {
  struct Options {
    std::string model, inputs, impl = "provider", out, device = "cpu", trace;
    double max_rel_l2 = -1;
    bool require_bitwise = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "call", "replay one transformer call file with an impl spec and write its outputs; when "
              "the file holds outputs, report the difference against them");
  add_check_plugin_flag(cmd);
  cmd->add_option("--model", opt->model, "model directory (or its transformer/)")->required();
  cmd->add_option("--inputs", opt->inputs, "call file (safetensors)")->required();
  cmd->add_option("--impl", opt->impl, "impl spec")->capture_default_str();
  cmd->add_option("--out", opt->out, "call file to write (inputs + outputs)")->required();
  cmd->add_option("--device", opt->device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_option("--max-rel-l2", opt->max_rel_l2,
                  "exit 1 when either output's relative L2 against the saved one exceeds this");
  cmd->add_option("--trace", opt->trace,
                  "also write the call's intermediate stages (embeddings, refiner, every block's "
                  "attention and feed-forward branch and output, norm_out) to this safetensors "
                  "file, named as tools/golden/trace_diffusers.py names them");
  cmd->add_flag("--require-bitwise", opt->require_bitwise,
                "exit 1 unless both outputs equal the saved ones bit for bit");
  cmd->callback([&action, opt] {
    action = [opt] {
      ops::configure_threads();
      const at::Device device = ops::resolve_device(opt->device);
      const ops::ImplSpec spec = ops::ImplSpec::parse(opt->impl);
      auto loaded = model::load_transformer(model::resolve_transformer_dir(opt->model), device);
      model::Transformer transformer(loaded.config, std::move(loaded.weights));
      runs::CallRunner runner(transformer, spec, candidate_ops(), device, fused_candidate_call());

      const io::SafetensorsFile file = io::SafetensorsFile::open(opt->inputs);
      const model::CallInputs inputs = model::read_call_inputs(file);
      model::validate_call(inputs, transformer.config(), opt->inputs);
      const auto saved = model::read_call_outputs(file);

      std::vector<io::NamedTensor> stages;
      model::CallTrace trace;
      if (!opt->trace.empty()) {
        trace = [&](const std::string& name, const at::Tensor& value) {
          stages.push_back({name, value.to(at::kCPU).contiguous()});
        };
      }
      const model::CallOutputs outputs = runner.forward(inputs, trace);
      if (!opt->trace.empty()) {
        std::vector<at::Tensor> holder;
        io::write_safetensors(opt->trace, io::make_records(stages, holder),
                              {{"impl", spec.text}, {"device", ops::describe_device(device)}});
      }
      model::write_call_file(opt->out, &inputs, outputs,
                             {{"impl", spec.text}, {"device", ops::describe_device(device)},
                              {"torch", ops::torch_version_string()}});
      std::printf("wrote %s (impl %s, device %s)\n", opt->out.c_str(), spec.text.c_str(),
                  ops::describe_device(device).c_str());
      if (!saved) {
        if (opt->require_bitwise || opt->max_rel_l2 >= 0) {
          throw InputError(opt->inputs + ": holds no outputs to compare against");
        }
        return 0;
      }
      bool ok = true;
      std::printf("%-14s %14s %14s %8s\n", "output", "rel_l2", "max_abs", "bitwise");
      for (auto [name, got, want] : {std::tuple{"sample", outputs.sample, saved->sample},
                                     std::tuple{"audio_sample", outputs.audio_sample,
                                                saved->audio_sample}}) {
        auto d = metrics::diff_tensors(got, want, opt->inputs + ": " + name);
        std::printf("%-14s %14.6e %14.6e %8s\n", name, d.rel_l2, d.max_abs,
                    d.bitwise_equal ? "yes" : "no");
        ok = ok && d.finite && (!opt->require_bitwise || d.bitwise_equal) &&
             (opt->max_rel_l2 < 0 || d.rel_l2 <= opt->max_rel_l2);
      }
      if (!ok) throw CheckFailed(opt->out + ": outputs differ from " + opt->inputs +
                                 " beyond the requested bound");
      return 0;
    };
  });
}

}  // namespace h3p::cli
