#include "core/runs/import_run.h"

#include <ATen/ATen.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <system_error>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/safetensors.h"
#include "core/io/sha256.h"
#include "core/model/call_file.h"
#include "core/model/config.h"
#include "core/model/presets.h"
#include "core/ops/device.h"
#include "core/runs/environment.h"
#include "core/runs/generation.h"
#include "core/runs/identity.h"
#include "core/runs/manifest.h"
#include "core/runs/run_inputs.h"
#include "core/runs/run_paths.h"
#include "core/runs/run_setup.h"
#include "core/runs/step_store.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

// The call files of `dir` by step: NNN.safetensors (step_stem names) from 000 with no gap.
// Other names are ignored (a run's steps/ also holds the sidecars).
std::vector<fs::path> list_call_files(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) throw_input(dir.string(), "not a directory of call files");
  std::vector<std::pair<int, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    const std::string stem = entry.path().stem().string();
    if (entry.path().extension() != ".safetensors" || stem.empty() || stem.size() > 9 ||
        !std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const int step = std::stoi(stem);
    if (step_stem(step) != stem) {
      throw_input(entry.path().string(), "not a step file name: step " + std::to_string(step) +
                                             " is " + step_stem(step) + ".safetensors");
    }
    found.emplace_back(step, entry.path());
  }
  if (error) throw_input(dir.string(), "cannot list: " + error.message());
  if (found.empty()) throw_input(dir.string(), "holds no call files (NNN.safetensors from 000)");
  std::sort(found.begin(), found.end());
  std::vector<fs::path> files;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const int want = static_cast<int>(i);
    if (found[i].first != want) {
      throw_input((dir / (step_stem(want) + ".safetensors")).string(),
                  "missing: the step numbering has a gap (" +
                      (want == 0 ? std::string("the first file is ")
                                 : step_stem(want - 1) + ".safetensors is followed by ") +
                      found[i].second.filename().string() + ")");
    }
    files.push_back(found[i].second);
  }
  return files;
}

std::string shape_text(const at::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

// Empty when `recorded` equals `replayed` bit for bit (dtype, shape, bytes); else how not.
std::string bitwise_difference(const at::Tensor& recorded, const at::Tensor& replayed) {
  if (recorded.scalar_type() != replayed.scalar_type()) {
    return std::string("recorded dtype ") + c10::toString(recorded.scalar_type()) +
           ", the replayed state's is " + c10::toString(replayed.scalar_type());
  }
  if (recorded.sizes() != replayed.sizes()) {
    return "recorded shape " + shape_text(recorded) + ", the replayed state's is " +
           shape_text(replayed);
  }
  const at::Tensor a = recorded.cpu().contiguous(), b = replayed.cpu().contiguous();
  if (std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0) return {};
  const at::Tensor differs = at::ne(a, b).logical_or(at::isnan(a).logical_xor(at::isnan(b)));
  std::ostringstream out;
  out << differs.sum().item<int64_t>() << " of " << a.numel()
      << " values differ, max |recorded - replayed| "
      << (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
  return out.str();
}

// The recorded outputs, checked against the shapes of the call they answer.
model::CallOutputs read_outputs(const io::SafetensorsFile& file, const model::CallInputs& in) {
  const std::optional<model::CallOutputs> out = model::read_call_outputs(file);
  if (!out) throw_input(file.path().string(), "holds no outputs ('sample', 'audio_sample')");
  for (auto [name, got, like] : {std::tuple{"sample", out->sample, in.hidden_states},
                                 std::tuple{"audio_sample", out->audio_sample,
                                            in.audio_hidden_states}}) {
    if (got.scalar_type() != at::kFloat) {
      throw InputError(file.path().string() + ": field '" + name + "': dtype " +
                       c10::toString(got.scalar_type()) + ", must be float32");
    }
    if (got.sizes() != like.sizes()) {
      throw InputError(file.path().string() + ": field '" + name + "': shape " +
                       shape_text(got) + " does not match the call's input " + shape_text(like));
    }
  }
  return *out;
}

// The text width of the model the import names, read without materialising a preset.
int64_t text_dim_of(const ImportParams& p) {
  if (p.model.empty() && p.contract.model_is_builtin()) {
    return model::find_preset(p.contract.builtin_model()->preset).config.text_dim;
  }
  const fs::path model = p.model.empty() ? p.contract.model_path() : p.model;
  return model::load_transformer_config(model::resolve_transformer_dir(model) / "config.json")
      .text_dim;
}

// A directory removed with the object unless released.
class ScratchDir {
 public:
  explicit ScratchDir(fs::path path) : path_(std::move(path)) {}
  ~ScratchDir() {
    if (!path_.empty()) io::remove_tree(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

// A fresh hidden directory inside `parent` (which exists), named after `stem`.
fs::path make_scratch(const fs::path& parent, const std::string& stem) {
  std::string pattern = (parent / ("." + stem + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw_input(parent.string(), "cannot create a temporary directory: " +
                                     std::string(std::strerror(errno)));
  }
  return pattern;
}

}  // namespace

std::string import_spec(const std::string& label) {
  const bool ok = !label.empty() && label.front() != '.' &&
                  std::all_of(label.begin(), label.end(), [](char c) {
                    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
                  });
  if (!ok) {
    throw InputError("--label '" + label +
                     "': must be letters, digits, '.', '_' or '-', not starting with '.'");
  }
  return "import:" + label;
}

std::string ImportParams::describe() const {
  std::ostringstream out;
  out << "contract: " << contract.name << "\ncalls: " << calls_dir.string() << "\nseed: " << seed
      << "\nruns: " << runs_root.string() << "\nlabel: " << label
      << "\nmodel: " << (model.empty() ? contract.model : model.string()) << "\ndevice: " << device
      << "\n";
  return out.str();
}

ImportResult import_run(const ImportParams& p) {
  const contract::Contract& c = p.contract;
  // 1. The request: label, seed, destination, the call files, the plan and initial state.
  const std::string spec = import_spec(p.label);
  if (std::find(c.seeds.begin(), c.seeds.end(), p.seed) == c.seeds.end()) {
    throw InputError("--seed " + std::to_string(p.seed) + ": not among the seeds of contract '" +
                     c.name + "'");
  }
  const RunPaths final_paths = RunPaths::locate(p.runs_root, c.name, spec, p.seed);
  if (fs::exists(final_paths.root())) {
    throw_input(final_paths.root().string(), "already exists; remove it to import again");
  }
  const std::vector<fs::path> files = list_call_files(p.calls_dir);
  const sampling::Conditioning conditioning = contract_conditioning(c, text_dim_of(p));
  const sampling::SamplingPlan plan = contract_plan(c, conditioning);
  const sampling::InitialNoise noise = draw_run_noise(plan, p.seed);
  const int num_calls = plan.num_calls();
  if (static_cast<int>(files.size()) < num_calls) {
    throw_input((p.calls_dir / (step_stem(static_cast<int>(files.size())) + ".safetensors")).string(),
                "missing: contract '" + c.name + "' takes " + std::to_string(num_calls) +
                    " calls, the directory holds steps 000-" +
                    step_stem(static_cast<int>(files.size()) - 1));
  }
  if (static_cast<int>(files.size()) > num_calls) {
    throw_input(files[static_cast<std::size_t>(num_calls)].string(),
                "beyond the last call: contract '" + c.name + "' takes " +
                    std::to_string(num_calls) + " calls");
  }

  // 2. Check every call against the replayed state, nothing written yet; keep each file's
  // SHA-256 for the manifest (and to see that the files do not change before they are copied).
  std::vector<std::string> digests;
  {
    sampling::SamplerState state = sampling::initial_state(plan, conditioning, noise);
    for (int i = 0; i < num_calls; ++i) {
      const fs::path& path = files[static_cast<std::size_t>(i)];
      digests.push_back(io::sha256_file(path));
      const io::SafetensorsFile file = io::SafetensorsFile::open(path);
      const model::CallInputs recorded = model::read_call_inputs(file);
      const model::CallInputs replayed = sampling::step_inputs(plan, state, i);
      const auto want = model::named_call_inputs(replayed);
      const auto got = model::named_call_inputs(recorded);
      for (std::size_t k = 0; k < want.size(); ++k) {
        const std::string why = bitwise_difference(got[k].tensor, want[k].tensor);
        if (!why.empty()) {
          throw InputError(path.string() + ": field '" + want[k].name + "': step " +
                           std::to_string(i) + ": the recorded input is not the state the " +
                           "scheduler reaches from the contract's initial state for seed " +
                           std::to_string(p.seed) + " and the recorded velocities (" + why + ")");
        }
      }
      sampling::apply_step(plan, state, read_outputs(file, recorded), i);
      if (p.on_step) p.on_step(i, num_calls);
    }
  }

  // 3. The run, assembled in a scratch directory beside its place: inputs, manifest, steps.
  const fs::path model_dir = p.model.empty() ? materialise_model(c, p.runs_root) : p.model;
  const fs::path transformer_dir = model::resolve_transformer_dir(model_dir);
  const at::Device device = ops::resolve_device(p.device);
  const fs::path contract_dir = final_paths.root().parent_path().parent_path();
  std::error_code error;
  const bool contract_dir_made = fs::create_directories(contract_dir, error);
  if (error) throw_input(contract_dir.string(), "cannot create directory: " + error.message());
  ScratchDir scratch(make_scratch(contract_dir, "import-" + p.label + "-seed-" +
                                                    std::to_string(p.seed)));
  try {
    const RunPaths paths(scratch.path());
    paths.create_directories();
    Manifest manifest;
    manifest.contract_name = c.name;
    manifest.contract_digest = contract::contract_digest(c);
    manifest.impl_spec = spec;
    manifest.seed = p.seed;
    manifest.identity = compute_identity(transformer_dir);
    manifest.environment = environment_info();
    manifest.environment["model"] = p.model.empty()
                                        ? model_record(c, transformer_dir)
                                        : fs::absolute(transformer_dir).lexically_normal().string();
    manifest.params = plan_params(plan, c.sampling_steps, c.video_shift, c.audio_shift,
                                  to_string(SaveInputs::every));
    nlohmann::json listed = nlohmann::json::array();
    for (std::size_t i = 0; i < files.size(); ++i) {
      listed.push_back({{"file", files[i].filename().string()}, {"sha256", digests[i]}});
    }
    manifest.imported = {{"label", p.label},
                         {"source", fs::absolute(p.calls_dir).lexically_normal().string()},
                         {"files", listed}};
    write_run_inputs(paths, noise, conditioning, p.seed, manifest);
    write_manifest(paths.manifest(), manifest);
    write_run_contract(paths, c);

    StepStore store(paths, spec);
    sampling::SamplerState state = sampling::initial_state(plan, conditioning, noise);
    for (int i = 0; i < num_calls; ++i) {
      const fs::path& path = files[static_cast<std::size_t>(i)];
      if (io::sha256_file(path) != digests[static_cast<std::size_t>(i)]) {
        throw_input(path.string(), "changed while it was imported");
      }
      const io::SafetensorsFile file = io::SafetensorsFile::open(path);
      const model::CallInputs inputs = sampling::step_inputs(plan, state, i);
      const model::CallOutputs outputs = read_outputs(file, inputs);
      store.save(i, model::named_call_inputs(inputs), true, model::named_call_outputs(outputs));
      sampling::apply_step(plan, state, outputs, i);
    }

    // 4. Final latents and decoded outputs, as generate ends a run.
    const sampling::FinalLatents latents = sampling::final_latents(plan, state);
    write_final_latents(paths, latents);
    ImportResult result;
    result.num_calls = num_calls;
    result.decoded = decode_run_outputs(paths, model_dir, latents, device, c.fps,
                                        c.audio_sample_rate, true, p.on_decode);

    // 5. Into place.
    const fs::path impl_dir = final_paths.root().parent_path();
    fs::create_directories(impl_dir, error);
    if (error) throw_input(impl_dir.string(), "cannot create directory: " + error.message());
    fs::rename(scratch.path(), final_paths.root(), error);
    if (error) {
      const std::string why = error.message();
      fs::remove(impl_dir, error);  // only when empty
      throw_input(final_paths.root().string(), "cannot move the imported run into place: " + why);
    }
    scratch.release();
    result.run_dir = final_paths.root();
    return result;
  } catch (...) {
    io::remove_tree(scratch.path());
    scratch.release();
    if (contract_dir_made) fs::remove(contract_dir, error);  // only when empty
    throw;
  }
}

}  // namespace h3p::runs
