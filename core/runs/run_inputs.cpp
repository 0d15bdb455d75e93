#include "core/runs/run_inputs.h"

#include <ATen/ATen.h>

#include "core/common/error.h"
#include "core/io/sha256.h"

namespace h3p::runs {

std::vector<io::NamedTensor> noise_tensors(const sampling::InitialNoise& noise) {
  std::vector<io::NamedTensor> out;
  for (std::size_t i = 0; i < noise.keyframes.size(); ++i) {
    out.push_back({"keyframe_noise_" + std::to_string(i), noise.keyframes[i]});
  }
  out.push_back({"video_noise", noise.video});
  out.push_back({"audio_noise_rows", noise.audio_rows});
  return out;
}

sampling::InitialNoise read_noise(const std::filesystem::path& file, std::size_t keyframes) {
  const io::SafetensorsFile f = io::SafetensorsFile::open(file);
  sampling::InitialNoise noise;
  for (std::size_t i = 0; i < keyframes; ++i) {
    noise.keyframes.push_back(io::load_tensor(f, "keyframe_noise_" + std::to_string(i)));
  }
  noise.video = io::load_tensor(f, "video_noise");
  noise.audio_rows = io::load_tensor(f, "audio_noise_rows");
  return noise;
}

std::vector<io::NamedTensor> conditioning_tensors(const sampling::Conditioning& c) {
  std::vector<io::NamedTensor> out = {{"encoder_hidden_states", c.encoder_hidden_states},
                                      {"text_token_tags", c.text_token_tags}};
  if (!c.keyframe_latents.empty()) {
    out.push_back({"keyframe_latents", at::cat(c.keyframe_latents, 2)});
  }
  return out;
}

sampling::Conditioning read_conditioning(const std::filesystem::path& file) {
  const io::SafetensorsFile f = io::SafetensorsFile::open(file);
  const io::TensorInfo& states = f.at("encoder_hidden_states");
  if (states.shape.size() != 3) {
    throw_input(file.string(), "tensor 'encoder_hidden_states' must be (1, L, text_dim)");
  }
  return sampling::load_conditioning(file, states.shape[2]);
}

void check_digest(const std::filesystem::path& file, const std::string& expected,
                  const std::filesystem::path& manifest) {
  const std::string actual = io::sha256_file(file);
  if (actual != expected) {
    throw InputError(file.string() + ": SHA-256 " + actual + " differs from " + expected +
                     " recorded in " + manifest.string() + " (file changed or corrupt)");
  }
}

nlohmann::json plan_params(const sampling::SamplingPlan& plan, int sampling_steps,
                           double video_shift, double audio_shift,
                           const std::string& save_inputs) {
  const sampling::Geometry& g = plan.geometry;
  return {{"frames", g.frames},
          {"height", g.height},
          {"width", g.width},
          {"fps", g.fps},
          {"num_latent_frames", g.num_latent_frames},
          {"latent_height", g.latent_height},
          {"latent_width", g.latent_width},
          {"num_audio_latents", g.num_audio_latents},
          {"sequence_length", plan.layout.sequence_length},
          {"sampling_steps", sampling_steps},
          {"num_calls", plan.num_calls()},
          {"video_shift", video_shift},
          {"audio_shift", audio_shift},
          {"save_inputs", save_inputs}};
}

sampling::SamplingPlan plan_from_params(const nlohmann::json& params,
                                        const sampling::Conditioning& conditioning,
                                        const std::filesystem::path& manifest) {
  auto field = [&](const char* key) -> const nlohmann::json& {
    auto it = params.find(key);
    if (it == params.end()) {
      throw_input(manifest.string(), std::string("field 'params.") + key + "': missing");
    }
    return *it;
  };
  try {
    const sampling::Geometry geometry = sampling::resolve_geometry(
        field("frames").get<int>(), field("height").get<int>(), field("width").get<int>(),
        field("fps").get<int>());
    return sampling::make_plan(geometry, conditioning, field("sampling_steps").get<int>(),
                               field("video_shift").get<double>(),
                               field("audio_shift").get<double>());
  } catch (const nlohmann::json::exception& e) {
    throw_input(manifest.string(), std::string("field 'params': ") + e.what());
  }
}

}  // namespace h3p::runs
