// Bit-exact comparisons with golden data recorded from the reference pipeline
// (tests/data/golden, see its README): sigma grids, isolated scheduler steps, scale_noise,
// the packed layouts A and B, the initial noise, the per-step timestep plans and scheduler
// updates of a recorded trajectory, and the example conditioning file. Skips only while the
// golden folder is absent; once present every comparison demands equal bits.
#include <ATen/ATen.h>

#include <QtTest>

#include <filesystem>
#include <regex>

#include "core/io/aten_bridge.h"
#include "core/io/safetensors.h"
#include "core/sampling/conditioning.h"
#include "core/sampling/noise.h"
#include "core/sampling/patchify.h"
#include "core/sampling/scheduler.h"
#include "core/sampling/timestep_plan.h"
#include "sampling_test_util.h"

using namespace h3p::sampling;
using namespace h3p::sampling::test;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(H3P_SOURCE_DIR) / "tests" / "data" / "golden";

#define H3P_REQUIRE_GOLDEN()                                              \
  do {                                                                    \
    if (!fs::is_directory(kGolden)) QSKIP("golden data folder absent");   \
  } while (0)

// A golden file; a missing file inside a present folder is a failure, not a skip.
h3p::io::SafetensorsFile open_golden(const char* relative) {
  return h3p::io::SafetensorsFile::open(kGolden / relative);
}

at::Tensor load(const h3p::io::SafetensorsFile& f, const std::string& name) {
  return h3p::io::load_tensor(f, name);
}

int64_t scalar_i64(const h3p::io::SafetensorsFile& f, const std::string& name) {
  return load(f, name).item<int64_t>();
}

at::Tensor vector_tensor(const std::vector<float>& v) {
  return at::tensor(at::ArrayRef<float>(v));
}

}  // namespace

class TestGolden : public QObject {
  Q_OBJECT

 private slots:
  void sigmaGrids();
  void isolatedSteps();
  void scaleNoise();
  void layouts_data();
  void layouts();
  void noiseSeed42();
  void noiseSeed43Keyframe();
  void trajectoryPlansAndUpdates();
  void demoConditioning();
};

void TestGolden::sigmaGrids() {
  H3P_REQUIRE_GOLDEN();
  const auto f = open_golden("scheduler/grids.safetensors");
  const std::regex name(R"(sigmas_N(\d+)_s([0-9.]+))");
  int grids = 0;
  for (const auto& info : f.tensors()) {
    std::smatch m;
    if (!std::regex_match(info.name, m, name)) continue;
    const int n = std::stoi(m[1]);
    const double shift = std::stod(m[2]);
    const Schedule s = make_schedule(n, shift);
    const std::string suffix = "_N" + m[1].str() + "_s" + m[2].str();
    QVERIFY2(bit_equal(vector_tensor(s.sigmas), load(f, info.name)), info.name.c_str());
    QVERIFY2(bit_equal(vector_tensor(s.timesteps), load(f, "timesteps" + suffix)),
             info.name.c_str());
    ++grids;
  }
  QVERIFY(grids >= 20);
}

void TestGolden::isolatedSteps() {
  H3P_REQUIRE_GOLDEN();
  const auto f = open_golden("scheduler/steps.safetensors");
  int cases = 0;
  for (const double shift : {12.0, 3.0}) {
    const Schedule s = make_schedule(50, shift);
    for (const int index : {0, 1, 2, 10, 24, 30, 47, 48}) {
      // The shift as Python prints it: "s12.0_i0_".
      const std::string p = "s" + std::to_string(static_cast<int>(shift)) + ".0_i" +
                            std::to_string(index) + "_";
      const float t = load(f, p + "timestep").item<float>();
      QCOMPARE(float_bits(t), float_bits(s.timesteps[index]));
      QCOMPARE(float_bits(load(f, p + "sigma").item<float>()), float_bits(s.sigmas[index]));
      QCOMPARE(float_bits(load(f, p + "sigma_next").item<float>()),
               float_bits(s.sigmas[index + 1]));
      const at::Tensor next =
          scheduler_step(load(f, p + "model_output"), t, load(f, p + "sample"), s, index);
      QVERIFY2(bit_equal(next, load(f, p + "prev_sample")), p.c_str());
      ++cases;
    }
  }
  QCOMPARE(cases, 16);
}

void TestGolden::scaleNoise() {
  H3P_REQUIRE_GOLDEN();
  const auto f = open_golden("scheduler/steps.safetensors");
  const double t = 0.999;
  QCOMPARE(float_bits(load(f, "scale_noise_timestep").item<float>()),
           float_bits(static_cast<float>(t)));
  H3P_VERIFY_BITS(scale_noise(load(f, "scale_noise_sample"), t, load(f, "scale_noise_noise")),
                  load(f, "scale_noise_out"));
}

void TestGolden::layouts_data() {
  QTest::addColumn<QString>("file");
  QTest::addColumn<bool>("keyframe");
  QTest::newRow("A") << "layouts/layout-A.safetensors" << false;
  QTest::newRow("B") << "layouts/layout-B.safetensors" << true;
}

void TestGolden::layouts() {
  H3P_REQUIRE_GOLDEN();
  QFETCH(QString, file);
  QFETCH(bool, keyframe);
  const auto f = open_golden(file.toStdString().c_str());
  const Geometry g = resolve_geometry(22, 96, 128, 24);
  QCOMPARE(int64_t{g.frames}, scalar_i64(f, "num_frames"));
  QCOMPARE(int64_t{g.num_latent_frames}, scalar_i64(f, "num_latent_frames"));
  QCOMPARE(int64_t{g.latent_height}, scalar_i64(f, "latent_height"));
  QCOMPARE(int64_t{g.latent_width}, scalar_i64(f, "latent_width"));
  QCOMPARE(int64_t{g.num_audio_latents}, scalar_i64(f, "num_audio_latents"));
  QCOMPARE(scalar_i64(f, "num_condition_audio_rows"), int64_t{0});

  const std::vector<std::string> anchors =
      keyframe ? std::vector<std::string>{"first"} : std::vector<std::string>{};
  const PackedLayout l = build_packed_layout(load(f, "text_token_tags"), g, anchors);
  QCOMPARE(l.num_condition_video_rows, scalar_i64(f, "num_condition_video_rows"));
  H3P_VERIFY_BITS(l.position_ids, load(f, "position_ids"));
  H3P_VERIFY_BITS(l.token_tags, load(f, "token_tags"));
  H3P_VERIFY_BITS(l.video_indices, load(f, "video_indices"));
  H3P_VERIFY_BITS(l.audio_indices, load(f, "audio_indices"));
  H3P_VERIFY_BITS(l.text_indices, load(f, "text_indices"));
  QCOMPARE(l.sequence_length, l.token_tags.size(0));
}

void TestGolden::noiseSeed42() {
  H3P_REQUIRE_GOLDEN();
  const auto f = open_golden("noise/seed42.safetensors");
  const InitialNoise n = draw_initial_noise(42, {}, {1, 24, 7, 6, 8}, {74, 32});
  H3P_VERIFY_BITS(n.video, load(f, "video"));
  H3P_VERIFY_BITS(n.audio_rows, load(f, "audio"));
  H3P_VERIFY_BITS(patchify_video(n.video), load(f, "video_rows"));
}

void TestGolden::noiseSeed43Keyframe() {
  H3P_REQUIRE_GOLDEN();
  const auto f = open_golden("noise/seed43-keyframe.safetensors");
  const InitialNoise n = draw_initial_noise(43, {{1, 24, 1, 6, 8}}, {1, 24, 7, 6, 8}, {74, 32});
  H3P_VERIFY_BITS(n.keyframes.at(0), load(f, "keyframe"));
  H3P_VERIFY_BITS(n.video, load(f, "video"));
  H3P_VERIFY_BITS(n.audio_rows, load(f, "audio"));
  H3P_VERIFY_BITS(patchify_video(n.keyframes[0]), load(f, "keyframe_rows"));
  H3P_VERIFY_BITS(patchify_video(n.video), load(f, "video_rows"));
}

void TestGolden::trajectoryPlansAndUpdates() {
  H3P_REQUIRE_GOLDEN();
  const auto f = open_golden("trajectory/fp32-A.safetensors");
  const auto layout_file = open_golden("layouts/layout-A.safetensors");
  const Schedule video = make_schedule(5, 12.0);
  const Schedule audio = make_schedule(5, 3.0);
  H3P_VERIFY_BITS(vector_tensor(video.sigmas), load(f, "sigmas"));
  H3P_VERIFY_BITS(vector_tensor(audio.sigmas), load(f, "audio_sigmas"));
  H3P_VERIFY_BITS(vector_tensor(video.timesteps), load(f, "timesteps"));
  H3P_VERIFY_BITS(vector_tensor(audio.timesteps), load(f, "audio_timesteps"));

  const PackedLayout layout = build_packed_layout(load(f, "text_token_tags"),
                                                  resolve_geometry(22, 96, 128, 24), {});
  H3P_VERIFY_BITS(layout.position_ids, load(layout_file, "position_ids"));

  at::Tensor latents = load(f, "initial_latents");
  at::Tensor audio_latents = load(f, "initial_audio_latents");
  const int64_t keep_video = layout.num_condition_video_rows;
  for (int i = 0; i < 4; ++i) {
    const std::string p = "step" + std::to_string(i) + "_";
    const float t = video.timesteps[i], ta = audio.timesteps[i];
    // The row plan the loop hands the transformer.
    const RowTimesteps plan = build_row_timesteps(layout, t, ta, condition_video_t(t));
    QVERIFY2(bit_equal(plan.timestep, load(f, p + "timestep")), p.c_str());
    QVERIFY2(bit_equal(plan.timestep_indices, load(f, p + "timestep_indices")), p.c_str());
    // The update of the generated rows from the recorded velocities.
    const at::Tensor v = load(f, p + "noise_pred")[0].slice(0, keep_video);
    const at::Tensor va = load(f, p + "audio_noise_pred")[0];
    latents = latents.clone();
    latents.slice(0, keep_video).copy_(
        scheduler_step(v.to(at::kFloat), t, latents.slice(0, keep_video), video, i));
    audio_latents = scheduler_step(va.to(at::kFloat), ta, audio_latents, audio, i);
    QVERIFY2(bit_equal(latents, load(f, p + "latents")), p.c_str());
    QVERIFY2(bit_equal(audio_latents, load(f, p + "audio_latents")), p.c_str());
  }
  H3P_VERIFY_BITS(latents, load(f, "final_latents"));
  H3P_VERIFY_BITS(audio_latents, load(f, "final_audio_latents"));
}

void TestGolden::demoConditioning() {
  H3P_REQUIRE_GOLDEN();
  const fs::path path = kGolden / "conditioning" / "demo-conditioning.safetensors";
  const Conditioning c = load_conditioning(path, 48);
  QCOMPARE(c.encoder_hidden_states.scalar_type(), at::kBFloat16);
  QCOMPARE(c.encoder_hidden_states.sizes(), (at::IntArrayRef{1, 12, 48}));
  H3P_VERIFY_BITS(c.text_token_tags, at::ones({12}, at::kLong));
  QVERIFY(c.keyframe_latents.empty());
}

QTEST_APPLESS_MAIN(TestGolden)
#include "test_golden.moc"
