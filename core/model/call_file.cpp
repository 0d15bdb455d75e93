#include "core/model/call_file.h"

#include <ATen/ATen.h>

#include "core/common/error.h"

namespace h3p::model {
namespace {

at::Tensor cpu(const at::Tensor& t) { return t.to(at::kCPU).contiguous(); }

}  // namespace

std::vector<io::NamedTensor> named_call_inputs(const CallInputs& in) {
  const at::Tensor* fields[] = {&in.hidden_states,  &in.audio_hidden_states,
                                &in.encoder_hidden_states, &in.timestep,
                                &in.timestep_indices, &in.token_tags,
                                &in.position_ids,   &in.video_indices,
                                &in.audio_indices,  &in.text_indices};
  std::vector<io::NamedTensor> out;
  const auto& names = call_input_names();
  for (std::size_t i = 0; i < names.size(); ++i) out.push_back({names[i], cpu(*fields[i])});
  return out;
}

std::vector<io::NamedTensor> named_call_outputs(const CallOutputs& out) {
  return {{"sample", cpu(out.sample)}, {"audio_sample", cpu(out.audio_sample)}};
}

CallInputs read_call_inputs(const io::SafetensorsFile& file) {
  for (const std::string& name : call_input_names()) {
    if (file.find(name) == nullptr) {
      throw_input(file.path().string(), "missing call input '" + name + "'");
    }
  }
  auto load = [&](const char* name) { return io::load_tensor(file, name); };
  CallInputs in;
  in.hidden_states = load("hidden_states");
  in.audio_hidden_states = load("audio_hidden_states");
  in.encoder_hidden_states = load("encoder_hidden_states");
  in.timestep = load("timestep");
  in.timestep_indices = load("timestep_indices");
  in.token_tags = load("token_tags");
  in.position_ids = load("position_ids");
  in.video_indices = load("video_indices");
  in.audio_indices = load("audio_indices");
  in.text_indices = load("text_indices");
  return in;
}

std::optional<CallOutputs> read_call_outputs(const io::SafetensorsFile& file) {
  const bool has_video = file.find("sample") != nullptr;
  const bool has_audio = file.find("audio_sample") != nullptr;
  if (!has_video && !has_audio) return std::nullopt;
  if (!has_video || !has_audio) {
    throw_input(file.path().string(), "holds only one of 'sample' and 'audio_sample'");
  }
  return CallOutputs{io::load_tensor(file, "sample"), io::load_tensor(file, "audio_sample")};
}

std::string write_call_file(const std::filesystem::path& path, const CallInputs* inputs,
                            const CallOutputs& outputs,
                            const std::map<std::string, std::string>& metadata) {
  std::vector<io::NamedTensor> named;
  if (inputs != nullptr) named = named_call_inputs(*inputs);
  for (auto& t : named_call_outputs(outputs)) named.push_back(std::move(t));
  std::vector<at::Tensor> holder;
  return io::write_safetensors(path, io::make_records(named, holder), metadata);
}

}  // namespace h3p::model
