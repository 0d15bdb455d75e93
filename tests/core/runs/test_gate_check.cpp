// The gate as generation checks it (check_generation_gate): not required, skipped, missing,
// malformed, bound to other weights / config / sources, failed, of another candidate or device
// kind, passed; and where gate.json lives by default. Fresh random digests each run.
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/common/error.h"
#include "core/contract/contract.h"
#include "core/io/sha256.h"
#include "core/ops/impl_spec.h"
#include "core/runs/gate.h"

namespace runs = h3p::runs;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string random_digest(std::mt19937_64& rng) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 64; ++i) out += hex[rng() % 16];
  return out;
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// Expects InputError whose message holds every part of `parts`.
template <typename F>
void expect_refusal(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const h3p::InputError& e) {
    const std::string what = e.what();
    for (const auto& part : parts) {
      QVERIFY2(what.find(part) != std::string::npos, (what + " lacks: " + part).c_str());
    }
    return;
  }
  QFAIL("no InputError");
}

}  // namespace

class GateCheck : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir tmp_;
  fs::path model_;
  h3p::contract::Contract contract_;
  runs::ModelIdentity identity_;
  std::mt19937_64 rng_{std::random_device{}()};

  json gate_json(bool passed, const std::string& candidate) {
    return {{"format_version", runs::kGateFormatVersion},
            {"passed", passed},
            {"candidate", candidate},
            {"device", "cpu"},
            {"identity",
             {{"weights_digest", identity_.weights_digest},
              {"config_digest", identity_.config_digest},
              {"sources_digest", identity_.sources_digest}}},
            {"blocks", json::array()}};
  }
  fs::path write_gate(const json& value, const std::string& name = "gate.json") {
    const fs::path path = name == "gate.json" ? model_ / name : fs::path(tmp_.path().toStdString()) / name;
    write_text(path, value.dump(2) + "\n");
    return path;
  }
  json check(const std::string& spec, runs::GateOverride o = {},
             const std::string& device = "cpu") {
    return runs::check_generation_gate(contract_, model_, identity_,
                                       h3p::ops::ImplSpec::parse(spec), device, o);
  }

 private slots:
  void init() {
    model_ = fs::path(tmp_.path().toStdString()) / "model";
    fs::remove_all(model_);
    write_text(model_ / "transformer" / "config.json", "{}\n");
    contract_ = h3p::contract::load_contract(fs::path(H3P_SOURCE_DIR) / "resources" /
                                             "contracts" / "demo.json");
    contract_.require_gate = true;
    identity_.weights_digest = random_digest(rng_);
    identity_.config_digest = random_digest(rng_);
    identity_.sources_digest = random_digest(rng_);
  }

  void default_path_is_next_to_the_model() {
    QCOMPARE(runs::default_gate_path(model_), model_ / "gate.json");
    QCOMPARE(runs::default_gate_path(model_ / "transformer"), model_ / "gate.json");
  }

  void not_required_is_null() {
    contract_.require_gate = false;
    QVERIFY(check("candidate").is_null());
  }

  void skip_is_recorded() {
    const json r = check("candidate", {{}, true});
    QCOMPARE(r.at("skipped").get<bool>(), true);
  }

  void missing_gate_is_refused() {
    expect_refusal([&] { check("provider"); },
                   {(model_ / "gate.json").string(), "requires the gate", "--skip-gate"});
  }

  void passed_gate_is_accepted_and_recorded() {
    const fs::path file = write_gate(gate_json(true, "candidate"));
    const json r = check("candidate");
    QCOMPARE(r.at("digest").get<std::string>(), h3p::io::sha256_file(file));
    QCOMPARE(r.at("passed").get<bool>(), true);
    // A provider run may start under any passed gate of this model.
    QVERIFY(!check("provider").is_null());
  }

  void explicit_gate_file() {
    const fs::path file = write_gate(gate_json(true, "candidate:gemm=provider"), "elsewhere.json");
    const json r = check("candidate:gemm=provider", {file, false});
    QVERIFY(r.at("file").get<std::string>().find("elsewhere.json") != std::string::npos);
  }

  void failed_gate_is_refused() {
    write_gate(gate_json(false, "candidate"));
    expect_refusal([&] { check("candidate"); }, {"gate.json", "field 'passed'", "the gate failed"});
  }

  void other_candidate_is_refused() {
    write_gate(gate_json(true, "candidate:attention=provider"));
    expect_refusal([&] { check("candidate"); },
                   {"field 'candidate'", "candidate:attention=provider"});
  }

  void other_device_kind_is_refused() {
    json g = gate_json(true, "candidate");
    write_gate(g);
    // The CPU candidate's gate does not qualify the candidate's CUDA kernels ...
    expect_refusal([&] { check("candidate", {}, "cuda"); },
                   {"gate.json", "field 'device'", "'cpu'", "--device cuda"});
    // ... while a provider run may start under it anywhere.
    QVERIFY(!check("provider", {}, "cuda:1").is_null());
    // Another GPU of the same kind is the same qualification.
    g["device"] = "cuda:0";
    write_gate(g);
    QVERIFY(!check("candidate", {}, "cuda:1").is_null());
    expect_refusal([&] { check("candidate"); }, {"field 'device'", "'cuda:0'", "--device cpu"});
  }

  void other_identity_is_refused_data() {
    QTest::addColumn<QString>("field");
    QTest::newRow("weights") << "weights_digest";
    QTest::newRow("config") << "config_digest";
    QTest::newRow("sources") << "sources_digest";
  }
  void other_identity_is_refused() {
    QFETCH(QString, field);
    json g = gate_json(true, "candidate");
    const std::string other = random_digest(rng_);
    g["identity"][field.toStdString()] = other;
    write_gate(g);
    expect_refusal([&] { check("candidate"); },
                   {"identity." + field.toStdString(), other, "run the gate again"});
  }

  void malformed_gate_is_refused_data() {
    QTest::addColumn<QString>("what");
    QTest::newRow("truncated") << "truncated";
    QTest::newRow("version") << "version";
    QTest::newRow("no identity") << "no identity";
    QTest::newRow("bad digest") << "bad digest";
    QTest::newRow("passed not bool") << "passed not bool";
    QTest::newRow("no device") << "no device";
    QTest::newRow("device not string") << "device not string";
  }
  void malformed_gate_is_refused() {
    QFETCH(QString, what);
    json g = gate_json(true, "candidate");
    std::string text;
    if (what == "truncated") {
      text = g.dump(2);
      text.resize(text.size() / 2);
    } else {
      if (what == "version") g["format_version"] = runs::kGateFormatVersion + 1;
      if (what == "no identity") g.erase("identity");
      if (what == "bad digest") g["identity"]["config_digest"] = "ABC";
      if (what == "passed not bool") g["passed"] = "yes";
      if (what == "no device") g.erase("device");
      if (what == "device not string") g["device"] = 0;
      text = g.dump(2);
    }
    write_text(model_ / "gate.json", text);
    expect_refusal([&] { check("candidate"); }, {(model_ / "gate.json").string()});
  }
};

QTEST_APPLESS_MAIN(GateCheck)
#include "test_gate_check.moc"
