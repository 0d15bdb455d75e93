#include "core/runs/decoded.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/io/atomic_file.h"

namespace h3p::runs {
namespace fs = std::filesystem;
namespace {


int json_int(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number_integer() || j[key].get<std::int64_t>() <= 0 ||
      j[key].get<std::int64_t>() > (1 << 20)) {
    throw InputError(where + ": field '" + key + "': must be a positive integer");
  }
  return j[key].get<int>();
}

}  // namespace

// frames.rgb mapped read-only for the clip's lifetime.
struct DecodedClip::Mapping {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  explicit Mapping(const fs::path& file) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(file.string() + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw InputError(file.string() + ": not a regular file");
    }
    size = static_cast<std::size_t>(st.st_size);
    if (size > 0) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        throw InputError(file.string() + ": cannot map: " + std::strerror(errno));
      }
      data = static_cast<const std::uint8_t*>(p);
    }
    ::close(fd);
  }
  ~Mapping() {
    if (data != nullptr) ::munmap(const_cast<std::uint8_t*>(data), size);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
};

fs::path decoded_dir(const RunPaths& paths) { return paths.root() / "decoded"; }

void create_decoded_dir(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw_input(dir.string(), "cannot create directory: " + error.message());
}

void write_raw_frames(const fs::path& dir, const FramesHeader& header, const std::uint8_t* rgb) {
  if (header.width <= 0 || header.height <= 0 || header.frames <= 0 || !(header.fps > 0)) {
    throw InputError(dir.string() + ": frames header: width, height, frames and fps must be "
                     "positive");
  }
  create_decoded_dir(dir);
  const std::size_t total = header.frame_bytes() * header.frames;
  io::atomic_write(dir / "frames.rgb", [&](io::FileSink& sink) {
    const auto* bytes = reinterpret_cast<const std::byte*>(rgb);
    constexpr std::size_t kBlock = 8u << 20;
    for (std::size_t at = 0; at < total; at += kBlock) {
      sink.write(std::span<const std::byte>(bytes + at, std::min(kBlock, total - at)));
    }
  });
  nlohmann::json j = {{"format", "rgb24"},       {"width", header.width},
                      {"height", header.height}, {"frames", header.frames},
                      {"fps", header.fps},       {"frame_bytes", header.frame_bytes()},
                      {"source", header.source}};
  io::atomic_write_text(dir / "frames.json", j.dump(2) + "\n");
}

void write_decoded_audio(const fs::path& dir, const float* audio, int channels,
                         std::int64_t samples, int sample_rate) {
  if (channels <= 0 || samples <= 0 || sample_rate <= 0) {
    throw InputError(dir.string() + ": decoded audio: channels, samples and sample rate must be "
                     "positive");
  }
  create_decoded_dir(dir);
  io::TensorRecord record{"audio", io::DType::F32, {1, channels, samples},
                          std::span<const std::byte>(reinterpret_cast<const std::byte*>(audio),
                                                     sizeof(float) * channels * samples)};
  io::write_safetensors(dir / "audio.safetensors", {record},
                        {{"sample_rate", std::to_string(sample_rate)}});
}

void DecodedClip::drop_pages(const void* data, std::size_t bytes) const {
  static const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t last = (begin + bytes) / page * page;
  // Advice only: a failure leaves the pages mapped, which costs time, not correctness.
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

FramesHeader read_frames_header(const fs::path& dir) {
  const fs::path file = dir / "frames.json";
  if (!fs::exists(file)) {
    throw InputError(file.string() + ": missing (no decoded frames; decode the run first)");
  }
  const std::string where = file.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(io::read_file(file));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(where + ": not a JSON object");
  if (!j.contains("format") || j["format"] != "rgb24") {
    throw InputError(where + ": field 'format': must be \"rgb24\"");
  }
  FramesHeader h;
  h.width = json_int(j, "width", where);
  h.height = json_int(j, "height", where);
  h.frames = json_int(j, "frames", where);
  if (!j.contains("fps") || !j["fps"].is_number() || !(j["fps"].get<double>() > 0)) {
    throw InputError(where + ": field 'fps': must be a positive number");
  }
  h.fps = j["fps"].get<double>();
  if (j.contains("source") && j["source"].is_string()) h.source = j["source"].get<std::string>();
  return h;
}

DecodedClip DecodedClip::open(const fs::path& dir) {
  const FramesHeader header = read_frames_header(dir);
  const fs::path frames_file = dir / "frames.rgb";
  DecodedClip clip(dir);
  clip.frames_ = std::make_shared<const Mapping>(frames_file);
  clip.header_ = header;
  const std::size_t want = header.frame_bytes() * header.frames;
  if (clip.frames_->size != want) {
    throw InputError(frames_file.string() + ": " + std::to_string(clip.frames_->size) +
                     " bytes, frames.json describes " + std::to_string(want));
  }
  const fs::path video_file = dir / "video.safetensors";
  if (fs::exists(video_file)) {
    clip.video_ = io::SafetensorsFile::open(video_file);
    const io::TensorInfo& info = clip.video_->at("video");
    const std::vector<std::int64_t> shape = {1, 3, header.frames, header.height, header.width};
    if (info.shape != shape) {
      throw InputError(video_file.string() + ": tensor 'video': shape disagrees with frames.json");
    }
    if (info.dtype != io::DType::F16 && info.dtype != io::DType::F32) {
      throw InputError(video_file.string() + ": tensor 'video': must be F16 or F32");
    }
    clip.planes_half_ = info.dtype == io::DType::F16;
    clip.planes_ = clip.video_->bytes(info).data();
    if (reinterpret_cast<std::uintptr_t>(clip.planes_) % (clip.planes_half_ ? 2 : 4) != 0) {
      throw InputError(video_file.string() + ": tensor 'video': data is not aligned");
    }
  }
  const fs::path audio_file = dir / "audio.safetensors";
  if (fs::exists(audio_file)) {
    const io::SafetensorsFile f = io::SafetensorsFile::open(audio_file);
    const io::TensorInfo& info = f.at("audio");
    if (info.dtype != io::DType::F32 || info.shape.size() != 3 || info.shape[0] != 1) {
      throw InputError(audio_file.string() + ": tensor 'audio': must be F32 of shape (1, C, S)");
    }
    const auto it = f.metadata().find("sample_rate");
    int rate = 0;
    if (it != f.metadata().end()) rate = std::atoi(it->second.c_str());
    if (rate <= 0) throw InputError(audio_file.string() + ": metadata 'sample_rate': missing or invalid");
    clip.audio_channels_ = static_cast<int>(info.shape[1]);
    clip.audio_samples_ = info.shape[2];
    clip.sample_rate_ = rate;
    clip.audio_.resize(info.numel());
    std::memcpy(clip.audio_.data(), f.bytes(info).data(), info.nbytes());
  }
  return clip;
}

const std::uint8_t* DecodedClip::rgb() const {
  return frames_->data;
}

const std::uint8_t* DecodedClip::frame(int index) const {
  if (index < 0 || index >= header_.frames) {
    throw InputError(dir_.string() + ": frame " + std::to_string(index) + " out of range");
  }
  return rgb() + header_.frame_bytes() * index;
}

}  // namespace h3p::runs
