#pragma once
// Transformer call files: one forward's inputs under diffusers' argument names and its outputs
// as `sample` / `audio_sample` (fp32), in safetensors. Interchangeable with files written by a
// Python script around diffusers.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/io/aten_bridge.h"
#include "core/model/transformer.h"

namespace h3p::model {

// The inputs as named tensors in call_input_names() order (CPU, contiguous).
std::vector<io::NamedTensor> named_call_inputs(const CallInputs& inputs);
// The outputs as named tensors: sample, audio_sample.
std::vector<io::NamedTensor> named_call_outputs(const CallOutputs& outputs);

// Reads the inputs of a call file; throws InputError naming the file and the missing tensor.
CallInputs read_call_inputs(const io::SafetensorsFile& file);
// Reads the outputs when present (nullopt when the file holds inputs only).
std::optional<CallOutputs> read_call_outputs(const io::SafetensorsFile& file);

// Writes inputs (when given) and outputs atomically; returns the file's SHA-256.
std::string write_call_file(const std::filesystem::path& path, const CallInputs* inputs,
                            const CallOutputs& outputs,
                            const std::map<std::string, std::string>& metadata);

}  // namespace h3p::model
