// h3p_media: export (FFV1/FLAC MKV, H.264/AAC MP4) decoded back through decode_video_file
// (lossless MKV: identical frames) and through the streaming decode of compare (the same frames
// and audio; frames waited for while decoding; a truncated file refused naming it), reference images, and the FFmpeg-compatible metrics
// against the ffmpeg CLI itself (psnr "average:" within 1e-3 dB, ssim "All:" within 1e-4;
// skipped when no ffmpeg is on PATH; scripts/install-deps.sh --tests installs it).
#include <ATen/ATen.h>  // before Qt: Qt's `slots` macro breaks ATen headers

#include <QtTest>
#include <opencv2/imgcodecs.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <thread>

#include "core/common/error.h"
#include "core/media/clip_export.h"
#include "core/media/image_load.h"
#include "core/media/video_decode.h"
#include "core/media/video_stream.h"
#include "core/media/yuv_swscale.h"
#include "core/metrics/clip_compare.h"
#include "core/runs/decoded_write.h"

using namespace h3p;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("h3p-test-media-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Smooth moving content with some noise, (1, 3, F, H, W) in [0, 1].
at::Tensor smooth_video(int frames, int h, int w, double noise, std::uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor y = at::arange(h, at::kFloat).view({1, 1, 1, h, 1});
  const at::Tensor x = at::arange(w, at::kFloat).view({1, 1, 1, 1, w});
  const at::Tensor t = at::arange(frames, at::kFloat).view({1, 1, frames, 1, 1});
  const at::Tensor c = at::arange(3, at::kFloat).view({1, 3, 1, 1, 1});
  at::Tensor v = 0.5 + 0.35 * at::sin(0.07 * x + 0.05 * y + 0.4 * t + c);
  v = v + noise * (at::rand({1, 3, frames, h, w}) - 0.5);
  return v.clamp(0, 1);
}

std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  ::pclose(pipe);
  return out;
}

bool have_ffmpeg() { return std::system("ffmpeg -version >/dev/null 2>&1") == 0; }

// ffmpeg's psnr "average:" and ssim "All:" of two raw RGB24 files.
std::pair<double, double> ffmpeg_cli(const fs::path& a, const fs::path& b, int w, int h) {
  const std::string in = "-f rawvideo -pix_fmt rgb24 -s " + std::to_string(w) + "x" +
                         std::to_string(h) + " -r 24 -i ";
  auto figure = [&](const std::string& filter, const std::string& key) {
    const std::string log = run_command(
        "ffmpeg -hide_banner -nostats " + in + a.string() + " " + in + b.string() +
        " -lavfi \"[0:v]format=yuv420p[x];[1:v]format=yuv420p[y];[x][y]" + filter +
        "\" -f null - 2>&1");
    std::smatch m;
    if (!std::regex_search(log, m, std::regex(key + "([0-9.]+|inf)"))) return std::nan("");
    return m[1] == "inf" ? INFINITY : std::stod(m[1]);
  };
  return {figure("psnr", "average:"), figure("ssim", "All:")};
}

}  // namespace

class MediaTest : public QObject {
  Q_OBJECT
 private slots:
  void export_then_decode_is_lossless_for_mkv() {
    const fs::path run = fresh_dir("export");
    const at::Tensor video = smooth_video(30, 64, 96, 0.2, 1);
    at::manual_seed(2);
    const at::Tensor audio = (at::rand({1, 2, 32000 * 30 / 24}) - 0.5) * 0.5;
    runs::write_decoded(runs::RunPaths(run), video, audio, 24, 32000);
    media::ExportParams p;
    p.decoded_dir = run / "decoded";
    p.mkv = run / "out" / "video.mkv";
    p.mp4 = run / "out" / "video.mp4";
    p.preset = "veryfast";
    try {
      media::export_clip(p);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QVERIFY(fs::file_size(p.mkv) > 0 && fs::file_size(p.mp4) > 0);

    const runs::DecodedClip source = runs::DecodedClip::open(p.decoded_dir);
    media::decode_video_file(p.mkv, run / "mkv", 0);
    const runs::DecodedClip mkv = runs::DecodedClip::open(run / "mkv");
    QCOMPARE(mkv.header().frames, 30);
    QCOMPARE(mkv.header().width, 96);
    QCOMPARE(mkv.header().fps, 24.0);
    QVERIFY(std::memcmp(mkv.rgb(), source.rgb(), source.header().frame_bytes() * 30) == 0);
    QCOMPARE(mkv.sample_rate(), 32000);
    QCOMPARE(mkv.audio_samples(), source.audio_samples());
    double max_err = 0;
    for (std::size_t i = 0; i < source.audio().size(); ++i) {
      max_err = std::max(max_err, double(std::abs(mkv.audio()[i] - source.audio()[i])));
    }
    QVERIFY2(max_err < 1e-6, qPrintable(QString::number(max_err)));  // FLAC, 24 bits

    media::decode_video_file(p.mp4, run / "mp4", 32000);
    const runs::DecodedClip mp4 = runs::DecodedClip::open(run / "mp4");
    QCOMPARE(mp4.header().frames, 30);
    QVERIFY(mp4.audio_samples() >= source.audio_samples() - 1024);
    metrics::ClipView a{}, b{};
    for (auto [v, c] : {std::pair{&a, &mp4}, std::pair{&b, &source}}) {
      v->width = 96;
      v->height = 64;
      v->frames = 30;
      v->fps = 24;
      v->rgb = c->rgb();
    }
    const metrics::ClipComparison r = metrics::compare_clips(a, b, {});
    // CRF 18 smooths the uniform noise (about 25 dB); a frame out of order gives about 10 dB.
    QVERIFY2(r.psnr_db > 20, qPrintable(QString::number(r.psnr_db)));
  }

  void streaming_decode_equals_the_whole_file_decode() {
    const fs::path run = fresh_dir("stream");
    at::manual_seed(3);
    runs::write_decoded(runs::RunPaths(run), smooth_video(21, 48, 80, 0.3, 4),
                        (at::rand({1, 2, 32000 * 21 / 24}) - 0.5) * 0.5, 24, 32000);
    media::ExportParams p;
    p.decoded_dir = run / "decoded";
    p.mkv = run / "video.mkv";
    p.mp4 = run / "video.mp4";
    p.preset = "veryfast";
    media::export_clip(p);
    for (const fs::path& file : {p.mkv, p.mp4}) {
      const fs::path whole = run / ("whole-" + file.extension().string().substr(1));
      media::decode_video_file(file, whole, 16000);
      const runs::DecodedClip expected = runs::DecodedClip::open(whole);
      std::unique_ptr<runs::DecodingClip> clip = media::start_video_decode(file, 16000);
      QCOMPARE(clip->header().frames, 21);
      QCOMPARE(clip->header().width, 80);
      QCOMPARE(clip->header().height, 48);
      QCOMPARE(clip->header().fps, 24.0);
      const std::size_t bytes = clip->header().frame_bytes();
      for (int f = 0; f < 21; ++f) {  // each frame as soon as it is there
        clip->wait_for(f);
        QVERIFY2(std::memcmp(clip->rgb() + f * bytes, expected.frame(f), bytes) == 0,
                 qPrintable(QString("%1 frame %2").arg(file.c_str()).arg(f)));
      }
      QVERIFY_THROWS_EXCEPTION(InputError, clip->wait_for(21));
      // The stored yuv420p (H.264) as ffmpeg decodes it; none for the RGB FFV1.
      QCOMPARE(clip->yuv420() != nullptr, file == p.mp4);
      if (clip->yuv420() != nullptr && have_ffmpeg()) {
        const fs::path raw = run / "mp4.yuv";
        run_command("ffmpeg -v error -y -i " + file.string() + " -f rawvideo -pix_fmt yuv420p " +
                    raw.string());
        const std::size_t n = runs::yuv420_frame_bytes(clip->header()) * 21;
        QCOMPARE(static_cast<std::size_t>(fs::file_size(raw)), n);
        std::string bytes(n, '\0');
        std::ifstream(raw, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(n));
        QVERIFY(std::memcmp(bytes.data(), clip->yuv420(), n) == 0);
      }
      const runs::ClipAudio& audio = clip->finish();
      QCOMPARE(audio.channels, 2);
      QCOMPARE(audio.sample_rate, 16000);
      QCOMPARE(audio.samples, expected.audio_samples());
      QVERIFY(audio.planar == expected.audio());
    }
    // The decode stays within the look-ahead of its reader (the first frame not released) and
    // goes on to a frame the reader waits for further on.
    for (const fs::path& file : {p.mkv, p.mp4}) {
      const runs::DecodedClip expected =
          runs::DecodedClip::open(run / ("whole-" + file.extension().string().substr(1)));
      std::unique_ptr<runs::DecodingClip> clip = media::start_video_decode(file, 16000);
      const std::size_t bytes = clip->header().frame_bytes();
      clip->wait_for(0);
      clip->release(0);
      const int bound = 1 + runs::kDecodeLookAhead;
      // Given time to run past the bound (a 21-frame clip of 80x48 decodes in milliseconds).
      for (int i = 0; i < 100 && clip->decoded_frames() <= bound; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      QVERIFY2(clip->decoded_frames() <= bound,
               qPrintable(QString("%1: %2 frames decoded with frame 0 released (bound %3)")
                              .arg(file.c_str())
                              .arg(clip->decoded_frames())
                              .arg(bound)));
      clip->wait_for(20);
      QVERIFY(std::memcmp(clip->rgb() + 20 * bytes, expected.frame(20), bytes) == 0);
      clip->finish();
    }
    // Into a ring of frame slots: a slot takes a later frame only once its frame is released,
    // so an unreleased frame stays intact while the decode runs on through the other slots.
    for (const fs::path& file : {p.mkv, p.mp4}) {
      const runs::DecodedClip expected =
          runs::DecodedClip::open(run / ("whole-" + file.extension().string().substr(1)));
      std::unique_ptr<runs::DecodingClip> clip = media::start_video_decode(file, 16000, 0, false);
      const int ring = clip->frame_slots();
      QCOMPARE(ring, std::min(21, runs::kDecodeSlots));
      QVERIFY(ring < 21);  // the clip is longer than the ring: its slots are reused
      const std::size_t bytes = clip->header().frame_bytes();
      std::string stored;  // the stored yuv420p of every frame, as ffmpeg decodes it (H.264)
      if (clip->yuv420() != nullptr && have_ffmpeg()) {
        const fs::path raw = run / "ring.yuv";
        run_command("ffmpeg -v error -y -i " + file.string() + " -f rawvideo -pix_fmt yuv420p " +
                    raw.string());
        stored.assign(static_cast<std::size_t>(fs::file_size(raw)), '\0');
        std::ifstream(raw, std::ios::binary)
            .read(stored.data(), static_cast<std::streamsize>(stored.size()));
      }
      const std::size_t yuv = runs::yuv420_frame_bytes(clip->header());
      auto check_frame = [&](int f) {
        QVERIFY2(std::memcmp(clip->rgb_frame(f), expected.frame(f), bytes) == 0,
                 qPrintable(QString("%1 frame %2").arg(file.c_str()).arg(f)));
        QVERIFY(clip->rgb_frame(f) == clip->rgb() + bytes * static_cast<std::size_t>(f % ring));
        if (!stored.empty()) {
          QVERIFY2(std::memcmp(clip->yuv420_frame(f), stored.data() + yuv * f, yuv) == 0,
                   qPrintable(QString("%1 yuv420p frame %2").arg(file.c_str()).arg(f)));
        }
      };
      // Frame 0 held, every other frame released once read: the decode stops at the last
      // frame that has a free slot.
      for (int f = 0; f < ring; ++f) {
        clip->wait_for(f);
        check_frame(f);
        if (f > 0) clip->release(f);
      }
      for (int i = 0; i < 20 && clip->decoded_frames() <= ring; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      QCOMPARE(clip->decoded_frames(), ring);
      check_frame(0);
      // Frame 0 released: the later frames take the slots over, each intact when read.
      clip->release(0);
      for (int f = ring; f < 21; ++f) {
        clip->wait_for(f);
        check_frame(f);
        clip->release(f);
      }
      QCOMPARE(clip->finish().channels, 2);
    }
    // Dropped while decoding: the destructor stops and joins the decoder.
    media::start_video_decode(p.mkv).reset();
    // A truncated file: refused with its name (at the start or while decoding), or shorter.
    const fs::path cut = run / "cut.mkv";
    {
      std::ifstream in(p.mkv, std::ios::binary);
      std::string head(static_cast<std::size_t>(fs::file_size(p.mkv) / 2), '\0');
      in.read(head.data(), static_cast<std::streamsize>(head.size()));
      std::ofstream(cut, std::ios::binary).write(head.data(), static_cast<std::streamsize>(head.size()));
    }
    int frames = -1;
    try {
      std::unique_ptr<runs::DecodingClip> clip = media::start_video_decode(cut);
      for (int f = 0; f < clip->header().frames; ++f) clip->wait_for(f);
      clip->finish();
      frames = clip->header().frames;
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("cut.mkv") != std::string::npos, e.what());
    }
    QVERIFY2(frames < 21, "half of the file decoded to every frame");
  }

  void decode_refuses_what_is_not_a_video() {
    const fs::path dir = fresh_dir("bad");
    std::ofstream(dir / "x.mp4") << "not a video";
    QVERIFY_THROWS_EXCEPTION(InputError, media::decode_video_file(dir / "x.mp4", dir / "out", 0));
    QVERIFY_THROWS_EXCEPTION(InputError, media::decode_video_file(dir / "missing.mkv", dir / "out", 0));
    QVERIFY_THROWS_EXCEPTION(InputError, media::start_video_decode(dir / "x.mp4"));
    QVERIFY_THROWS_EXCEPTION(InputError, media::start_video_decode(dir / "missing.mkv"));
  }

  void reference_image_is_scaled_and_cropped() {
    const fs::path dir = fresh_dir("image");
    cv::Mat bgr(40, 80, CV_8UC3, cv::Scalar(255, 0, 0));  // blue in BGR
    QVERIFY(cv::imwrite((dir / "ref.png").string(), bgr));
    const media::RgbImage img = media::load_reference_image(dir / "ref.png", 32, 32);
    QCOMPARE(img.width, 32);
    QCOMPARE(img.planes.size(), std::size_t(3 * 32 * 32));
    QCOMPARE(img.planes[0], 0.0f);              // R
    QCOMPARE(img.planes[2 * 32 * 32 + 5], 1.0f);  // B
    QVERIFY_THROWS_EXCEPTION(InputError, media::load_reference_image(dir / "none.png", 32, 32));
  }

  void ffmpeg_figures_agree_with_the_ffmpeg_cli() {
    if (!have_ffmpeg()) QSKIP("no ffmpeg CLI on PATH (scripts/install-deps.sh --tests)");
    struct Case {
      int frames, h, w;
      double noise;
    };
    for (const Case& k : {Case{8, 96, 160, 0.05}, Case{5, 38, 66, 0.3}, Case{3, 768, 1344, 0.1}}) {
      const fs::path dir = fresh_dir("cli-" + std::to_string(k.w));
      const at::Tensor base = smooth_video(k.frames, k.h, k.w, k.noise, 5);
      const at::Tensor other = (base + 0.03 * (at::rand(base.sizes()) - 0.5)).clamp(0, 1);
      runs::write_decoded(runs::RunPaths(dir / "a"), other, at::Tensor(), 24, 0);
      runs::write_decoded(runs::RunPaths(dir / "b"), base, at::Tensor(), 24, 0);
      const runs::DecodedClip a = runs::DecodedClip::open(dir / "a" / "decoded");
      const runs::DecodedClip b = runs::DecodedClip::open(dir / "b" / "decoded");
      metrics::ClipView va{}, vb{};
      for (auto [v, c] : {std::pair{&va, &a}, std::pair{&vb, &b}}) {
        v->width = k.w;
        v->height = k.h;
        v->frames = k.frames;
        v->fps = 24;
        v->rgb = c->rgb();
      }
      metrics::ClipParams params;
      params.yuv = [] { return media::make_swscale_yuv_converter(); };
      const metrics::ClipComparison ours = metrics::compare_clips(va, vb, params);
      const metrics::ClipComparison builtin = metrics::compare_clips(va, vb, {});
      const auto [psnr, ssim] =
          ffmpeg_cli(dir / "a" / "decoded" / "frames.rgb", dir / "b" / "decoded" / "frames.rgb", k.w, k.h);
      qInfo("%dx%d x%d: ffmpeg psnr %.6f ssim %.6f | ours %.6f %.6f (d %.2e, %.2e) | built-in "
            "conversion %.6f %.6f",
            k.w, k.h, k.frames, psnr, ssim, ours.psnr_db_ffmpeg, ours.ssim_ffmpeg,
            ours.psnr_db_ffmpeg - psnr, ours.ssim_ffmpeg - ssim, builtin.psnr_db_ffmpeg,
            builtin.ssim_ffmpeg);
      QVERIFY(std::isfinite(psnr) && std::isfinite(ssim));
      QVERIFY2(std::abs(ours.psnr_db_ffmpeg - psnr) <= 1e-3, "psnr differs from ffmpeg");
      QVERIFY2(std::abs(ours.ssim_ffmpeg - ssim) <= 1e-4, "ssim differs from ffmpeg");
    }
  }

  void identical_clips_are_infinite_in_ffmpeg_too() {
    if (!have_ffmpeg()) QSKIP("no ffmpeg CLI on PATH");
    const fs::path dir = fresh_dir("same");
    runs::write_decoded(runs::RunPaths(dir), smooth_video(3, 32, 48, 0.1, 9), at::Tensor(), 24, 0);
    const fs::path f = dir / "decoded" / "frames.rgb";
    const auto [psnr, ssim] = ffmpeg_cli(f, f, 48, 32);
    QVERIFY(std::isinf(psnr));
    QCOMPARE(ssim, 1.0);
  }

  void cleanup_dirs() {
    fs::remove_all(fs::temp_directory_path() / ("h3p-test-media-" + std::to_string(::getpid())));
  }
};

QTEST_APPLESS_MAIN(MediaTest)
#include "test_media.moc"
