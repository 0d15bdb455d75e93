#include "app/cli/video_module.h"

#include <dlfcn.h>

#include <filesystem>
#include <string>

#include "core/common/error.h"

namespace h3p::cli {

compare::VideoDecoder video_decoder_from_module() {
  using Start = runs::DecodingClip* (*)(const char*, int, int, std::string*);
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  // Kept loaded for the life of the process: the clips it makes run its code.
  void* module = ::dlopen((self.parent_path() / "h3parity-video.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) return {};
  auto start = reinterpret_cast<Start>(::dlsym(module, "h3p_start_video_decode_v2"));
  if (start == nullptr) return {};
  return [start](const std::filesystem::path& video, int sample_rate, bool keep_frames) {
    std::string why;
    runs::DecodingClip* clip = start(video.c_str(), sample_rate, keep_frames ? 1 : 0, &why);
    if (clip == nullptr) throw InputError(why);
    return std::unique_ptr<runs::DecodingClip>(clip);
  };
}

}  // namespace h3p::cli
