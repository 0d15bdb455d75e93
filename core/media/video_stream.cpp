#include "core/media/video_stream.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "core/media/video_reader.h"

namespace h3p::media {
namespace fs = std::filesystem;
namespace {

// Anonymous private memory, committed page by page as it is first written.
class PageBuffer {
 public:
  explicit PageBuffer(std::size_t bytes) : bytes_(bytes) {
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw InputError("cannot reserve " + std::to_string(bytes_) + " bytes");
    data_ = static_cast<std::uint8_t*>(p);
    ::madvise(p, bytes_, MADV_HUGEPAGE);  // fewer page faults; a hint, refused harmlessly
  }
  ~PageBuffer() { ::munmap(data_, bytes_); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;
  std::uint8_t* data() const { return data_; }

 private:
  std::size_t bytes_;
  std::uint8_t* data_ = nullptr;
};

class FileDecode final : public runs::DecodingClip {
 public:
  FileDecode(const fs::path& video, int sample_rate, int threads, bool keep_frames)
      : reader_(video, threads), rgb_of_(reader_.where()) {
    const int frames = reader_.count_video_packets();
    if (frames == 0) throw InputError(reader_.where() + ": no video frames");
    header_.width = reader_.width();
    header_.height = reader_.height();
    header_.frames = frames;
    header_.fps = reader_.fps();
    header_.source = fs::absolute(video).string();
    if (header_.width <= 0 || header_.height <= 0) {
      throw InputError(reader_.where() + ": the video stream has no frame size");
    }
    rgb_of_.expect(header_.width, header_.height);
    released_.assign(static_cast<std::size_t>(frames), false);
    slots_ = keep_frames ? frames : std::min(frames, runs::kDecodeSlots);
    buffer_.emplace(header_.frame_bytes() * static_cast<std::size_t>(slots_));
    if (reader_.pixel_format() == AV_PIX_FMT_YUV420P) {
      yuv_buffer_.emplace(runs::yuv420_frame_bytes(header_) * static_cast<std::size_t>(slots_));
    }
    if (reader_.has_audio()) audio_sink_.emplace(reader_.audio_decoder(), sample_rate, reader_.where());
    thread_ = std::thread([this] { run(); });
  }

  ~FileDecode() override {
    {
      std::lock_guard lock(mutex_);
      stop_.store(true);
    }
    released_changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  const runs::FramesHeader& header() const override { return header_; }
  int frame_slots() const override { return slots_; }
  const std::uint8_t* rgb() const override { return buffer_->data(); }
  const std::uint8_t* yuv420() const override { return yuv_buffer_ ? yuv_buffer_->data() : nullptr; }

  void wait_for(int frame) const override {
    std::unique_lock lock(mutex_);
    if (frame > wanted_) {  // the decode's look-ahead moves on with the reader
      wanted_ = frame;
      released_changed_.notify_all();
    }
    ready_changed_.wait(lock, [&] { return decoded_ > frame || ended_; });
    if (decoded_ > frame) return;
    if (error_) std::rethrow_exception(error_);
    throw InputError(reader_.where() + ": frame " + std::to_string(frame) +
                     " is missing: the decoder gave " + std::to_string(decoded_) + " of the " +
                     std::to_string(header_.frames) + " frames the file's video packets announce");
  }

  int decoded_frames() const override {
    std::lock_guard lock(mutex_);
    return decoded_;
  }

  void release(int frame) const override {
    if (frame < 0 || frame >= header_.frames) return;
    {
      std::lock_guard lock(mutex_);
      released_[static_cast<std::size_t>(frame)] = true;
      while (unreleased_ < header_.frames && released_[unreleased_]) ++unreleased_;
    }
    released_changed_.notify_all();
  }

  const runs::ClipAudio& finish() override {
    {
      std::lock_guard lock(mutex_);
      wanted_ = std::numeric_limits<int>::max() - runs::kDecodeLookAhead;
    }
    released_changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(error_);
    if (total_ != header_.frames) {
      throw InputError(reader_.where() + ": the decoder gave " + std::to_string(total_) +
                       " frames, the file's video packets announce " +
                       std::to_string(header_.frames));
    }
    return audio_;
  }

 private:
  void run() {
    std::exception_ptr error;
    try {
      const std::size_t frame_bytes = header_.frame_bytes();
      int count = 0;
      const bool complete = reader_.decode(
          [&](const AVFrame* f) {
            if (count >= header_.frames) {
              ++count;  // more frames than packets: counted, reported by finish()
              return;
            }
            wait_for_room(count);
            const auto slot = static_cast<std::size_t>(count % slots_);
            rgb_of_.convert(f, buffer_->data() + frame_bytes * slot);
            if (yuv_buffer_) copy_yuv420(f, count, slot);
            ++count;
            {
              std::lock_guard lock(mutex_);
              decoded_ = count;
            }
            ready_changed_.notify_all();
          },
          [&](const AVFrame* f) { audio_sink_->take(f); }, &stop_);
      if (complete && audio_sink_) {
        audio_sink_->flush();
        const std::size_t n = audio_sink_->channels[0].size();
        audio_.channels = n > 0 ? 2 : 0;
        audio_.samples = static_cast<std::int64_t>(n);
        audio_.sample_rate = audio_sink_->rate();
        audio_.planar.resize(2 * n);
        std::copy(audio_sink_->channels[0].begin(), audio_sink_->channels[0].end(),
                  audio_.planar.begin());
        std::copy(audio_sink_->channels[1].begin(), audio_sink_->channels[1].end(),
                  audio_.planar.begin() + static_cast<std::ptrdiff_t>(n));
        audio_sink_.reset();
      }
      std::lock_guard lock(mutex_);
      total_ = count;
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      if (error) error_ = error;
      ended_ = true;
    }
    ready_changed_.notify_all();
  }

  // Before frame `index` is written: the decode stays within runs::kDecodeLookAhead frames of
  // the reader (decoding_clip.h), and the frame that held its slot has been released.
  void wait_for_room(int index) {
    std::unique_lock lock(mutex_);
    released_changed_.wait(lock, [&] {
      return (index < std::max(unreleased_, wanted_) + runs::kDecodeLookAhead &&
              index < unreleased_ + slots_) ||
             stop_.load();
    });
  }

  // The planes of yuv420p frame `f` (number `index`) into `slot` of yuv_buffer_, tightly packed.
  void copy_yuv420(const AVFrame* f, int index, std::size_t slot) {
    if (f->format != AV_PIX_FMT_YUV420P) {
      throw InputError(reader_.where() + ": frame " + std::to_string(index) +
                       " is not yuv420p like the stream");
    }
    std::uint8_t* dst = yuv_buffer_->data() + runs::yuv420_frame_bytes(header_) * slot;
    for (int p = 0; p < 3; ++p) {
      const int w = p == 0 ? header_.width : (header_.width + 1) / 2;
      const int h = p == 0 ? header_.height : (header_.height + 1) / 2;
      for (int y = 0; y < h; ++y, dst += w) {
        std::memcpy(dst, f->data[p] + static_cast<std::ptrdiff_t>(y) * f->linesize[p], w);
      }
    }
  }

  VideoReader reader_;
  RgbConverter rgb_of_;
  runs::FramesHeader header_;
  int slots_ = 0;                         // frame f in slot f % slots_
  std::optional<PageBuffer> buffer_;      // slots_ RGB frames
  std::optional<PageBuffer> yuv_buffer_;  // slots_ yuv420p frames; yuv420p sources only
  std::optional<AudioSink> audio_sink_;
  runs::ClipAudio audio_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  mutable std::condition_variable ready_changed_;
  // Where the reader is (wait_for_room), under mutex_.
  mutable std::condition_variable released_changed_;
  mutable std::vector<bool> released_;  // per frame
  mutable int unreleased_ = 0;          // the first frame not released
  mutable int wanted_ = 0;              // the furthest frame waited for; all of them in finish()
  int decoded_ = 0;       // frames readable, under mutex_
  bool ended_ = false;    // the thread is done, under mutex_
  int total_ = 0;         // frames the decoder gave, at the end
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<runs::DecodingClip> start_video_decode(const fs::path& video, int sample_rate,
                                                       int threads, bool keep_frames) {
  if (threads <= 0) {
    threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency() / 2));
  }
  return std::make_unique<FileDecode>(video, sample_rate, threads, keep_frames);
}

}  // namespace h3p::media
