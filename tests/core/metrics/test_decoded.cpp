// Decoded outputs (core/runs/decoded.h) written and read back, their refusals, and the
// comparison of two decoded clips through compare_pair with its JSON keys (ARCHITECTURE.md,
// "compare --json keys"; infinite PSNR as the string "inf").
#include <ATen/ATen.h>  // before Qt: Qt's `slots` macro breaks ATen headers

#include <QtTest>

#include <filesystem>
#include <fstream>

#include "core/common/error.h"
#include "core/metrics/compare/compare_output.h"
#include "core/metrics/compare/run_compare.h"
#include "core/runs/decoded_write.h"

using namespace h3p;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const char* name) {
  const fs::path dir = fs::temp_directory_path() / ("h3p-test-decoded-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Synthetic decoder output: (1, 3, F, H, W) in [0, 1] and (1, 2, S) audio.
std::pair<at::Tensor, at::Tensor> synthetic(int frames, int h, int w, std::int64_t samples,
                                            std::uint64_t seed) {
  at::manual_seed(seed);
  at::Tensor video = at::rand({1, 3, frames, h, w});
  at::Tensor audio = at::randn({1, 2, samples}) * 0.1;
  return {video, audio};
}

}  // namespace

class DecodedTest : public QObject {
  Q_OBJECT
 private slots:
  void round_trip_and_quantisation() {
    const fs::path root = fresh_dir("run");
    const runs::RunPaths paths(root);
    auto [video, audio] = synthetic(3, 16, 24, 1000, 1);
    video.index_put_({0, 0, 0, 0, 0}, 1.2);    // clamps to 255
    video.index_put_({0, 1, 0, 0, 0}, -0.1);   // clamps to 0
    video.index_put_({0, 2, 0, 0, 0}, 0.5);    // 127.5 rounds half up to 128
    runs::write_decoded(paths, video, audio, 24, 32000, runs::FramePrecision::f32);
    const runs::DecodedClip clip = runs::DecodedClip::open(runs::decoded_dir(paths));
    QCOMPARE(clip.header().width, 24);
    QCOMPARE(clip.header().height, 16);
    QCOMPARE(clip.header().frames, 3);
    QCOMPARE(clip.header().fps, 24.0);
    QVERIFY(!clip.planes_half());
    QCOMPARE(int(clip.frame(0)[0]), 255);
    QCOMPARE(int(clip.frame(0)[1]), 0);
    QCOMPARE(int(clip.frame(0)[2]), 128);
    // Frame 2, pixel (y 5, x 7), channel 1 against the rule.
    const float v = video.index({0, 1, 2, 5, 7}).item<float>();
    QCOMPARE(int(clip.frame(2)[(5 * 24 + 7) * 3 + 1]), int(std::floor(v * 255.0f + 0.5f)));
    const float* planes = static_cast<const float*>(clip.planes());
    QCOMPARE(planes[(1 * 3 + 2) * 16 * 24 + 5 * 24 + 7], v);
    QCOMPARE(clip.audio_channels(), 2);
    QCOMPARE(clip.audio_samples(), std::int64_t(1000));
    QCOMPARE(clip.sample_rate(), 32000);
    QCOMPARE(clip.audio()[1500], audio.index({0, 1, 500}).item<float>());
    // fp16 storage: planes are half, frames.rgb quantised from the stored halves.
    runs::write_decoded(paths, video, at::Tensor(), 24, 0);
    const runs::DecodedClip half = runs::DecodedClip::open(runs::decoded_dir(paths));
    QVERIFY(half.planes_half());
    QVERIFY(half.audio().empty());
  }

  void refusals_name_the_file() {
    const fs::path root = fresh_dir("bad");
    const runs::RunPaths paths(root);
    QVERIFY_THROWS_EXCEPTION(InputError, runs::DecodedClip::open(runs::decoded_dir(paths)));
    auto [video, audio] = synthetic(2, 16, 16, 100, 2);
    QVERIFY_THROWS_EXCEPTION(InputError, runs::write_decoded(paths, video.squeeze(0), audio, 24, 32000));
    QVERIFY_THROWS_EXCEPTION(InputError, runs::write_decoded(paths, video, audio, 0, 32000));
    runs::write_decoded(paths, video, audio, 24, 32000);
    fs::resize_file(runs::decoded_dir(paths) / "frames.rgb", 100);
    try {
      runs::DecodedClip::open(runs::decoded_dir(paths));
      QFAIL("truncated frames.rgb accepted");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("frames.rgb") != std::string::npos, e.what());
    }
  }

  void compare_decoded_clips_json_keys() {
    const fs::path a = fresh_dir("a"), b = fresh_dir("b"), c = fresh_dir("c");
    auto [video, audio] = synthetic(5, 24, 32, 2000, 3);
    runs::write_decoded(runs::RunPaths(a), video, audio, 24, 32000);
    runs::write_decoded(runs::RunPaths(b), video, audio, 24, 32000);
    runs::write_decoded(runs::RunPaths(c), (video * 0.98 + 0.01).clamp(0, 1), audio * 1.01, 24, 32000);
    compare::CompareParams params;
    params.candidate = runs::decoded_dir(runs::RunPaths(a));
    params.provider = runs::decoded_dir(runs::RunPaths(b));
    params.clip.threads = 2;
    const compare::Comparison same = compare::compare_pair(params);
    const nlohmann::json j = compare::to_json(same);
    for (const char* key : {"summary", "bounds", "frames", "steps"}) QVERIFY2(j.contains(key), key);
    for (const char* key : {"psnr_db", "ssim", "temporal_rmse", "audio_rel_l2", "psnr_db_ffmpeg",
                            "ssim_ffmpeg", "passed"}) {
      QVERIFY2(j["summary"].contains(key), key);
    }
    QCOMPARE(j["summary"]["psnr_db"], nlohmann::json("inf"));
    QCOMPARE(j["summary"]["psnr_db_ffmpeg"], nlohmann::json("inf"));
    QCOMPARE(j["summary"]["ssim"].get<double>(), 1.0);
    QVERIFY(j["summary"]["passed"].is_null());  // no bounds given
    QCOMPARE(j["frames"].size(), std::size_t(5));
    for (const char* key : {"index", "psnr_db", "ssim", "psnr_db_ffmpeg", "ssim_ffmpeg"}) {
      QVERIFY2(j["frames"][0].contains(key), key);
    }
    // Against bounds from a contract: the changed clip fails PSNR and audio.
    contract::Contract k;
    k.source = "bounds.json";
    k.bounds = {50.0, 0.99, 0.01, 0.005};
    params.contract = k;
    params.candidate = runs::decoded_dir(runs::RunPaths(c));
    const compare::Comparison diff = compare::compare_pair(params);
    QVERIFY(diff.passed().has_value() && !*diff.passed());
    QVERIFY(std::isfinite(diff.clip.psnr_db) && diff.clip.psnr_db < 50);
    QVERIFY(std::abs(diff.clip.audio->rel_l2 - 0.01) < 1e-5);
    const nlohmann::json jd = compare::to_json(diff);
    QCOMPARE(jd["summary"]["passed"], nlohmann::json(false));
    QCOMPARE(jd["bounds"]["psnr_db_min"].get<double>(), 50.0);
    QVERIFY(jd["failures"].size() >= 2);
    // Several comparisons: one table, "comparisons" in JSON.
    const nlohmann::json both = compare::to_json(std::vector<compare::Comparison>{same, diff});
    QCOMPARE(both["comparisons"].size(), std::size_t(2));
    QCOMPARE(both["passed"], nlohmann::json(false));
    QVERIFY(compare::to_markdown({same, diff}).find("| passed |") != std::string::npos);
  }

  void mismatched_decoded_shapes_are_refused_first() {
    const fs::path a = fresh_dir("sa"), b = fresh_dir("sb");
    auto [v1, a1] = synthetic(4, 16, 16, 100, 4);
    auto [v2, a2] = synthetic(5, 16, 16, 100, 4);
    runs::write_decoded(runs::RunPaths(a), v1, a1, 24, 32000);
    runs::write_decoded(runs::RunPaths(b), v2, a2, 24, 32000);
    compare::CompareParams params;
    params.candidate = runs::decoded_dir(runs::RunPaths(a));
    params.provider = runs::decoded_dir(runs::RunPaths(b));
    try {
      compare::compare_pair(params);
      QFAIL("different frame counts accepted");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("frames 4 differs from 5") != std::string::npos, e.what());
    }
  }

  void cleanup_dirs() {
    fs::remove_all(fs::temp_directory_path() / ("h3p-test-decoded-" + std::to_string(::getpid())));
  }
};

QTEST_APPLESS_MAIN(DecodedTest)
#include "test_decoded.moc"
