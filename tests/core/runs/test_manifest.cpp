// Model identity (weights/config digests pinned to hand-computed values, the compiled-in
// source table consistent with the tree) and the run manifest: round trip, every refusal on
// read, and every field that check_compatible must refuse (of the environment, the device kind).
#include <QTemporaryDir>
#include <QtTest>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "tests/core/file_text.h"
#include "core/common/error.h"
#include "core/io/sha256.h"
#include "core/runs/environment.h"
#include "core/runs/identity.h"
#include "core/runs/manifest.h"

using h3p::InputError;
using nlohmann::json;
namespace runs = h3p::runs;
namespace fs = std::filesystem;
using h3p::test::write_text;
using h3p::test::read_text;

namespace {

std::string hex_of(std::mt19937_64& rng) {
  static const char* digits = "0123456789abcdef";
  std::string out(64, '0');
  for (auto& c : out) c = digits[rng() % 16];
  return out;
}

runs::Manifest sample_manifest(std::mt19937_64& rng) {
  runs::Manifest m;
  m.contract_name = "demo";
  m.contract_digest = hex_of(rng);
  m.impl_spec = "candidate:attention=provider";
  m.seed = rng();
  m.identity.weights_digest = hex_of(rng);
  m.identity.config_digest = hex_of(rng);
  m.identity.source_files = {{"core/model/a.cpp", hex_of(rng)},
                             {"core/ops/b.h", hex_of(rng)},
                             {"kernels/cuda/c.cu", hex_of(rng)}};
  m.identity.sources_digest = runs::sources_digest_of(m.identity.source_files);
  m.environment = runs::environment_info();
  m.params = {{"frames", 124},        {"width", 128},
              {"height", 96},         {"sampling_steps", 50},
              {"video_shift", 12.0},  {"audio_shift", 3.0},
              {"save_inputs", "all"}, {"geometry", {{"latent_frames", 37}, {"rows", {1, 2, 3}}}}};
  m.noise_digest = hex_of(rng);
  m.conditioning_digest = "";
  return m;
}

// Expects `fn` to throw InputError starting "<file>: field '<field>'".
template <typename Fn>
void expect_field_error(Fn fn, const std::string& file, const std::string& field) {
  try {
    fn();
    QFAIL(("accepted; expected a refusal of " + field).c_str());
  } catch (const InputError& e) {
    const std::string prefix = file + ": field '" + field + "'";
    QVERIFY2(std::string(e.what()).starts_with(prefix), e.what());
  }
}

}  // namespace

class TestManifest : public QObject {
  Q_OBJECT

 private:
  std::mt19937_64 rng_;

 private slots:
  void initTestCase() {
    const std::uint64_t seed = std::random_device{}();
    qInfo("seed %llu", static_cast<unsigned long long>(seed));
    rng_.seed(seed);
  }

  void identity_digests_match_hand_computed_values() {
    QTemporaryDir dir;
    const fs::path t(dir.path().toStdString());
    write_text(t / "diffusion_pytorch_model-00002-of-00002.safetensors", "defg");
    write_text(t / "diffusion_pytorch_model-00001-of-00002.safetensors", "abc");
    write_text(t / "diffusion_pytorch_model.safetensors.index.json", "{}");
    write_text(t / "config.json", R"({"a":1})");
    // Not part of the weights digest: other names, temp files, sub-directories.
    write_text(t / "README.md", "x");
    write_text(t / "x.safetensors.tmp-123", "x");
    fs::create_directories(t / "sub");
    write_text(t / "sub/y.safetensors", "x");
    const auto identity = runs::compute_identity(t);
    // Python hashlib over "<name> <sha256>\n" lines in name order, and over config.json.
    QCOMPARE(identity.weights_digest,
             std::string("6c1d03dff313922956b00ea4ac767b9a5441b6fe582973992da26be38e954fce"));
    QCOMPARE(identity.config_digest,
             std::string("015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"));
    QCOMPARE(identity.source_files, runs::compiled_model_sources());
    QCOMPARE(identity.sources_digest, runs::compiled_model_sources_digest());
    // One changed weight byte changes the weights digest only.
    write_text(t / "diffusion_pytorch_model-00001-of-00002.safetensors", "abd");
    const auto changed = runs::compute_identity(t);
    QVERIFY(changed.weights_digest != identity.weights_digest);
    QCOMPARE(changed.config_digest, identity.config_digest);
  }

  void identity_refuses_incomplete_directories() {
    QTemporaryDir dir;
    const fs::path t(dir.path().toStdString());
    QVERIFY_THROWS_EXCEPTION(InputError, runs::compute_identity(t / "absent"));
    write_text(t / "config.json", "{}");
    QVERIFY_THROWS_EXCEPTION(InputError, runs::compute_identity(t));  // no weights
    fs::remove(t / "config.json");
    write_text(t / "diffusion_pytorch_model.safetensors", "abc");
    try {
      runs::compute_identity(t);
      QFAIL("accepted a directory without config.json");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("config.json") != std::string::npos, e.what());
    }
  }

  void compiled_sources_match_the_tree() {
    const auto& sources = runs::compiled_model_sources();
    QVERIFY(!sources.empty());
    QCOMPARE(runs::sources_digest_of(sources), runs::compiled_model_sources_digest());
    QVERIFY(runs::is_sha256_hex(runs::compiled_model_sources_digest()));
    QVERIFY(sources.contains("kernels/CMakeLists.txt"));
    // Files edited after this binary (or its table) was made are legitimately newer than
    // it; every other file must hash as the table says.
    const auto built =
        std::min(fs::last_write_time("/proc/self/exe"),
                 fs::last_write_time(fs::path(H3P_BINARY_DIR) / "generated/h3p_model_sources.cpp"));
    bool has_model = false;
    for (const auto& [path, sha] : sources) {
      QVERIFY2(path.starts_with("core/model/") || path.starts_with("core/ops/") ||
                   path.starts_with("core/sampling/") || path.starts_with("kernels/"),
               path.c_str());
      has_model = has_model || path.starts_with("core/model/");
      const fs::path file = fs::path(H3P_SOURCE_DIR) / path;
      if (!fs::exists(file) || fs::last_write_time(file) > built) continue;
      QVERIFY2(sha == h3p::io::sha256_file(file), path.c_str());
    }
    QVERIFY(has_model);
  }

  void hash_script_follows_the_digest_rule() {
    // The build step on a tree of three known files, against Python's hashlib.
    QTemporaryDir dir;
    const fs::path root(dir.path().toStdString());
    fs::create_directories(root / "core/model/sub");
    fs::create_directories(root / "kernels");
    write_text(root / "core/model/a.cpp", "abc");
    write_text(root / "core/model/sub/b.h", "defg");
    write_text(root / "kernels/CMakeLists.txt", "x\n");
    write_text(root / "list.txt", "kernels/CMakeLists.txt\ncore/model/sub/b.h\ncore/model/a.cpp\n");
    const fs::path out = root / "out.cpp";
    const std::string command =
        std::string("\"") + H3P_CMAKE_COMMAND + "\" -DSOURCE_ROOT=" + root.string() +
        " -DLIST_FILE=" + (root / "list.txt").string() + " -DOUTPUT=" + out.string() + " -P " +
        H3P_SOURCE_DIR + "/core/runs/hash_model_sources.cmake";
    QCOMPARE(std::system(command.c_str()), 0);
    const std::string text = read_text(out);
    const std::string expected = "0548bb6626e7c66d48a071b2cd821cb9b2b3b0cefc92b0cfe7d786d50ea012ad";
    QVERIFY2(text.find("kModelSourcesDigest[] = \"" + expected + "\"") != std::string::npos,
             text.c_str());
    QVERIFY(text.find("kModelSourceCount = 3;") != std::string::npos);
    // Sorted entries, the same rule as sources_digest_of.
    const std::map<std::string, std::string> files = {
        {"core/model/a.cpp", h3p::io::sha256_hex(std::string_view("abc"))},
        {"core/model/sub/b.h", h3p::io::sha256_hex(std::string_view("defg"))},
        {"kernels/CMakeLists.txt", h3p::io::sha256_hex(std::string_view("x\n"))}};
    QCOMPARE(runs::sources_digest_of(files), expected);
    std::size_t last = 0;
    for (const auto& [path, sha] : files) {
      const std::size_t at = text.find("{\"" + path + "\", \"" + sha + "\"}");
      QVERIFY2(at != std::string::npos && at > last, path.c_str());
      last = at;
    }
  }

  void environment_describes_the_machine() {
    const json env = runs::environment_info();
    for (const char* key : {"torch_version", "num_threads", "cpu_available", "cuda_available",
                            "cuda_device_count", "hostname", "compiler"}) {
      QVERIFY2(env.contains(key), key);
    }
    QVERIFY(env["num_threads"].get<int>() >= 1);
  }

  void manifest_round_trips() {
    QTemporaryDir dir;
    const fs::path file = fs::path(dir.path().toStdString()) / "manifest.json";
    const auto m = sample_manifest(rng_);
    const std::string sha = runs::write_manifest(file, m);
    QCOMPARE(sha, h3p::io::sha256_file(file));
    QVERIFY(read_text(file).ends_with("}\n"));
    const auto back = runs::read_manifest(file);
    QVERIFY(back == m);
    runs::check_compatible(back, m, file);
    // Identity alone round-trips too.
    QVERIFY(runs::identity_from_json(runs::identity_to_json(m.identity), "x") == m.identity);
  }

  void manifest_read_refusals_data() {
    QTest::addColumn<QString>("field");  // the key to change ("" for whole-file damage)
    QTest::addColumn<QString>("value");  // JSON text, "<remove>", or a damage keyword
    QTest::addColumn<QString>("named");  // the field the message names ("" = file only)
    QTest::newRow("unknown key") << "extra"
                                 << "1"
                                 << "extra";
    QTest::newRow("format_version") << "format_version"
                                    << "2"
                                    << "format_version";
    QTest::newRow("format_version missing") << "format_version"
                                            << "<remove>"
                                            << "format_version";
    QTest::newRow("contract_name empty") << "contract_name"
                                         << R"("")"
                                         << "contract_name";
    QTest::newRow("contract_digest short") << "contract_digest"
                                           << R"("abc")"
                                           << "contract_digest";
    QTest::newRow("impl_spec number") << "impl_spec"
                                      << "1"
                                      << "impl_spec";
    QTest::newRow("seed negative") << "seed"
                                   << "-1"
                                   << "seed";
    QTest::newRow("seed missing") << "seed"
                                  << "<remove>"
                                  << "seed";
    QTest::newRow("identity missing") << "identity"
                                      << "<remove>"
                                      << "identity";
    QTest::newRow("environment array") << "environment"
                                       << "[]"
                                       << "environment";
    QTest::newRow("params missing") << "params"
                                    << "<remove>"
                                    << "params";
    QTest::newRow("noise_digest upper") << "noise_digest"
                                        << "upper"
                                        << "noise_digest";
    QTest::newRow("conditioning missing") << "conditioning_digest"
                                          << "<remove>"
                                          << "conditioning_digest";
    QTest::newRow("weights digest") << "identity.weights_digest"
                                    << R"("zz")"
                                    << "identity.weights_digest";
    QTest::newRow("identity unknown") << "identity.commit"
                                      << R"("abc")"
                                      << "identity.commit";
    QTest::newRow("source file edited") << "identity.source_files"
                                        << "edit"
                                        << "identity.sources_digest";
    QTest::newRow("source file digest") << "identity.source_files"
                                        << "bad"
                                        << "identity.source_files['core/model/a.cpp']";
    QTest::newRow("truncated") << ""
                               << "truncate"
                               << "";
    QTest::newRow("duplicate key") << ""
                                   << "duplicate"
                                   << "";
    QTest::newRow("empty") << ""
                           << "empty"
                           << "";
    QTest::newRow("absent") << ""
                            << "absent"
                            << "";
  }

  void manifest_read_refusals() {
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(QString, named);
    QTemporaryDir dir;
    const fs::path file = fs::path(dir.path().toStdString()) / "manifest.json";
    json j = runs::manifest_to_json(sample_manifest(rng_));
    std::string text;
    const std::string f = field.toStdString();
    const std::string v = value.toStdString();
    if (f.empty()) {
      text = j.dump(2);
      if (v == "truncate") text = text.substr(0, text.size() - 7);
      if (v == "duplicate") text.insert(1, R"("seed": 1,)");
      if (v == "empty") text.clear();
    } else {
      json* target = &j;
      std::string key = f;
      if (auto dot = f.find('.'); dot != std::string::npos) {
        target = &j[f.substr(0, dot)];
        key = f.substr(dot + 1);
      }
      if (v == "<remove>") {
        target->erase(key);
      } else if (v == "upper") {
        std::string d = (*target)[key].get<std::string>();
        for (auto& c : d) c = static_cast<char>(std::toupper(c));
        (*target)[key] = d;
      } else if (v == "edit") {
        (*target)[key]["core/model/a.cpp"] = std::string(64, 'e');
      } else if (v == "bad") {
        (*target)[key]["core/model/a.cpp"] = "nothex";
      } else {
        (*target)[key] = json::parse(v);
      }
      text = j.dump(2);
    }
    if (v != "absent") write_text(file, text);
    try {
      runs::read_manifest(file);
      QFAIL("accepted");
    } catch (const InputError& e) {
      const std::string message = e.what();
      const std::string prefix =
          named.isEmpty() ? file.string() : file.string() + ": field '" + named.toStdString() + "'";
      QVERIFY2(message.find(prefix) != std::string::npos, message.c_str());
    }
  }

  void compatible_despite_environment() {
    const auto m = sample_manifest(rng_);
    auto other = m;
    other.environment = {{"hostname", "elsewhere"}, {"torch_version", "2.11.0"}};
    runs::check_compatible(m, other, "/r/manifest.json");
    // Input digests are compared only when both sides know them.
    other.noise_digest.clear();
    other.conditioning_digest = hex_of(rng_);
    runs::check_compatible(m, other, "/r/manifest.json");
  }

  void device_kind_must_match() {
    auto m = sample_manifest(rng_);
    m.environment["device"] = "cuda:0";
    auto other = m;
    other.environment["device"] = "cuda:1";  // another GPU of the same kind continues the run
    runs::check_compatible(m, other, "/r/manifest.json");
    other.environment.erase("device");  // a run that never recorded its device
    runs::check_compatible(m, other, "/r/manifest.json");
    other.environment["device"] = "cpu";
    expect_field_error([&] { runs::check_compatible(m, other, "/r/manifest.json"); },
                       "/r/manifest.json", "environment.device");
    try {
      runs::check_compatible(m, other, "/r/manifest.json");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("--device cuda") != std::string::npos, e.what());
    }
  }

  void incompatible_field_is_named_data() {
    QTest::addColumn<QString>("named");
    for (const char* field :
         {"format_version", "identity.weights_digest", "identity.config_digest",
          "identity.source_files['core/ops/b.h']", "identity.source_files['core/new.cpp']",
          "identity.source_files['kernels/cuda/c.cu'] removed", "contract_name", "contract_digest",
          "impl_spec", "seed", "params.sampling_steps", "params.geometry.rows[1]",
          "params.save_inputs added", "noise_digest"}) {
      QTest::newRow(field) << field;
    }
  }

  void incompatible_field_is_named() {
    QFETCH(QString, named);
    const std::string field = named.toStdString();
    const auto m = sample_manifest(rng_);
    auto other = m;
    std::string expected = field;
    auto& files = other.identity.source_files;
    if (field == "format_version") other.format_version = 2;
    if (field == "identity.weights_digest") other.identity.weights_digest = hex_of(rng_);
    if (field == "identity.config_digest") other.identity.config_digest = hex_of(rng_);
    if (field == "identity.source_files['core/ops/b.h']") files["core/ops/b.h"] = hex_of(rng_);
    if (field == "identity.source_files['core/new.cpp']") files["core/new.cpp"] = hex_of(rng_);
    if (field.ends_with(" removed")) {
      files.erase("kernels/cuda/c.cu");
      expected = "identity.source_files['kernels/cuda/c.cu']";
    }
    other.identity.sources_digest = runs::sources_digest_of(files);
    if (field == "contract_name") other.contract_name = "demo2";
    if (field == "contract_digest") other.contract_digest = hex_of(rng_);
    if (field == "impl_spec") other.impl_spec = "provider";
    if (field == "seed") other.seed = m.seed + 1;
    if (field == "params.sampling_steps") other.params["sampling_steps"] = 51;
    if (field == "params.geometry.rows[1]") other.params["geometry"]["rows"][1] = 7;
    if (field == "params.save_inputs added") {
      other.params.erase("save_inputs");
      expected = "params.save_inputs";
    }
    if (field == "noise_digest") other.noise_digest = hex_of(rng_);
    expect_field_error([&] { runs::check_compatible(m, other, "/r/manifest.json"); },
                       "/r/manifest.json", expected);
  }

  void first_difference_wins() {
    const auto m = sample_manifest(rng_);
    auto other = m;
    other.seed += 1;
    other.impl_spec = "provider";
    other.params["frames"] = 5;
    expect_field_error([&] { runs::check_compatible(m, other, "m.json"); }, "m.json", "impl_spec");
  }
};

QTEST_APPLESS_MAIN(TestManifest)
#include "test_manifest.moc"
