// The calibration record of a contract and its rule: worst-variant-margin gives the bounds
// computed by hand (finite spread, zero spread with infinite PSNR, a spread finer than the
// 8-bit cap, no audio); a calibrated contract round-trips through its canonical text, its
// digest covers the record, and every malformed or tampered field is refused naming the file
// and the field.
#include <QtTest>
#include <limits>
#include <string>

#include "core/common/error.h"
#include "core/contract/calibration.h"
#include "core/contract/contract.h"

using h3p::InputError;
using nlohmann::json;
namespace contract = h3p::contract;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const std::string kSha(64, 'a');

contract::CalibrationFigure figure(const std::string& variant, std::uint64_t seed, double psnr,
                                   double ssim, double temporal, std::optional<double> audio) {
  contract::CalibrationFigure f;
  f.variant = variant;
  f.seed = seed;
  f.psnr_db = psnr;
  f.ssim = ssim;
  f.temporal_rmse = temporal;
  f.audio_rel_l2 = audio;
  f.step_video_rel_l2_max = 1e-3;
  return f;
}

// A contract (seeds 42, 43) calibrated on seeds 100, 101 with two variants.
contract::Contract calibrated() {
  contract::Contract c;
  c.name = "unit-calibrated";
  c.model = "preset:tiny";
  c.prompt = "a kite";
  c.text_tokens = 12;
  c.seeds = {42, 43};
  c.frames = 22;
  c.width = 64;
  c.height = 64;
  c.fps = 24;
  c.audio_sample_rate = 32000;
  c.sampling_steps = 3;
  c.video_shift = 12;
  c.audio_shift = 3;
  contract::Calibration cal;
  cal.variants = {"provider:attention=math", "candidate"};
  cal.seeds = {100, 101};
  cal.rule_text = contract::rule_text(cal.rule, cal.margins);
  cal.runs_contract_digest = std::string(64, 'b');
  for (std::uint64_t seed : cal.seeds) {
    for (const std::string spec : {"provider", "provider:attention=math", "candidate"}) {
      cal.runs.push_back({spec, seed, "unit-calibration/x/seed-" + std::to_string(seed) +
                                          "/manifest.json", kSha});
    }
  }
  cal.figures = {figure("provider:attention=math", 100, kInf, 1.0, 0.0, 0.0),
                 figure("provider:attention=math", 101, 48.5, 0.9991, 2e-3, 0.01),
                 figure("candidate", 100, 45.0, 0.998, 4e-3, 0.02),
                 figure("candidate", 101, 52.0, 0.9995, 1e-3, 0.005)};
  c.bounds = contract::calibrated_bounds(cal.rule, cal.figures, cal.margins);
  c.calibration = cal;
  return c;
}

// Applies `value` at a JSON pointer of the calibrated contract's canonical form ("<remove>"
// removes it).
json tampered(const std::string& pointer, const json& value) {
  json j = contract::to_json(calibrated());
  const json::json_pointer p(pointer);
  if (value.is_string() && value.get<std::string>() == "<remove>") {
    json& parent = j.at(p.parent_pointer());
    if (parent.is_array()) {
      parent.erase(static_cast<std::size_t>(std::stoul(p.back())));
    } else {
      parent.erase(p.back());
    }
  } else {
    j[p] = value;
  }
  return j;
}

}  // namespace

class TestCalibration : public QObject {
  Q_OBJECT

 private slots:
  void rule_takes_the_worst_figure_with_margins() {
    const contract::Contract c = calibrated();
    // Worst: PSNR 45 (candidate seed 100), SSIM 0.998, temporal 4e-3, audio 0.02.
    QCOMPARE(c.bounds.psnr_db_min, 45.0 - 1.0);
    QCOMPARE(c.bounds.ssim_min, 0.998 - 1e-3);
    QCOMPARE(c.bounds.temporal_rmse_max, 4e-3 * 1.5);
    QCOMPARE(c.bounds.audio_rel_l2_max, 0.02 * 1.5);
    const contract::WorstFigures w = contract::worst_figures(c.calibration->figures);
    QCOMPARE(w.psnr_db, 45.0);
    QCOMPARE(*w.audio_rel_l2, 0.02);
  }

  void zero_spread_gives_the_quantisation_floor() {
    // Variants bitwise identical to the provider: infinite PSNR, SSIM 1, no difference at all.
    const contract::CalibrationMargins m;
    const auto b = contract::calibrated_bounds(
        "worst-variant-margin", {figure("provider:attention=math", 7, kInf, 1.0, 0.0, 0.0)}, m);
    QCOMPARE(b.psnr_db_min, m.psnr_db_cap - m.psnr_db);
    QCOMPARE(b.ssim_min, 1.0 - m.ssim);
    QCOMPARE(b.temporal_rmse_max, m.temporal_rmse_floor);
    QCOMPARE(b.audio_rel_l2_max, m.audio_rel_l2_floor);
    QVERIFY(std::isfinite(b.psnr_db_min));
  }

  void spread_finer_than_eight_bits_is_capped_and_no_audio_takes_the_floor() {
    contract::CalibrationMargins m;
    m.psnr_db = 2;
    m.ratio = 1;
    const auto b = contract::calibrated_bounds(
        "worst-variant-margin", {figure("v", 1, 70.0, 0.99999, 1e-4, std::nullopt)}, m);
    QCOMPARE(b.psnr_db_min, m.psnr_db_cap - 2);
    QCOMPARE(b.temporal_rmse_max, m.temporal_rmse_floor);  // 2e-4 is below the floor
    QCOMPARE(b.audio_rel_l2_max, m.audio_rel_l2_floor);
    // A low SSIM never gives a bound below -1.
    QCOMPARE(contract::calibrated_bounds("worst-variant-margin", {figure("v", 1, 3, -1, 0.5, 0.5)}, m)
                 .ssim_min,
             -1.0);
    QVERIFY_THROWS_EXCEPTION(InputError, contract::calibrated_bounds("best-case", {}, m));
  }

  void rule_text_states_the_margins() {
    contract::CalibrationMargins m;
    m.psnr_db = 2.5;
    const std::string text = contract::rule_text("worst-variant-margin", m);
    QVERIFY(text.find("- 2.5 dB") != std::string::npos);
    QVERIFY(text.find("58.92") != std::string::npos);
    QVERIFY(text != contract::rule_text("worst-variant-margin", {}));
  }

  void calibrated_contract_round_trips_and_its_digest_covers_the_record() {
    const contract::Contract c = calibrated();
    const json text = json::parse(contract::to_json(c).dump(2));
    QVERIFY(text["calibration"]["figures"][0]["psnr_db"] == "inf");
    const contract::Contract back = contract::parse_contract(text, "");
    QVERIFY(back == c);
    QCOMPARE(contract::contract_digest(back), contract::contract_digest(c));
    // The record is in the digest: another manifest digest, another contract digest.
    contract::Contract other = c;
    other.calibration->runs[0].manifest_sha256 = std::string(64, 'c');
    QVERIFY(contract::contract_digest(other) != contract::contract_digest(c));
    // Without it, the form (and so the digest) is that of a hand-written contract.
    contract::Contract plain = c;
    plain.calibration.reset();
    QVERIFY(!contract::to_json(plain).contains("calibration"));
    QVERIFY(contract::contract_digest(plain) != contract::contract_digest(c));
  }

  void malformed_calibration_is_refused_naming_file_and_field_data() {
    QTest::addColumn<QString>("pointer");
    QTest::addColumn<QString>("value");  // JSON text, or <remove>
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("what");
    auto row = [](const char* name, const char* pointer, const char* value, const char* field,
                  const char* what) {
      QTest::newRow(name) << pointer << value << field << what;
    };
    row("not object", "/calibration", "[]", "calibration", "must be an object");
    row("unknown key", "/calibration/extra", "1", "calibration.extra", "unknown field");
    row("unknown rule", "/calibration/rule", "\"best-case\"", "calibration.rule", "unknown rule");
    row("rule text edited", "/calibration/rule_text", "\"anything goes\"", "calibration.rule_text",
        "is not the statement");
    row("margin negative", "/calibration/margins/ratio", "-1", "calibration.margins.ratio", ">= 0");
    row("seed overlaps", "/calibration/seeds/0", "43", "calibration.seeds",
        "seed 43 is also a seed of the contract");
    row("seed twice", "/calibration/seeds/1", "100", "calibration.seeds", "appears twice");
    row("variant is provider", "/calibration/variants/0", "\"provider\"", "calibration.variants",
        "the provider itself");
    row("no variants", "/calibration/variants", "[]", "calibration.variants", "must not be empty");
    row("digest not hex", "/calibration/runs_contract_digest", "\"xyz\"",
        "calibration.runs_contract_digest", "64 lower-case hex");
    row("run missing", "/calibration/runs/5", "<remove>", "calibration.runs",
        "no run of 'candidate' on seed 101");
    row("run sha", "/calibration/runs/0/manifest_sha256", "\"00\"",
        "calibration.runs[0].manifest_sha256", "64 lower-case hex");
    row("run absolute", "/calibration/runs/0/manifest", "\"/etc/passwd\"",
        "calibration.runs[0].manifest", "relative");
    row("run foreign", "/calibration/runs/0/impl_spec", "\"plugin:x.so\"",
        "calibration.runs[0].impl_spec", "is not the provider or a variant");
    row("figure missing", "/calibration/figures/3", "<remove>", "calibration.figures",
        "one figure per variant");
    row("figure ssim", "/calibration/figures/0/ssim", "2", "calibration.figures[0].ssim",
        "[-1, 1]");
    row("figure psnr text", "/calibration/figures/1/psnr_db", "\"high\"",
        "calibration.figures[1].psnr_db", "a number or \"inf\"");
    row("figure seed", "/calibration/figures/0/seed", "42", "calibration.figures[0].seed",
        "not a calibration seed");
    row("figure variant", "/calibration/figures/0/variant", "\"provider:gemm=cublaslt\"",
        "calibration.figures[0].variant", "is not a variant");
    row("figure tampered", "/calibration/figures/2/psnr_db", "60", "bounds",
        "do not follow calibration rule");
    row("bounds tightened", "/bounds/psnr_db_min", "50", "bounds", "do not follow calibration rule");
  }

  void malformed_calibration_is_refused_naming_file_and_field() {
    QFETCH(QString, pointer);
    QFETCH(QString, value);
    QFETCH(QString, field);
    QFETCH(QString, what);
    const std::string v = value.toStdString();
    const json j = tampered(pointer.toStdString(), v == "<remove>" ? json(v) : json::parse(v));
    try {
      contract::parse_contract(j, "/x/calibrated.json");
      QFAIL("accepted");
    } catch (const InputError& e) {
      const std::string msg = e.what();
      const std::string want_field = "/x/calibrated.json: field '" + field.toStdString() + "'";
      QVERIFY2(msg.find(want_field) != std::string::npos, msg.c_str());
      QVERIFY2(msg.find(what.toStdString()) != std::string::npos, msg.c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestCalibration)
#include "test_calibration.moc"
