#include "core/metrics/clip_compare.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "core/common/error.h"
#include "core/metrics/plane_pass.h"

namespace h3p::metrics {
namespace {

constexpr int kChunk = 1;  // frames a worker takes at a time

void check_same(const std::string& field, std::int64_t candidate, std::int64_t provider) {
  if (candidate != provider) {
    throw InputError("compare: " + field + " differs: candidate " + std::to_string(candidate) +
                     ", provider " + std::to_string(provider) + "; the clips are not comparable");
  }
}

struct FrameResult {
  double sse = 0;
  double temporal_sse = 0;
  double ssim = 0;
  FfmpegFrameStats ffmpeg;
};

// What the FFmpeg-compatible figures were measured on, for the report.
std::string describe_yuv(const ClipView& a, const ClipView& b, const std::string& converter) {
  if (a.yuv420 != nullptr && b.yuv420 != nullptr) return "yuv420p as stored in both video files";
  if (a.yuv420 != nullptr) return converter + " (provider); the candidate file's yuv420p as stored";
  if (b.yuv420 != nullptr) return converter + " (candidate); the provider file's yuv420p as stored";
  return converter;
}

// One worker's scratch: the plane pass, the yuv420p converter and frames.
class Worker {
 public:
  Worker(const ClipView& a, const ClipView& b, bool use_planes, const YuvConverterFactory& yuv)
      : a_(a), b_(b), use_planes_(use_planes), pass_(a.width, a.height),
        converter_(yuv ? yuv() : make_builtin_yuv_converter()) {}

  const YuvConverter& converter() const { return *converter_; }

  // After frame f: tells both sides' done_with of the pixels and planes of every frame whose
  // last reader this run was. `readers[g]` counts the runs still to read frame g: its own, the
  // next one's (the temporal term reads the previous frame) and the previous one's (an
  // odd-width yuv420p conversion reads the pixel after its last row).
  void finished(int f, std::vector<std::atomic<int>>& readers) const {
    for (int g = std::max(0, f - 1); g <= std::min(f + 1, a_.frames - 1); ++g) {
      if (readers[g].fetch_sub(1) == 1) release(g);
    }
  }

  // Every figure of frame f.
  void run(int f, FrameResult& r) {
    for (const ClipView* clip : {&a_, &b_}) {
      if (clip->wait_for) clip->wait_for(f);
    }
    r = FrameResult{};
    // Interleaved 8-bit rows hold all three channels: one sweep fetches each row once. Planes
    // share nothing, and one sweep per channel keeps a single ring in the L2 cache.
    PassPlane pa[3], pb[3], qa[3], qb[3];
    for (int c = 0; c < 3; ++c) {
      pa[c] = plane(a_, f, c);
      pb[c] = plane(b_, f, c);
      if (f > 0) {
        qa[c] = plane(a_, f - 1, c);
        qb[c] = plane(b_, f - 1, c);
      }
    }
    PassStats s[3];
    const int together = use_planes_ ? 1 : 3;
    for (int c = 0; c < 3; c += together) {
      pass_.run_channels(together, pa + c, pb + c, f > 0 ? qa + c : nullptr,
                         f > 0 ? qb + c : nullptr, s + c);
    }
    for (int c = 0; c < 3; ++c) {  // summed in channel order
      if (f > 0) r.temporal_sse += s[c].temporal_sse;
      r.sse += s[c].sse;
      r.ssim += s[c].ssim;
    }
    r.ssim /= 3.0;
    const std::size_t bytes = static_cast<std::size_t>(a_.width) * a_.height * 3;
    auto readable = [&](const ClipView& clip) {  // being decoded or in slots: this frame only
      const bool one = clip.wait_for || clip.frame_slots > 0;
      return bytes * static_cast<std::size_t>(one ? 1 : clip.frames - f);
    };
    Yuv420View views[2];
    for (int side = 0; side < 2; ++side) {
      const ClipView& clip = side == 0 ? a_ : b_;
      Yuv420Frame& yuv = side == 0 ? yuv_a_ : yuv_b_;
      if (clip.yuv420 != nullptr) {  // as the file stores it, read in place
        views[side] = Yuv420View::packed(clip.yuv420_frame(f), clip.width, clip.height);
      } else {
        converter_->convert(clip.rgb_frame(f), readable(clip), clip.width, clip.height, yuv);
        views[side] = Yuv420View::of(yuv);
      }
    }
    r.ffmpeg = ffmpeg_frame_stats(views[0], views[1], scratch_);
  }

 private:
  void release(int f) const {
    for (const ClipView* clip : {&a_, &b_}) {
      if (clip->frame_done) clip->frame_done(f);
      if (!clip->done_with) continue;
      const std::size_t pixels = static_cast<std::size_t>(clip->width) * clip->height;
      clip->done_with(clip->rgb_frame(f), pixels * 3);
      if (!use_planes_) continue;
      const std::size_t bytes = clip->plane_type == PlaneType::f16 ? 2 : 4;
      for (int c = 0; c < 3; ++c) {
        const std::size_t at = (static_cast<std::size_t>(c) * clip->frames + f) * pixels;
        clip->done_with(static_cast<const std::byte*>(clip->planes) + at * bytes,
                        pixels * bytes);
      }
    }
  }

  // Channel c of frame f of one side, as the pass reads it.
  PassPlane plane(const ClipView& clip, int f, int c) const {
    const std::size_t pixels = static_cast<std::size_t>(clip.width) * clip.height;
    PassPlane p;
    if (!use_planes_) {
      p.data = clip.rgb_frame(f);
      p.source = PassSource::rgb8;
      p.channel = c;
      return p;
    }
    const std::size_t at = (static_cast<std::size_t>(c) * clip.frames + f) * pixels;
    if (clip.plane_type == PlaneType::f16) {
      p.data = static_cast<const std::uint16_t*>(clip.planes) + at;
      p.source = PassSource::f16;
    } else {
      p.data = static_cast<const float*>(clip.planes) + at;
      p.source = PassSource::f32;
    }
    return p;
  }

  const ClipView& a_;
  const ClipView& b_;
  bool use_planes_;
  PlanePass pass_;
  std::unique_ptr<YuvConverter> converter_;
  Yuv420Frame yuv_a_, yuv_b_;
  FfmpegScratch scratch_;
};

std::string describe_source(const ClipView& a, const ClipView& b, bool use_planes) {
  if (!use_planes) return "8-bit frames (/255)";
  const bool half = a.plane_type == PlaneType::f16 || b.plane_type == PlaneType::f16;
  return half ? "fp16 frames before quantisation" : "fp32 frames before quantisation";
}

}  // namespace

ClipComparison compare_clips(const ClipView& a, const ClipView& b, const ClipParams& params) {
  check_same("width", a.width, b.width);
  check_same("height", a.height, b.height);
  check_same("frames", a.frames, b.frames);
  if (a.frames <= 0) throw InputError("compare: the clips have no frames");
  if (a.rgb == nullptr || b.rgb == nullptr) throw InputError("compare: a clip has no 8-bit frames");
  const bool use_planes = a.planes != nullptr && b.planes != nullptr;

  // 1. Frames, in chunks over the workers.
  std::vector<FrameResult> results(a.frames);
  int threads = params.threads > 0 ? params.threads
                                   : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, (a.frames + kChunk - 1) / kChunk);
  std::atomic<int> next{0};
  // Runs still to read each frame (Worker::finished).
  std::vector<std::atomic<int>> readers(a.frames);
  for (int f = 0; f < a.frames; ++f) {
    readers[f].store(1 + (f > 0 ? 1 : 0) + (f + 1 < a.frames ? 1 : 0));
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::string yuv_name;
  auto work = [&](Worker* worker) {
    try {
      for (;;) {
        const int begin = next.fetch_add(kChunk);
        if (begin >= a.frames) break;
        const int end = std::min(a.frames, begin + kChunk);
        for (int f = begin; f < end; ++f) {
          worker->run(f, results[f]);
          worker->finished(f, readers);
        }
      }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next.store(a.frames);
    }
  };
  {
    std::vector<std::unique_ptr<Worker>> workers;
    for (int t = 0; t < threads; ++t) {
      workers.push_back(std::make_unique<Worker>(a, b, use_planes, params.yuv));
    }
    yuv_name = workers.front()->converter().name();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, workers[t].get());
    work(workers[0].get());
    for (auto& th : pool) th.join();
  }
  if (failure) std::rethrow_exception(failure);

  // 2. Per-frame rows and clip figures, reduced in frame order.
  ClipComparison out;
  out.pixel_source = describe_source(a, b, use_planes);
  out.yuv_conversion = describe_yuv(a, b, yuv_name);
  const double values = 3.0 * a.width * a.height;
  double mse_sum = 0, ssim_sum = 0, ffmpeg_mse_sum = 0, ffmpeg_ssim_sum = 0, temporal_sum = 0;
  out.psnr_db_min = std::numeric_limits<double>::infinity();
  out.ssim_min = std::numeric_limits<double>::infinity();
  for (int f = 0; f < a.frames; ++f) {
    const FrameResult& r = results[f];
    FrameRow row;
    row.index = f;
    row.mse = r.sse / values;
    row.psnr_db = psnr_from_mse(row.mse, 1.0);
    row.ssim = r.ssim;
    row.mse_ffmpeg = r.ffmpeg.mse;
    row.psnr_db_ffmpeg = psnr_from_mse(r.ffmpeg.mse, 255.0);
    row.ssim_ffmpeg = r.ffmpeg.ssim_all;
    if (f > 0) {
      row.temporal_rmse = std::sqrt(r.temporal_sse / values);
      temporal_sum += r.temporal_sse;
    }
    mse_sum += row.mse;
    ssim_sum += row.ssim;
    ffmpeg_mse_sum += row.mse_ffmpeg;
    ffmpeg_ssim_sum += row.ssim_ffmpeg;
    out.psnr_db_min = std::min(out.psnr_db_min, row.psnr_db);
    out.ssim_min = std::min(out.ssim_min, row.ssim);
    out.frames.push_back(row);
  }
  out.psnr_db = psnr_from_mse(mse_sum / a.frames, 1.0);
  out.ssim = ssim_sum / a.frames;
  out.psnr_db_ffmpeg = psnr_from_mse(ffmpeg_mse_sum / a.frames, 255.0);
  out.ssim_ffmpeg = ffmpeg_ssim_sum / a.frames;
  out.temporal_rmse = a.frames > 1 ? std::sqrt(temporal_sum / (values * (a.frames - 1))) : 0.0;

  // 3. Audio, when both clips have it.
  out.audio = compare_clip_audio(a, b, params);
  return out;
}

std::optional<AudioComparison> compare_clip_audio(const ClipView& a, const ClipView& b,
                                                  const ClipParams& params) {
  if (a.audio == nullptr || b.audio == nullptr) return std::nullopt;
  check_same("audio channels", a.audio_channels, b.audio_channels);
  check_same("audio samples", a.audio_samples, b.audio_samples);
  check_same("audio sample rate", a.sample_rate, b.sample_rate);
  const double seconds = params.audio_window_seconds > 0 ? params.audio_window_seconds
                         : a.fps > 0                    ? 1.0 / a.fps
                                                        : 0.1;
  const auto window = std::max<std::int64_t>(1, std::llround(seconds * a.sample_rate));
  return compare_audio(a.audio, b.audio, a.audio_channels, a.audio_samples, window,
                       a.audio_stride, b.audio_stride);
}

}  // namespace h3p::metrics
