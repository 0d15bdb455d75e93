// The video and audio VAE decoders against outputs diffusers wrote on CPU
// (tests/data/golden/decoders): relative L2 <= 1e-5 and max abs <= 1e-4 (another torch build
// rounds fp32 differently); NaN/Inf fail. Plus the parameter tables against the saved
// checkpoints, init-model's decoders, layouts and refusals.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <QtTest/QtTest>
#include <fstream>

#include "tests/core/model/model_test_util.h"
#include "core/common/error.h"
#include "core/io/aten_bridge.h"
#include "core/io/safetensors.h"
#include "core/metrics/tensor_diff.h"
#include "core/model/anti_alias.h"
#include "core/model/decoder.h"
#include "core/model/init_model.h"
#include "core/model/presets.h"
#include "core/model/vae_weights.h"

using namespace h3p;
using test::expect_input_error;
using test::temp_dir;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(H3P_SOURCE_DIR) / "tests/data/golden/decoders";
constexpr double kRelL2 = 1e-5;
constexpr double kMaxAbs = 1e-4;

const model::VideoVaeDecoder& golden_video() {
  static const model::VideoVaeDecoder vae =
      model::VideoVaeDecoder::load(kGolden / "tiny/vae", at::kCPU);
  return vae;
}

const model::AudioVaeDecoder& golden_audio() {
  static const model::AudioVaeDecoder vae =
      model::AudioVaeDecoder::load(kGolden / "tiny/audio_vae", at::kCPU);
  return vae;
}

at::Tensor golden_tensor(const std::string& file, const std::string& name) {
  return io::load_tensor(io::SafetensorsFile::open(kGolden / file), name);
}

void check_parity(const metrics::TensorDiff& d, const char* what) {
  qInfo("%s: rel L2 %.3e, max abs %.3e%s", what, d.rel_l2, d.max_abs,
        d.bitwise_equal ? " (bitwise equal)" : "");
  QVERIFY2(d.finite, what);
  QVERIFY2(d.rel_l2 <= kRelL2, qPrintable(QString("%1 rel L2 %2").arg(what).arg(d.rel_l2)));
  QVERIFY2(d.max_abs <= kMaxAbs, qPrintable(QString("%1 max abs %2").arg(what).arg(d.max_abs)));
}

void check_table(const std::vector<model::VaeParamSpec>& specs, const fs::path& weights) {
  auto file = io::SafetensorsFile::open(weights);
  QCOMPARE(specs.size(), file.tensors().size());
  for (const auto& spec : specs) {
    const io::TensorInfo* info = file.find(spec.name);
    QVERIFY2(info != nullptr, spec.name.c_str());
    QVERIFY2(info->shape == spec.shape, spec.name.c_str());
    QCOMPARE(info->dtype, io::DType::F32);
  }
}

model::VideoTiling tiling_of(const std::string& name) {
  model::VideoTiling t;
  if (name == "video-tiles") {  // the golden file was decoded with 32 px tiles, 16 px overlaps
    t.tile_height = t.tile_width = 32;
    t.min_overlap_height = t.min_overlap_width = 16;
  }
  return t;
}

}  // namespace

class DecoderParity : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { at::set_num_threads(2); }

  // Every tensor diffusers saved is in the tables, with its shape, and nothing else.
  void parameter_tables_match_diffusers_checkpoints() {
    check_table(model::video_vae_parameter_specs(golden_video().config()),
                kGolden / "tiny/vae/diffusion_pytorch_model.safetensors");
    check_table(model::audio_vae_parameter_specs(golden_audio().config()),
                kGolden / "tiny/audio_vae/diffusion_pytorch_model.safetensors");
  }

  // The golden models are the tiny decoder preset (statistics aside).
  void golden_configs_are_the_tiny_preset() {
    model::DecoderPreset tiny = model::find_decoder_preset("tiny");
    model::VideoVaeConfig v = golden_video().config();
    model::AudioVaeConfig a = golden_audio().config();
    QCOMPARE(v.latents_mean.size(), std::size_t(24));
    QVERIFY(v.latents_std != tiny.vae.latents_std);  // non-trivial statistics under test
    v.latents_mean = tiny.vae.latents_mean;
    v.latents_std = tiny.vae.latents_std;
    a.latents_mean = tiny.audio_vae.latents_mean;
    a.latents_std = tiny.audio_vae.latents_std;
    QCOMPARE(QString::fromStdString(v.describe()), QString::fromStdString(tiny.vae.describe()));
    QCOMPARE(QString::fromStdString(a.describe()),
             QString::fromStdString(tiny.audio_vae.describe()));
    QCOMPARE(v.spatial_ratio(), 16);
    QCOMPARE(v.temporal_ratio(), 4);
    QCOMPARE(v.tokens_chunk_size(), 5);
    QCOMPARE(v.frame_pre_padding(), 3);
    QCOMPARE(v.token_overlap(), 2);
    QCOMPARE(v.frame_overlap(), 5);
    QCOMPARE(a.hop_length(), 800);
  }

  void video_matches_diffusers_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("12 latent frames: two chunks, crossfade") << "video-chunks";
    QTest::newRow("3 latent frames, 32 px tiles: padding, 2-D blending") << "video-tiles";
    QTest::newRow("272 px wide: two default tiles") << "video-wide";
  }
  void video_matches_diffusers() {
    QFETCH(QString, name);
    const std::string file = name.toStdString() + ".safetensors";
    model::DecodeOptions options;
    options.tiling = tiling_of(name.toStdString());
    at::Tensor video = model::decode_video(golden_video(), golden_tensor(file, "latents"), options);
    check_parity(metrics::diff_tensors(video, golden_tensor(file, "video"), file),
                 qPrintable(name));
    QVERIFY(video.min().item<double>() >= 0.0 && video.max().item<double>() <= 1.0);
  }

  // Before the pixel de-normalisation and clamp: nothing hidden by the clamp.
  void raw_video_matches_diffusers() {
    at::Tensor raw = model::decode_video_raw(golden_video(),
                                             golden_tensor("video-chunks.safetensors", "latents"));
    check_parity(
        metrics::diff_tensors(raw, golden_tensor("video-chunks.safetensors", "video_raw"), "raw"),
        "video-chunks raw");
  }

  void audio_matches_diffusers() {
    at::Tensor audio =
        model::decode_audio(golden_audio(), golden_tensor("audio.safetensors", "audio_latents"));
    QCOMPARE(audio.sizes().vec(), (std::vector<int64_t>{1, 2, 37 * 800}));
    check_parity(metrics::diff_tensors(audio, golden_tensor("audio.safetensors", "audio"), "audio"),
                 "audio");
  }

  // Stage traces of small inputs: one ViT clip, and the BigVGAN on three latents.
  void traces_match_diffusers() {
    const std::string f = "traces.safetensors";
    const auto& vc = golden_video().config();
    at::Tensor z = golden_tensor(f, "video_latents");
    z = z * at::tensor(vc.latents_std).to(at::kFloat).view({1, -1, 1, 1, 1}) +
        at::tensor(vc.latents_mean).to(at::kFloat).view({1, -1, 1, 1, 1});
    check_parity(metrics::diff_tensors(golden_video().decode_clip(z),
                                       golden_tensor(f, "video_clip"), "clip"),
                 "trace video clip");
    const auto& ac = golden_audio().config();
    at::Tensor a = golden_tensor(f, "audio_latents");
    a = a * at::tensor(ac.latents_std).to(at::kFloat).view({1, -1, 1}) +
        at::tensor(ac.latents_mean).to(at::kFloat).view({1, -1, 1});
    check_parity(
        metrics::diff_tensors(golden_audio().decode(a), golden_tensor(f, "audio_decoded"), "audio"),
        "trace audio");
  }

  // For the record: diffusers' own CUDA decode (float16 autocast) is within fp16 distance.
  void cpu_decode_is_near_the_cuda_fp16_record() {
    const std::string f = "video-chunks-cuda.safetensors";
    at::Tensor video = model::decode_video(golden_video(), golden_tensor(f, "latents"));
    auto d = metrics::diff_tensors(video, golden_tensor(f, "video"), f);
    qInfo("CPU vs diffusers CUDA fp16 autocast: rel L2 %.3e, max abs %.3e", d.rel_l2, d.max_abs);
    QVERIFY(d.finite && d.rel_l2 < 2e-3 && d.rel_l2 > 0);
  }

  // The check can fail: no tiling, or statistics applied the wrong way round, land far off.
  void tolerance_detects_changes() {
    const std::string f = "video-wide.safetensors";
    model::DecodeOptions untiled;
    untiled.tiling.enabled = false;
    at::Tensor video = model::decode_video(golden_video(), golden_tensor(f, "latents"), untiled);
    QVERIFY(metrics::diff_tensors(video, golden_tensor(f, "video"), f).rel_l2 > 1e-3);

    model::AudioVaeConfig swapped = golden_audio().config();
    std::swap(swapped.latents_mean, swapped.latents_std);
    auto tensors = model::load_decoder_tensors(kGolden / "tiny/audio_vae",
                                               model::audio_vae_parameter_specs(swapped), at::kCPU);
    model::AudioVaeDecoder wrong(swapped, std::move(tensors));
    at::Tensor audio =
        model::decode_audio(wrong, golden_tensor("audio.safetensors", "audio_latents"));
    QVERIFY(metrics::diff_tensors(audio, golden_tensor("audio.safetensors", "audio"), "a").rel_l2 >
            1e-3);
  }

  // The fused CPU activation against PyTorch's operators: lengths 1, 2, odd, across segments.
  void fused_activation_matches_reference_data() {
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("length");
    QTest::newRow("1 sample") << 1 << 1 << 1;
    QTest::newRow("2 samples") << 2 << 3 << 2;
    QTest::newRow("7 samples") << 1 << 2 << 7;
    QTest::newRow("4097 samples (two segments)") << 1 << 1 << 4097;
    QTest::newRow("stereo, 16 channels, 9000 samples") << 2 << 16 << 9000;
  }
  void fused_activation_matches_reference() {
    QFETCH(int, batch);
    QFETCH(int, channels);
    QFETCH(int, length);
    at::Generator gen =
        at::detail::createCPUGenerator(static_cast<uint64_t>(length) * 31 + channels);
    model::AntiAliasedSnake p;
    p.alpha = at::exp(at::mul(at::randn({1, channels, 1}, gen), 0.3));
    p.recip_beta =
        at::reciprocal(at::add(at::exp(at::mul(at::randn({1, channels, 1}, gen), 0.3)), 1e-9));
    p.up_filter = model::kaiser_sinc_filter(0.25, 0.3, 12).expand({channels, -1, -1}).contiguous();
    p.down_filter = at::add(p.up_filter, at::mul(at::randn({channels, 1, 12}, gen), 0.01));
    at::Tensor x = at::mul(at::randn({batch, channels, length}, gen), 2.0);
    at::Tensor want = model::anti_aliased_snake_reference(x, p);
    at::Tensor got = model::anti_aliased_snake_fused(x, p);
    auto d = metrics::diff_tensors(got, want, "activation");
    QVERIFY(d.finite);
    QVERIFY2(d.rel_l2 <= 1e-6 && d.max_abs <= 1e-5,
             qPrintable(QString("rel L2 %1 max abs %2").arg(d.rel_l2).arg(d.max_abs)));
    // A 1 % filter gain must be noticed.
    p.down_filter = at::mul(p.down_filter, 1.01);
    QVERIFY(metrics::diff_tensors(model::anti_aliased_snake_fused(x, p), want, "gain").rel_l2 >
            1e-3);
  }

  void stored_filters_equal_computed_ones() {
    auto file =
        io::SafetensorsFile::open(kGolden / "tiny/audio_vae/diffusion_pytorch_model.safetensors");
    at::Tensor stored = io::load_tensor(file, "decoder.activation_post.upsample.filter");
    at::Tensor computed = model::kaiser_sinc_filter(0.25, 0.3, 12);
    QVERIFY(at::allclose(stored, computed, 0, 1e-7));
    QVERIFY(std::abs(computed.sum().item<double>() - 1.0) < 1e-6);
  }

  void refuses_bad_latents() {
    at::Tensor ok = golden_tensor("video-chunks.safetensors", "latents");
    expect_input_error([&] { model::decode_video(golden_video(), ok.narrow(2, 0, 2)); },
                       "too few latent frames");
    expect_input_error([&] { model::decode_video(golden_video(), ok.narrow(1, 0, 4)); }, "latents");
    expect_input_error(
        [&] {
          model::decode_audio(golden_audio(), at::zeros({2, 31, 5}));
        },
        "audio_latents");
    model::DecodeOptions on;
    on.video_autocast = model::DecodeOptions::Autocast::on;
    expect_input_error([&] { model::decode_video(golden_video(), ok, on); }, "CUDA");
    model::DecodeOptions odd;
    odd.tiling.tile_width = 100;
    expect_input_error([&] { model::decode_video(golden_video(), ok, odd); }, "multiple of 16");
    model::AudioVaeConfig no_stats = golden_audio().config();
    no_stats.latents_mean.clear();
    no_stats.latents_std.clear();
    model::AudioVaeDecoder bare(
        no_stats,
        model::load_decoder_tensors(kGolden / "tiny/audio_vae",
                                    model::audio_vae_parameter_specs(no_stats), at::kCPU));
    expect_input_error([&] { model::decode_audio(bare, at::zeros({2, 32, 3})); }, "latents_mean");
  }

  void refuses_wrong_checkpoints() {
    // The video VAE's tensors under the audio VAE's table.
    expect_input_error(
        [&] {
          model::load_decoder_tensors(kGolden / "tiny/vae",
                                      model::audio_vae_parameter_specs(golden_audio().config()),
                                      at::kCPU);
        },
        "unexpected tensor");
    // A config whose ViT is wider than the stored one.
    model::VideoVaeConfig wide = golden_video().config();
    wide.decoder_attention_head_dim = 32;
    expect_input_error(
        [&] {
          model::load_decoder_tensors(kGolden / "tiny/vae", model::video_vae_parameter_specs(wide),
                                      at::kCPU);
        },
        "has shape");
    expect_input_error([&] { model::resolve_vae_dir(kGolden / "tiny/audio_vae"); },
                       "AutoencoderKLMiniMaxH3");
  }

  // init-model writes decoders that load and decode to finite media mostly inside the clamps,
  // deterministically, without touching the transformer's bytes.
  void init_model_writes_usable_decoders() {
    const fs::path a = temp_dir("a"), b = temp_dir("b"), none = temp_dir("none");
    model::InitModelParams params;
    params.preset = model::find_preset("tiny");
    params.seed = 7;
    model::init_model(a, params);
    model::init_model(b, params);
    params.decoders = "none";
    model::init_model(none, params);
    QVERIFY(!fs::exists(none / "vae"));
    auto bytes = [](const fs::path& p) {
      std::ifstream in(p, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::string tw = "transformer/diffusion_pytorch_model.safetensors";
    QVERIFY(bytes(a / tw) == bytes(none / tw));
    for (const char* f :
         {"vae/diffusion_pytorch_model.safetensors", "vae/config.json",
          "audio_vae/diffusion_pytorch_model.safetensors", "audio_vae/config.json"}) {
      QVERIFY2(bytes(a / f) == bytes(b / f), f);
    }
    const model::Decoders d = model::load_decoders(a, at::kCPU, true, true);
    at::Generator gen = at::detail::createCPUGenerator(3);
    at::Tensor video = model::decode_video(*d.video, at::randn({1, 24, 7, 2, 3}, gen));
    QCOMPARE(video.sizes().vec(), (std::vector<int64_t>{1, 3, 22, 32, 48}));
    const double clamped =
        at::logical_or(video == 0, video == 1).to(at::kFloat).mean().item<double>();
    QVERIFY2(clamped < 0.2, qPrintable(QString::number(clamped)));
    at::Tensor audio = model::decode_audio(*d.audio, at::randn({2, 32, 5}, gen));
    QCOMPARE(audio.sizes().vec(), (std::vector<int64_t>{1, 2, 4000}));
    QVERIFY(at::isfinite(audio).all().item<bool>() && at::isfinite(video).all().item<bool>());
    const double saturated = (audio.abs() >= 1).to(at::kFloat).mean().item<double>();
    QVERIFY2(saturated < 0.05, qPrintable(QString::number(saturated)));
    QVERIFY(audio.std().item<double>() > 1e-3);
    for (const auto& dir : {a, b, none}) fs::remove_all(dir);
  }
};

QTEST_APPLESS_MAIN(DecoderParity)
#include "test_decoder_parity.moc"
