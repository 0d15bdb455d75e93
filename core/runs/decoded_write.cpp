#include "core/runs/decoded_write.h"

#include <ATen/ATen.h>

#include <cstring>

#include "core/common/error.h"
#include "core/io/aten_bridge.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {

void check_video(const at::Tensor& video) {
  if (!video.defined() || video.dim() != 5 || video.size(0) != 1 || video.size(1) != 3 ||
      video.size(2) < 1 || video.size(3) < 1 || video.size(4) < 1) {
    throw InputError("decoded video: expected shape (1, 3, F, H, W), got " +
                     (video.defined() ? c10::str(video.sizes()) : std::string("none")));
  }
  if (!at::isFloatingType(video.scalar_type())) {
    throw InputError("decoded video: expected a floating-point tensor");
  }
}

void check_audio(const at::Tensor& audio) {
  if (!audio.defined()) return;
  if (audio.dim() != 3 || audio.size(0) != 1 || audio.size(1) < 1 || audio.size(2) < 1 ||
      !at::isFloatingType(audio.scalar_type())) {
    throw InputError("decoded audio: expected a float tensor of shape (1, C, S), got " +
                     c10::str(audio.sizes()));
  }
}

}  // namespace

std::vector<std::uint8_t> quantise_frames(const at::Tensor& video) {
  check_video(video);
  // (1, 3, F, H, W) -> (F, H, W, 3), clamp, round half up.
  const at::Tensor q = video.to(at::kCPU, at::kFloat)
                           .squeeze(0)
                           .permute({1, 2, 3, 0})
                           .clamp(0.0, 1.0)
                           .mul(255.0)
                           .add(0.5)
                           .floor()
                           .to(at::kByte)
                           .contiguous();
  std::vector<std::uint8_t> bytes(q.numel());
  std::memcpy(bytes.data(), q.data_ptr(), bytes.size());
  return bytes;
}

void write_decoded(const RunPaths& paths, const at::Tensor& video, const at::Tensor& audio,
                   int fps, int sample_rate, FramePrecision precision) {
  check_video(video);
  check_audio(audio);
  if (fps <= 0) throw InputError("decoded video: fps must be positive");
  if (audio.defined() && sample_rate <= 0) {
    throw InputError("decoded audio: sample rate must be positive");
  }
  const fs::path dir = decoded_dir(paths);
  create_decoded_dir(dir);
  // A rewrite first invalidates the set: frames.json goes, and comes back last.
  std::error_code ignored;
  fs::remove(dir / "frames.json", ignored);

  const at::Tensor stored =
      video.to(at::kCPU, precision == FramePrecision::f16 ? at::kHalf : at::kFloat).contiguous();
  std::vector<at::Tensor> holder;
  io::write_safetensors(dir / "video.safetensors",
                        io::make_records({{"video", stored}}, holder),
                        {{"fps", std::to_string(fps)}, {"range", "[0,1]"}});
  if (audio.defined()) {
    const at::Tensor a = audio.to(at::kCPU, at::kFloat).contiguous();
    write_decoded_audio(dir, a.data_ptr<float>(), static_cast<int>(a.size(1)), a.size(2),
                        sample_rate);
  } else {
    fs::remove(dir / "audio.safetensors", ignored);
  }
  FramesHeader header;
  header.frames = static_cast<int>(video.size(2));
  header.height = static_cast<int>(video.size(3));
  header.width = static_cast<int>(video.size(4));
  header.fps = fps;
  header.source = "run";
  // Quantise from what was stored, so frames.rgb and video.safetensors agree exactly.
  const std::vector<std::uint8_t> bytes = quantise_frames(stored);
  write_raw_frames(dir, header, bytes.data());
}

}  // namespace h3p::runs
