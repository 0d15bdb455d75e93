// The decode estimate printed before a decode: work that is short at rates every CPU exceeds is
// reported by that bound without measuring this CPU; full-size work is measured; other devices
// get no time.
#include <QtTest/QtTest>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/core/model/model_test_util.h"
#include "core/model/decode_estimate.h"
#include "core/model/init_decoders.h"
#include "core/model/presets.h"

using namespace h3p;
using test::temp_dir;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// describe_decode's line for decoders of `preset` (configs and seed records only).
std::string estimate(const std::string& preset, const std::vector<int64_t>& video,
                     const std::vector<int64_t>& audio, const at::Device& device) {
  const auto dir = temp_dir("estimate-" + preset);
  model::init_decoders(dir, model::find_decoder_preset(preset), 7, /*seeded=*/true);
  const std::string line = model::describe_decode(dir, video, audio, device);
  std::filesystem::remove_all(dir);
  return line;
}

}  // namespace

class TestDecodeEstimate : public QObject {
  Q_OBJECT

 private slots:
  // The demo's latents on the tiny decoders: short at the floor rates, not measured.
  void smallWorkIsNotMeasured() {
    const std::string line =
        estimate("tiny", {1, 24, 37, 6, 8}, {2, 32, 207}, at::Device(at::kCPU));
    QVERIFY2(contains(line, "on cpu: at most "), line.c_str());
    QVERIFY2(contains(line, " s (at 2 GFLOP/s and 0.5 GB/s, rates every CPU exceeds"), line.c_str());
    QVERIFY2(contains(line, "not measured"), line.c_str());
    QVERIFY2(!contains(line, "measured on this CPU"), line.c_str());
  }

  // The released decoders at 1344x768x124 (latents 32 x 48 x 84): measured, and long.
  void fullSizeWorkIsMeasured() {
    const std::string line =
        estimate("released", {1, 48, 32, 48, 84}, {2, 64, 4960}, at::Device(at::kCPU));
    QVERIFY2(contains(line, "measured on this CPU at "), line.c_str());
    QVERIFY2(contains(line, " min (") || contains(line, " h ("), line.c_str());
  }

  // Off the CPU the line names the work and the device only.
  void otherDevicesGetNoTime() {
    const std::string line = estimate("tiny", {1, 24, 37, 6, 8}, {}, at::Device(at::kCUDA));
    QVERIFY2(contains(line, "decoding video latents [1, 24, 37, 6, 8] (32-wide 2-block decoder"),
             line.c_str());
    QVERIFY2(line.size() >= 8 && line.substr(line.size() - 8) == " on cuda", line.c_str());
  }
};

QTEST_APPLESS_MAIN(TestDecodeEstimate)
#include "test_decode_estimate.moc"
