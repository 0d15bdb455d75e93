// `h3parity slurm generate|resume-check|compare`: renders Slurm job scripts from the templates
// of resources/slurm/ (embedded at build time; --templates reads them from a directory) and,
// with --submit, submits them with sbatch and prints the job ids. Generation is an array with
// one seed per task; compare depends on the generation array with afterok.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <map>
#include <regex>
#include <sstream>

#include "app/cli/commands.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/model/config.h"
#include "core/ops/plugin/plugin_library.h"
#include "core/ops/impl_spec.h"
#include "core/runs/gate.h"
#include "core/runs/generation.h"
#include "core/runs/identity.h"
#include "core/runs/run_paths.h"

namespace h3p::cli {
namespace generated {
// name -> template text, then {nullptr, nullptr} (written by app/cli/CMakeLists.txt).
extern const char* const kSlurmTemplates[][2];
}  // namespace generated

namespace {
namespace fs = std::filesystem;

// Options every `slurm` subcommand shares.
struct SlurmOptions {
  std::string contract, runs, out, h3parity, templates, time = "01:00:00", device = "cpu";
  std::string array, partition, constraint, gpu_type;
  std::vector<std::string> sbatch_args;
  int cpus = 1;
  int gpus = 0;  // per task (a task is one job on one node): --gres=gpu:[TYPE:]N; 0: none
  int signal_lead = 300;
  bool submit = false;
};

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// A value that goes into an #SBATCH line verbatim: no whitespace, quotes or shell syntax.
std::string sbatch_word(const std::string& option, const std::string& value) {
  static const std::regex safe(R"([A-Za-z0-9._:,/=%+@-]+)");
  if (!std::regex_match(value, safe)) {
    throw InputError(option + " '" + value + "': only [A-Za-z0-9._:,/=%+@-] may go into #SBATCH");
  }
  return value;
}

// A --constraint value (Slurm's feature expression: a&b, a|b, [a|b], (a&b)*2) for an #SBATCH
// line, verbatim: features, the operators & | [ ] ( ) * and commas; no whitespace, quotes,
// newlines or shell syntax.
std::string constraint_word(const std::string& value) {
  static const std::regex safe(R"([A-Za-z0-9._:,/=+@&|()*\[\]-]+)");
  if (!std::regex_match(value, safe)) {
    throw InputError("--constraint '" + value +
                     "': only feature names of [A-Za-z0-9._:/=+@-] and the operators & | [ ] "
                     "( ) * , may go into #SBATCH --constraint");
  }
  return value;
}

bool starts_with_any(const std::string& text, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes) {
    if (text.rfind(p, 0) == 0) return true;
  }
  return false;
}

// The #SBATCH lines of --partition, --constraint, --gpus/--gpu-type and --sbatch-arg. Refuses
// (InputError naming the option) a value that would break the script, --gpu-type without
// GPUs, and an --sbatch-arg repeating what an option sets (sbatch keeps the last of two
// --constraint lines, so the pin would be lost without a word).
std::string sbatch_extra(const SlurmOptions& o) {
  std::string extra;
  if (!o.partition.empty()) {
    extra += "#SBATCH --partition=" + sbatch_word("--partition", o.partition) + "\n";
  }
  if (!o.constraint.empty()) {
    extra += "#SBATCH --constraint=" + constraint_word(o.constraint) + "\n";
  }
  if (o.gpus < 0) throw InputError("--gpus " + std::to_string(o.gpus) + ": must be 0 or more");
  if (!o.gpu_type.empty()) {
    if (o.gpus == 0) {
      throw InputError("--gpu-type '" + o.gpu_type + "': no GPUs are requested; request them "
                       "with --gpus N (not --sbatch-arg=--gres=...)");
    }
    static const std::regex gres_type("[A-Za-z0-9_.-]+");
    if (!std::regex_match(o.gpu_type, gres_type)) {
      throw InputError("--gpu-type '" + o.gpu_type + "': a gres type is [A-Za-z0-9_.-]+");
    }
  }
  if (o.gpus > 0) {
    extra += "#SBATCH --gres=gpu:" + (o.gpu_type.empty() ? "" : o.gpu_type + ":") +
             std::to_string(o.gpus) + "\n";
  }
  for (const auto& a : o.sbatch_args) {
    sbatch_word("--sbatch-arg", a);
    if (!o.constraint.empty() && starts_with_any(a, {"--constraint", "-C"})) {
      throw InputError("--sbatch-arg '" + a + "': --constraint is given already");
    }
    if (o.gpus > 0 && starts_with_any(a, {"--gres=", "--gpus=", "--gpus-per-", "-G"})) {
      throw InputError("--sbatch-arg '" + a + "': --gpus requests the GPUs already");
    }
    extra += "#SBATCH " + a + "\n";
  }
  return extra;
}

std::string load_template(const SlurmOptions& o, const std::string& name) {
  if (!o.templates.empty()) return io::read_file(fs::path(o.templates) / (name + ".sbatch.in"));
  for (std::size_t i = 0; generated::kSlurmTemplates[i][0] != nullptr; ++i) {
    if (name == generated::kSlurmTemplates[i][0]) return generated::kSlurmTemplates[i][1];
  }
  throw InputError("no Slurm template '" + name + "' in this build");
}

// Replaces every @NAME@ (NAME: [A-Z][A-Z0-9_]*); an unknown one is an error in the template.
std::string render(const std::string& text, const std::map<std::string, std::string>& values,
                   const std::string& name) {
  static const std::regex placeholder("@([A-Z][A-Z0-9_]*)@");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), placeholder);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    auto v = values.find(m[1].str());
    if (v == values.end()) {
      throw InputError(name + ".sbatch.in: unknown placeholder @" + m[1].str() + "@");
    }
    out += text.substr(last, static_cast<std::size_t>(m.position(0)) - last) + v->second;
    last = static_cast<std::size_t>(m.position(0) + m.length(0));
  }
  return out + text.substr(last);
}

// The h3parity front next to this binary (h3parity-engine), which job scripts call.
std::string self_path() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error) return "h3parity";
  const fs::path front = exe.parent_path() / "h3parity";
  return fs::exists(front) ? front.string() : exe.string();
}

// The values every template shares.
std::map<std::string, std::string> common_values(const SlurmOptions& o,
                                                 const contract::Contract& c,
                                                 const std::string& job_name,
                                                 const fs::path& log_dir) {
  const std::string array =
      o.array.empty() ? "0-" + std::to_string(c.seeds.size() - 1) : o.array;
  return {{"JOB_NAME", sbatch_word("job name", job_name)},
          {"ARRAY", sbatch_word("--array", array)},
          {"SIGNAL_LEAD", std::to_string(o.signal_lead)},
          {"TIME", sbatch_word("--time", o.time)},
          {"CPUS", std::to_string(o.cpus)},
          {"LOG_DIR", sbatch_word("log directory", log_dir.string())},
          {"SBATCH_EXTRA", sbatch_extra(o)},
          {"H3PARITY", shell_quote(o.h3parity.empty() ? self_path()
                                                      : fs::absolute(o.h3parity).string())},
          {"CONTRACT", shell_quote(fs::absolute(o.contract).lexically_normal().string())},
          {"CONTRACT_NAME", c.name},
          {"RUNS", shell_quote(fs::absolute(o.runs).lexically_normal().string())},
          {"DEVICE", shell_quote(o.device)}};
}

// Writes the script (mode 0755) and returns its path.
fs::path write_script(const fs::path& dir, const std::string& file, const std::string& text) {
  const fs::path path = dir / file;
  io::atomic_write_text(path, text);
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  return path;
}

// sbatch --parsable [--dependency=...] SCRIPT; returns the job id.
std::string submit(const fs::path& script, const std::string& dependency) {
  std::string command = "sbatch --parsable";
  if (!dependency.empty()) command += " --dependency=" + shell_quote(dependency);
  command += " " + shell_quote(script.string()) + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw InputError("cannot run sbatch: " + command);
  std::string output;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe) != nullptr) output += buf;
  const int status = ::pclose(pipe);
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  if (status != 0) {
    throw InputError(script.string() + ": sbatch failed (exit " +
                     std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "): " + output);
  }
  // --parsable prints "<id>" or "<id>;<cluster>" (last line; warnings may precede it).
  const std::string last = output.substr(output.find_last_of('\n') + 1);
  const std::string id = last.substr(0, last.find(';'));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) {
    throw InputError(script.string() + ": sbatch printed no job id: " + output);
  }
  return id;
}

void add_common(CLI::App* cmd, SlurmOptions& o) {
  cmd->add_option("--contract", o.contract, "contract JSON")->required();
  cmd->add_option("--runs", o.runs, "runs directory (shared by the nodes)")->required();
  cmd->add_option("--out", o.out, "where the scripts and logs go (default: RUNS/slurm)");
  cmd->add_option("--h3parity", o.h3parity, "the h3parity the jobs run (default: this one)");
  cmd->add_option("--templates", o.templates,
                  "directory with *.sbatch.in templates (default: the embedded ones)");
  cmd->add_option("--time", o.time, "time limit per task (sbatch --time)")->capture_default_str();
  cmd->add_option("--signal-lead", o.signal_lead,
                  "seconds before the time limit at which SIGUSR1 stops the task at a safe "
                  "point and requeues it")->capture_default_str();
  cmd->add_option("--cpus-per-task", o.cpus, "CPUs per task")->capture_default_str();
  cmd->add_option("--partition", o.partition, "partition");
  cmd->add_option("--constraint", o.constraint,
                  "node features every start of a task needs (#SBATCH --constraint, Slurm's "
                  "syntax: a&b, a|b, [a|b]); pins a requeued task to one node type");
  cmd->add_option("--gpus", o.gpus, "GPUs per task (#SBATCH --gres=gpu:N)");
  cmd->add_option("--gpu-type", o.gpu_type,
                  "GPU model, the gres type: --gres=gpu:TYPE:N (needs --gpus); pins a "
                  "requeued task to that model");
  cmd->add_option("--array", o.array, "array task ids = seed indices (default: every seed)");
  cmd->add_option("--sbatch-arg", o.sbatch_args,
                  "extra #SBATCH argument, e.g. --sbatch-arg=--mem=64G (repeatable)");
  cmd->add_option("--device", o.device, "cpu | cuda[:N]")->capture_default_str();
  cmd->add_flag("--submit", o.submit, "submit with sbatch and print the job ids");
}

fs::path job_dir(const SlurmOptions& o) {
  const fs::path dir = fs::absolute(o.out.empty() ? fs::path(o.runs) / "slurm" : fs::path(o.out));
  fs::create_directories(dir / "logs");
  return dir;
}

struct CompareSpec {
  std::string candidate = "candidate", provider = "provider", after;
};

// Renders (and submits) the compare array; returns the job id or "".
std::string compare_job(const SlurmOptions& o, const contract::Contract& c, const CompareSpec& s) {
  const ops::ImplSpec candidate = ops::ImplSpec::parse(s.candidate);
  const ops::ImplSpec provider = ops::ImplSpec::parse(s.provider);
  const fs::path dir = job_dir(o);
  const std::string name = "compare-" + c.name + "-" + runs::impl_dir_name(candidate.text);
  auto values = common_values(o, c, name, dir / "logs");
  std::string seeds;
  for (auto seed : c.seeds) seeds += (seeds.empty() ? "" : " ") + std::to_string(seed);
  values["SEEDS"] = seeds;
  values["CANDIDATE_TEXT"] = candidate.text;
  values["PROVIDER_TEXT"] = provider.text;
  values["CANDIDATE_DIR"] = runs::impl_dir_name(candidate.text);
  values["PROVIDER_DIR"] = runs::impl_dir_name(provider.text);
  const fs::path script =
      write_script(dir, name + ".sbatch", render(load_template(o, "compare"), values, "compare"));
  std::printf("compare script: %s\n", script.string().c_str());
  if (!o.submit) {
    std::printf("  submit: sbatch%s %s\n",
                s.after.empty() ? "" : (" --dependency=afterok:" + s.after).c_str(),
                script.string().c_str());
    return "";
  }
  const std::string id = submit(script, s.after.empty() ? "" : "afterok:" + s.after);
  std::printf("submitted compare array job %s%s\n", id.c_str(),
              s.after.empty() ? "" : (" (afterok:" + s.after + ")").c_str());
  return id;
}

}  // namespace

void add_slurm(CLI::App& app, Action& action, const GlobalOptions& global) {
  (void)global;
  CLI::App* slurm = app.add_subcommand(
      "slurm", "write Slurm job scripts (generation arrays with one seed per task, requeue on "
               "preemption or time limit; resume-check; compare after the array) and with "
               "--submit submit them");
  slurm->require_subcommand(1);

  // slurm generate
  struct GenerateOptions {
    SlurmOptions common;
    std::string impl = "provider", save_inputs = "every", gate, compare_against;
    bool skip_gate = false;
    bool accept_new_numerics = false;
  };
  auto gen = std::make_shared<GenerateOptions>();
  CLI::App* g = slurm->add_subcommand(
      "generate", "generation array: task i generates seed index i; refuses to submit a gated "
                  "contract whose gate has not passed, as the job itself would");
  add_common(g, gen->common);
  g->add_option("--impl", gen->impl, "impl spec")->capture_default_str();
  g->add_option("--save-inputs", gen->save_inputs, "every | first | none")->capture_default_str();
  auto* gate = g->add_option("--gate", gen->gate, "gate result to check (gated contracts)");
  g->add_flag("--skip-gate", gen->skip_gate, "generate without a passed gate (recorded)")
      ->excludes(gate);
  g->add_flag("--accept-new-numerics", gen->accept_new_numerics,
              "a task resumed on a node whose numerics environment gives different results "
              "continues and marks its run mixed (default: the task refuses, exit 2)");
  g->add_option("--compare-against", gen->compare_against,
                "also render (and submit, afterok on the array) compare jobs of this run "
                "against the runs of this provider spec");
  g->callback([&action, gen] {
    action = [gen] {
      const SlurmOptions& o = gen->common;
      sbatch_extra(o);  // refuses a bad #SBATCH option before any work
      const contract::Contract c = contract::load_contract(o.contract);
      const ops::ImplSpec spec = ops::ImplSpec::parse(gen->impl);
      // A plugin must be found here, before any task would fail on it (it is not loaded: the
      // submitting node may lack its GPU).
      if (spec.uses_plugin()) ops::plugin::locate_plugin(spec.plugin);
      runs::parse_save_inputs(gen->save_inputs);
      // The model once, before any task starts (a preset materialises under RUNS/models).
      const fs::path model_dir = runs::materialise_model(c, o.runs);
      if (c.require_gate) {
        try {
          runs::check_generation_gate(
              c, model_dir, runs::compute_identity(model::resolve_transformer_dir(model_dir)),
              spec, o.device, {gen->gate, gen->skip_gate});
        } catch (const InputError& e) {
          if (o.submit) {
            throw InputError(std::string("refusing to submit generation (the job would refuse "
                                         "to start): ") + e.what());
          }
          std::fprintf(stderr, "warning: the jobs would refuse to start: %s\n", e.what());
        }
      }
      const fs::path dir = job_dir(o);
      const std::string name = "generate-" + c.name + "-" + runs::impl_dir_name(spec.text);
      auto values = common_values(o, c, name, dir / "logs");
      values["IMPL"] = shell_quote(spec.text);
      values["IMPL_TEXT"] = spec.text;
      std::string args = "--save-inputs " + shell_quote(gen->save_inputs);
      if (!gen->gate.empty()) args += " --gate " + shell_quote(fs::absolute(gen->gate).string());
      if (gen->skip_gate) args += " --skip-gate";
      if (gen->accept_new_numerics) args += " --accept-new-numerics";
      values["GENERATE_ARGS"] = args;
      const fs::path script = write_script(
          dir, name + ".sbatch", render(load_template(o, "generate"), values, "generate"));
      std::printf("generate script: %s\n", script.string().c_str());
      std::string id;
      if (o.submit) {
        id = submit(script, "");
        std::printf("submitted generate array job %s (%zu seeds; logs in %s)\n", id.c_str(),
                    c.seeds.size(), (dir / "logs").string().c_str());
      } else {
        std::printf("  submit: sbatch %s\n", script.string().c_str());
      }
      if (!gen->compare_against.empty()) {
        compare_job(o, c, {spec.text, gen->compare_against, id});
      }
      return 0;
    };
  });

  // slurm resume-check
  struct CheckOptions {
    SlurmOptions common;
    std::string impl = "provider", gate;
    bool skip_gate = false;
  };
  auto chk = std::make_shared<CheckOptions>();
  CLI::App* r = slurm->add_subcommand(
      "resume-check", "resume-check array: task i checks seed index i");
  add_common(r, chk->common);
  r->add_option("--impl", chk->impl, "impl spec")->capture_default_str();
  auto* rgate = r->add_option("--gate", chk->gate, "gate result to check (gated contracts)");
  r->add_flag("--skip-gate", chk->skip_gate, "run without a passed gate")->excludes(rgate);
  r->callback([&action, chk] {
    action = [chk] {
      const SlurmOptions& o = chk->common;
      sbatch_extra(o);  // refuses a bad #SBATCH option before any work
      const contract::Contract c = contract::load_contract(o.contract);
      const ops::ImplSpec spec = ops::ImplSpec::parse(chk->impl);
      if (spec.uses_plugin()) ops::plugin::locate_plugin(spec.plugin);
      runs::materialise_model(c, o.runs);
      const fs::path dir = job_dir(o);
      const std::string name = "resume-check-" + c.name + "-" + runs::impl_dir_name(spec.text);
      auto values = common_values(o, c, name, dir / "logs");
      values["IMPL"] = shell_quote(spec.text);
      values["IMPL_TEXT"] = spec.text;
      std::string args;
      if (!chk->gate.empty()) args += "--gate " + shell_quote(fs::absolute(chk->gate).string());
      if (chk->skip_gate) args += "--skip-gate";
      values["GENERATE_ARGS"] = args;
      const fs::path script = write_script(
          dir, name + ".sbatch", render(load_template(o, "resume-check"), values, "resume-check"));
      std::printf("resume-check script: %s\n", script.string().c_str());
      if (o.submit) {
        std::printf("submitted resume-check array job %s\n", submit(script, "").c_str());
      } else {
        std::printf("  submit: sbatch %s\n", script.string().c_str());
      }
      return 0;
    };
  });

  // slurm compare
  struct CompareOptions {
    SlurmOptions common;
    CompareSpec spec;
  };
  auto cmp = std::make_shared<CompareOptions>();
  CLI::App* c = slurm->add_subcommand(
      "compare", "compare array: task i compares seed index i's candidate run with its "
                 "provider run, after the generation array(s) with afterok");
  add_common(c, cmp->common);
  c->add_option("--candidate", cmp->spec.candidate, "candidate impl spec")->capture_default_str();
  c->add_option("--provider", cmp->spec.provider, "provider impl spec")->capture_default_str();
  c->add_option("--after", cmp->spec.after,
                "job id(s) to depend on with afterok (colon-separated)");
  c->callback([&action, cmp] {
    action = [cmp] {
      sbatch_extra(cmp->common);  // refuses a bad #SBATCH option before any work
      const contract::Contract contract = contract::load_contract(cmp->common.contract);
      if (!cmp->spec.after.empty()) sbatch_word("--after", cmp->spec.after);
      compare_job(cmp->common, contract, cmp->spec);
      return 0;
    };
  });
}

}  // namespace h3p::cli
