#include "core/model/decode_file.h"

#include "core/model/decode_estimate.h"

#include <ATen/ATen.h>

#include <chrono>
#include <sstream>
#include <vector>

#include "core/common/error.h"
#include "core/io/aten_bridge.h"
#include "core/io/safetensors.h"
#include "core/ops/device.h"
#include "core/ops/provider_ops.h"

namespace h3p::model {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

at::Tensor optional_tensor(const io::SafetensorsFile& file, const char* name) {
  return file.find(name) != nullptr ? io::load_tensor(file, name) : at::Tensor();
}

void synchronize(const at::Tensor& t) {
  if (t.defined() && t.is_cuda()) (void)t.sum().item<double>();  // waits for the stream
}

}  // namespace

std::string DecodeFileParams::describe() const {
  std::ostringstream text;
  text << "model: " << model.string() << "\nlatents: " << latents.string()
       << "\nout: " << out.string() << "\ndevice: " << device << "\n"
       << options.describe();
  return text.str();
}

DecodeFileResult decode_file(const DecodeFileParams& p) {
  const at::Device device = ops::resolve_device(p.device);
  const io::SafetensorsFile file = io::SafetensorsFile::open(p.latents);
  const at::Tensor latents = optional_tensor(file, "latents");
  const at::Tensor audio_latents = optional_tensor(file, "audio_latents");
  if (!latents.defined() && !audio_latents.defined()) {
    throw_input(p.latents.string(), "holds neither 'latents' nor 'audio_latents'");
  }
  if (p.before_decode) {
    p.before_decode(describe_decode(
        p.model, latents.defined() ? latents.sizes().vec() : std::vector<int64_t>{},
        audio_latents.defined() ? audio_latents.sizes().vec() : std::vector<int64_t>{}, device));
  }
  const Decoders decoders =
      load_decoders(p.model, device, latents.defined(), audio_latents.defined());

  DecodeFileResult r;
  r.saved_video = optional_tensor(file, "video");
  r.saved_audio = optional_tensor(file, "audio");
  std::vector<io::NamedTensor> named;
  std::map<std::string, std::string> meta{{"generator", "h3parity decode"},
                                          {"device", ops::describe_device(device)},
                                          {"torch", ops::torch_version_string()}};
  if (latents.defined()) {
    auto start = std::chrono::steady_clock::now();
    try {
      r.video = decode_video(*decoders.video, latents, p.options);
    } catch (const InputError& e) {
      throw_input(p.latents.string(), e.what());
    }
    synchronize(r.video);
    r.video_seconds = seconds_since(start);
    named.push_back({"video", r.video.to(at::kCPU).contiguous()});
    meta.emplace("video_tiling", p.options.tiling.describe());
    meta.emplace("video_autocast",
                 device.is_cuda() && p.options.video_autocast != DecodeOptions::Autocast::off
                     ? "float16"
                     : "off");
  }
  if (audio_latents.defined()) {
    auto start = std::chrono::steady_clock::now();
    try {
      r.audio = decode_audio(*decoders.audio, audio_latents);
    } catch (const InputError& e) {
      throw_input(p.latents.string(), e.what());
    }
    synchronize(r.audio);
    r.audio_seconds = seconds_since(start);
    r.sample_rate = decoders.audio->config().sampling_rate;
    named.push_back({"audio", r.audio.to(at::kCPU).contiguous()});
    meta.emplace("sample_rate", std::to_string(r.sample_rate));
  }
  std::vector<at::Tensor> holder;
  r.sha256 = io::write_safetensors(p.out, io::make_records(named, holder), meta);
  return r;
}

}  // namespace h3p::model
