#include "core/runs/step_store.h"

#include "core/runs/manifest.h"
#include "core/runs/numerics_segments.h"

#include <initializer_list>
#include <algorithm>
#include <set>
#include <system_error>

#include "core/common/error.h"
#include "core/contract/json_text.h"
#include "core/io/atomic_file.h"
#include "core/io/safetensors.h"
#include "core/io/sha256.h"
#include "core/model/transformer.h"
#include "core/runs/identity.h"

namespace h3p::runs {

namespace {

using nlohmann::json;

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool path_exists(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::exists(path, error);
}

[[noreturn]] void fail_field(const std::filesystem::path& file, const std::string& field,
                             const std::string& what) {
  throw InputError(file.string() + ": field '" + field + "': " + what);
}

// The segment whose stretch holds `step`: the last whose first step is <= step.
int segment_at(const std::vector<int>& starts, int step) {
  int segment = 0;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    if (starts[k] <= step) segment = static_cast<int>(k);
  }
  return segment;
}

}  // namespace


std::string input_digest(const std::vector<io::NamedTensor>& inputs) {
  std::vector<at::Tensor> holder;
  const auto records = io::make_records(inputs, holder);
  return io::sha256_hex(std::span<const std::byte>(io::encode_safetensors(records)));
}

StepStore::StepStore(RunPaths paths, std::string impl_spec)
    : paths_(std::move(paths)), impl_spec_(std::move(impl_spec)) {
  if (path_exists(paths_.segments())) {
    segment_starts_ = segment_starts(read_segments(paths_, read_manifest(paths_.manifest())));
  }
}

int StepStore::count_complete() const {
  int step = 0;
  while (path_exists(paths_.step_sidecar(step))) ++step;
  return step;
}

void StepStore::save(int step, const std::vector<io::NamedTensor>& inputs, bool save_inputs,
                     const std::vector<io::NamedTensor>& outputs) {
  const auto call_file = paths_.step_file(step);
  const auto sidecar = paths_.step_sidecar(step);
  // Step 1: the step must extend the saved chain by exactly one.
  if (path_exists(sidecar))
    throw_input(sidecar.string(), "step " + std::to_string(step) + " is already saved");
  const int complete = count_complete();
  if (step != complete) {
    throw_input(call_file.string(), "cannot save step " + std::to_string(step) + ": steps 0.." +
                                        std::to_string(complete - 1) + " are saved, the next is " +
                                        std::to_string(complete));
  }
  // Step 2: names.
  std::set<std::string> seen;
  for (const auto& input : inputs) {
    if (!contains(model::call_input_names(), input.name)) {
      throw_input(call_file.string(), "'" + input.name + "' is not a transformer input name");
    }
    if (!seen.insert(input.name).second) {
      throw_input(call_file.string(), "input '" + input.name + "' given twice");
    }
  }
  std::vector<io::NamedTensor> ordered_outputs;
  for (const auto& name : model::call_output_names()) {
    auto it = std::find_if(outputs.begin(), outputs.end(),
                           [&](const io::NamedTensor& t) { return t.name == name; });
    if (it == outputs.end()) throw_input(call_file.string(), "output '" + name + "' missing");
    ordered_outputs.push_back(*it);
  }
  if (outputs.size() != ordered_outputs.size()) {
    throw_input(call_file.string(), "outputs must be exactly 'sample' and 'audio_sample'");
  }
  // Step 3: digests of what precedes this step and of the inputs.
  const auto previous = step == 0 ? paths_.manifest() : paths_.step_sidecar(step - 1);
  if (!path_exists(previous)) {
    throw_input(previous.string(), "missing: step " + std::to_string(step) + " chains to it");
  }
  StepRecord record;
  record.step = step;
  record.previous_digest = io::sha256_file(previous);
  record.input_digest = input_digest(inputs);
  record.inputs_saved = save_inputs;
  // The segment load will require (the last one, where steps are computed in order).
  record.segment = segment_at(segment_starts_, step);

  // Step 4: the call file, then the sidecar.
  std::error_code error;
  std::filesystem::create_directories(paths_.steps_dir(), error);
  if (error)
    throw_input(paths_.steps_dir().string(), "cannot create directory: " + error.message());
  std::vector<io::NamedTensor> all;
  if (save_inputs) all = inputs;
  all.insert(all.end(), ordered_outputs.begin(), ordered_outputs.end());
  std::map<std::string, std::string> metadata = {{"format", "h3parity-call"},
                                                 {"step", std::to_string(step)}};
  if (!impl_spec_.empty()) metadata["impl_spec"] = impl_spec_;
  {
    std::vector<at::Tensor> holder;
    const auto records = io::make_records(all, holder);
    record.file_digest = io::write_safetensors(call_file, records, metadata);
  }
  const json sidecar_json = {
      {"format_version", kSidecarFormatVersion}, {"step", record.step},
      {"file", call_file.filename().string()},   {"file_digest", record.file_digest},
      {"input_digest", record.input_digest},     {"previous_digest", record.previous_digest},
      {"inputs_saved", record.inputs_saved},     {"segment", record.segment}};
  io::atomic_write_text(sidecar, sidecar_json.dump(2) + "\n");
}

void StepStore::set_segments(std::vector<int> first_steps) {
  if (first_steps.empty() || first_steps.front() != 0) {
    throw InputError(paths_.segments().string() + ": the first numerics segment must start at step 0");
  }
  if (!std::is_sorted(first_steps.begin(), first_steps.end())) {
    throw InputError(paths_.segments().string() +
                     ": numerics segments must not start before the previous one");
  }
  segment_starts_ = std::move(first_steps);
}

LoadedStep StepStore::load(int step, const std::string& expected_input_digest) const {
  return load_checked(step, &expected_input_digest);
}

LoadedStep StepStore::load_saved(int step) const { return load_checked(step, nullptr); }

LoadedStep StepStore::load_checked(int step, const std::string* expected_input_digest) const {
  const auto call_file = paths_.step_file(step);
  const auto sidecar = paths_.step_sidecar(step);
  // Step 1: the sidecar itself.
  if (!path_exists(sidecar))
    throw_input(sidecar.string(), "missing: step " + std::to_string(step) + " is not saved");
  LoadedStep loaded;
  loaded.record = parse_sidecar(io::read_file(sidecar), sidecar.string(),
                                {step, call_file.filename().string()});
  const StepRecord& record = loaded.record;
  const int segment = segment_at(segment_starts_, step);
  if (record.segment != segment) {
    fail_field(sidecar, "segment",
               "is " + std::to_string(record.segment) + ", but the run's numerics segments (" +
                   (path_exists(paths_.segments()) ? paths_.segments().string()
                                                   : std::string("none recorded: segment 0")) +
                   ") put step " + std::to_string(step) + " in segment " + std::to_string(segment));
  }

  // Step 2: the chain back to the previous sidecar, or the manifest for step 0.
  const auto previous = step == 0 ? paths_.manifest() : paths_.step_sidecar(step - 1);
  if (!path_exists(previous)) {
    fail_field(sidecar, "previous_digest", "chain broken: " + previous.string() + " is missing");
  }
  if (io::sha256_file(previous) != record.previous_digest) {
    fail_field(
        sidecar, "previous_digest",
        "chain broken: does not match " + previous.string() + " (replaced, reordered or edited)");
  }

  // Step 3: the replayed inputs must be the saved ones.
  if (expected_input_digest != nullptr && *expected_input_digest != record.input_digest) {
    fail_field(sidecar, "input_digest",
               "the inputs replayed for step " + std::to_string(step) +
                   " differ from the saved ones (saved " + record.input_digest + ", replayed " +
                   *expected_input_digest + ")");
  }

  // Step 4: the call file, byte for byte, then its structure.
  if (!path_exists(call_file)) throw_input(call_file.string(), "missing, but its sidecar exists");
  const std::string file_digest = io::sha256_file(call_file);
  if (file_digest != record.file_digest) {
    throw_input(call_file.string(), "SHA-256 " + file_digest + " differs from file_digest " +
                                        record.file_digest + " in " + sidecar.string() +
                                        " (call file or sidecar corrupt or truncated)");
  }
  const auto file = io::SafetensorsFile::open(call_file);
  auto meta = file.metadata().find("step");
  if (meta == file.metadata().end() || meta->second != std::to_string(step)) {
    throw_input(call_file.string(), "metadata 'step' is not " + std::to_string(step));
  }
  std::vector<io::NamedTensor> inputs;
  for (const auto& info : file.tensors()) {
    if (contains(model::call_output_names(), info.name)) continue;
    if (!record.inputs_saved || !contains(model::call_input_names(), info.name)) {
      throw_input(call_file.string(), "unexpected tensor '" + info.name + "'");
    }
    inputs.push_back({info.name, io::load_tensor(file, info)});
  }
  loaded.sample = io::load_tensor(file, "sample");
  loaded.audio_sample = io::load_tensor(file, "audio_sample");
  if (record.inputs_saved) {
    if (input_digest(inputs) != record.input_digest) {
      throw_input(call_file.string(), "saved inputs do not match input_digest in " +
                                          sidecar.string() + " (call file or sidecar corrupt)");
    }
    loaded.inputs = std::move(inputs);
  }
  return loaded;
}

}  // namespace h3p::runs
