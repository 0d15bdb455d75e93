// Contract parsing: every shipped contract loads, every bad field is refused with a message
// naming the file and the field, and the digest is canonical (independent of key order,
// whitespace and location, pinned to a hand-computed value, sensitive to every field).
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <string>

#include "tests/core/file_text.h"
#include "core/common/error.h"
#include "core/contract/contract.h"
#include "core/io/sha256.h"

using h3p::InputError;
using nlohmann::json;
namespace contract = h3p::contract;
namespace fs = std::filesystem;
using h3p::test::write_text;

namespace {

json valid_json() {
  return json::parse(R"({
    "name": "unit", "model": "preset:tiny", "prompt": "a kite over a beach", "text_tokens": 12,
    "seeds": [42, 43, 44], "frames": 124, "width": 128, "height": 96, "fps": 24,
    "audio_sample_rate": 32000, "sampling_steps": 50, "video_shift": 12, "audio_shift": 3,
    "bounds": {"psnr_db_min": 30, "ssim_min": 0.99, "temporal_rmse_max": 0.01,
               "audio_rel_l2_max": 0.05},
    "require_gate": false})");
}

// Applies "<field>" = value (or removes it when value is the string "<remove>"); nested fields
// are written "bounds.ssim_min".
json mutated(json base, const std::string& field, const json& value) {
  json* target = &base;
  std::string key = field;
  if (auto dot = field.find('.'); dot != std::string::npos) {
    target = &base[field.substr(0, dot)];
    key = field.substr(dot + 1);
  }
  if (value.is_string() && value.get<std::string>() == "<remove>") {
    target->erase(key);
  } else {
    (*target)[key] = value;
  }
  return base;
}

}  // namespace

class TestContract : public QObject {
  Q_OBJECT

 private slots:
  void shipped_demo_contract_loads() {
    const fs::path path = fs::path(H3P_SOURCE_DIR) / "resources/contracts/demo.json";
    const auto c = contract::load_contract(path);
    QCOMPARE(c.name, std::string("demo"));
    QVERIFY(c.model_is_builtin());
    QCOMPARE(c.builtin_model()->preset, std::string("tiny"));
    QVERIFY(c.model_path().empty());
    QVERIFY(!c.prompt.empty());
    QCOMPARE(c.text_tokens, std::int64_t{12});
    QCOMPARE(c.seeds, (std::vector<std::uint64_t>{42, 43, 44}));
    QCOMPARE(c.frames, 124);
    QCOMPARE(c.width, 128);
    QCOMPARE(c.height, 96);
    QCOMPARE(c.fps, 24);
    QCOMPARE(c.audio_sample_rate, 32000);
    QCOMPARE(c.sampling_steps, 50);
    QCOMPARE(c.video_shift, 12.0);
    QCOMPARE(c.audio_shift, 3.0);
    QCOMPARE(c.bounds, (contract::Bounds{30.0, 0.99, 0.01, 0.05}));
    QVERIFY(!c.require_gate);
    QCOMPARE(c.source, path);
  }

  void shipped_reference_contract_resolves_paths_against_its_directory() {
    const fs::path dir = fs::path(H3P_SOURCE_DIR) / "resources/contracts";
    const auto c = contract::load_contract(dir / "h3-reference.json");
    QCOMPARE(c.width, 1344);
    QCOMPARE(c.height, 768);
    QCOMPARE(c.frames, 124);
    QVERIFY(c.require_gate);
    QVERIFY(!c.model_is_builtin());
    QVERIFY(c.prompt.empty());
    QCOMPARE(c.text_tokens, std::int64_t{0});
    QCOMPARE(c.model_path(), (dir / "models/MiniMax-H3").lexically_normal());
    QCOMPARE(c.conditioning_path(),
             (dir / "conditioning/h3-reference.safetensors").lexically_normal());
    QVERIFY(c.reference_image_path().empty());
  }

  void builtin_models_parse_and_name_their_directories() {
    const auto plain = contract::parse_builtin_model("preset:tiny");
    QVERIFY(plain && !plain->seeded && !plain->layers && !plain->seed);
    QCOMPARE(plain->directory_name(), std::string("tiny"));  // where runs already find it

    const auto seeded = contract::parse_builtin_model("seeded:full-shape?layers=50&seed=7&decoders=released");
    QVERIFY(seeded && seeded->seeded);
    QCOMPARE(seeded->preset, std::string("full-shape"));
    QCOMPARE(*seeded->layers, int64_t{50});
    QCOMPARE(*seeded->seed, uint64_t{7});
    QCOMPARE(seeded->decoders, std::string("released"));
    QCOMPARE(seeded->directory_name(), std::string("seeded-full-shape-l50-s7-released"));

    const auto layers_only = contract::parse_builtin_model("preset:full-shape?layers=4");
    QCOMPARE(layers_only->directory_name(), std::string("full-shape-l4"));
    QVERIFY(!contract::parse_builtin_model("models/seeded:x").has_value());  // a directory

    json j = mutated(valid_json(), "model", "seeded:tiny?seed=3");
    const auto c = contract::parse_contract(j, "/some/dir/c.json");
    QVERIFY(c.model_is_builtin());
    QVERIFY(c.model_path().empty());
    QCOMPARE(c.builtin_model()->directory_name(), std::string("seeded-tiny-s3"));
  }

  void absolute_paths_are_kept() {
    json j = mutated(valid_json(), "model", "/models/h3");
    j = mutated(j, "reference_image", "ref.png");
    const auto c = contract::parse_contract(j, "/some/dir/c.json");
    QCOMPARE(c.model_path(), fs::path("/models/h3"));
    QCOMPARE(c.reference_image_path(), fs::path("/some/dir/ref.png"));
  }

  void describe_lists_every_field() {
    const auto c = contract::parse_contract(valid_json(), "x.json");
    const std::string text = c.describe();
    for (const char* word :
         {"unit", "preset:tiny", "a kite over a beach", "42 43 44", "124", "128x96", "32000", "50",
          "12", "psnr_db_min=30", "ssim_min=0.99", "require_gate: false"}) {
      QVERIFY2(text.find(word) != std::string::npos, word);
    }
  }

  void bad_field_is_refused_naming_file_and_field_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("value");  // JSON text, or "<remove>"
    QTest::addColumn<QString>("named");  // the field the message must name
    QTest::addColumn<QString>("what");   // a fragment of the reason
    auto row = [](const char* tag, const char* field, const char* value, const char* named,
                  const char* what) { QTest::newRow(tag) << field << value << named << what; };
    row("unknown key", "colour", "1", "colour", "unknown field");
    row("unknown bounds key", "bounds.lpips_max", "0.1", "bounds.lpips_max", "unknown field");
    row("name missing", "name", "<remove>", "name", "missing");
    row("name empty", "name", R"("")", "name", "must not be empty");
    row("name with slash", "name", R"("a/b")", "name", "letters");
    row("name dot", "name", R"("..")", "name", "start with '.'");
    row("name number", "name", "7", "name", "must be a string");
    row("model missing", "model", "<remove>", "model", "missing");
    row("model empty", "model", R"("")", "model", "must not be empty");
    row("model unknown preset", "model", R"("preset:huge")", "model", "unknown preset 'huge'");
    row("seeded unknown preset", "model", R"("seeded:huge?layers=2")", "model",
        "unknown preset 'huge'");
    row("seeded layers zero", "model", R"("seeded:full-shape?layers=0")", "model", "1..1000");
    row("seeded layers text", "model", R"("seeded:full-shape?layers=many")", "model",
        "not a non-negative integer");
    row("seeded unknown setting", "model", R"("seeded:tiny?depth=2")", "model",
        "setting 'depth': unknown");
    row("seeded repeated setting", "model", R"("seeded:tiny?seed=1&seed=2")", "model",
        "given twice");
    row("seeded unknown decoders", "model", R"("seeded:tiny?decoders=huge")", "model",
        "unknown 'huge'");
    row("seeded no value", "model", R"("seeded:tiny?seed")", "model", "expected key=value");
    row("prompt and file", "conditioning_file", R"("c.safetensors")", "conditioning_file",
        "not both");
    row("prompt missing", "prompt", "<remove>", "prompt", "either");
    row("prompt empty", "prompt", R"("")", "prompt", "must not be empty");
    row("text_tokens missing", "text_tokens", "<remove>", "text_tokens", "missing");
    row("text_tokens zero", "text_tokens", "0", "text_tokens", "[1, 1048576]");
    row("text_tokens float", "text_tokens", "12.5", "text_tokens", "must be an integer");
    row("reference empty", "reference_image", R"("")", "reference_image", "must not be empty");
    row("seeds missing", "seeds", "<remove>", "seeds", "missing");
    row("seeds empty", "seeds", "[]", "seeds", "must not be empty");
    row("seeds not array", "seeds", "42", "seeds", "array");
    row("seeds duplicate", "seeds", "[1, 2, 1]", "seeds", "seed 1 appears twice");
    row("seeds negative", "seeds", "[1, -2]", "seeds", "entry 1");
    row("seeds float", "seeds", "[1.5]", "seeds", "entry 0");
    row("seeds string", "seeds", R"(["1"])", "seeds", "entry 0");
    row("frames missing", "frames", "<remove>", "frames", "missing");
    row("frames 4", "frames", "4", "frames", "[5, 100000]");
    row("frames negative", "frames", "-124", "frames", "[5, 100000]");
    row("frames float", "frames", "124.0", "frames", "must be an integer");
    row("frames string", "frames", R"("124")", "frames", "must be an integer");
    row("frames huge", "frames", "18446744073709551615", "frames", "[5, 100000]");
    row("width not multiple", "width", "100", "width", "multiple of 32");
    row("width zero", "width", "0", "width", "multiple of 32");
    row("height not multiple", "height", "95", "height", "multiple of 32");
    row("height missing", "height", "<remove>", "height", "missing");
    row("fps zero", "fps", "0", "fps", "[1, 1000]");
    row("fps float", "fps", "23.976", "fps", "must be an integer");
    row("audio rate zero", "audio_sample_rate", "0", "audio_sample_rate", "[1, 1000000]");
    row("steps 1", "sampling_steps", "1", "sampling_steps", "[2, 10000]");
    row("steps missing", "sampling_steps", "<remove>", "sampling_steps", "missing");
    row("video shift zero", "video_shift", "0", "video_shift", "> 0");
    row("video shift negative", "video_shift", "-1.5", "video_shift", "> 0");
    row("audio shift string", "audio_shift", R"("3")", "audio_shift", "must be a number");
    row("audio shift missing", "audio_shift", "<remove>", "audio_shift", "missing");
    row("bounds missing", "bounds", "<remove>", "bounds", "missing");
    row("bounds not object", "bounds", "[30]", "bounds", "must be an object");
    row("psnr missing", "bounds.psnr_db_min", "<remove>", "bounds.psnr_db_min", "missing");
    row("psnr string", "bounds.psnr_db_min", R"("30")", "bounds.psnr_db_min", "number");
    row("ssim above 1", "bounds.ssim_min", "1.5", "bounds.ssim_min", "[-1, 1]");
    row("ssim missing", "bounds.ssim_min", "<remove>", "bounds.ssim_min", "missing");
    row("rmse negative", "bounds.temporal_rmse_max", "-0.1", "bounds.temporal_rmse_max", ">= 0");
    row("audio l2 missing", "bounds.audio_rel_l2_max", "<remove>", "bounds.audio_rel_l2_max",
        "missing");
    row("audio l2 null", "bounds.audio_rel_l2_max", "null", "bounds.audio_rel_l2_max", "number");
    row("gate missing", "require_gate", "<remove>", "require_gate", "missing");
    row("gate int", "require_gate", "1", "require_gate", "true or false");
  }

  void bad_field_is_refused_naming_file_and_field() {
    QFETCH(QString, field);
    QFETCH(QString, value);
    QFETCH(QString, named);
    QFETCH(QString, what);
    const json patch = value == "<remove>" ? json("<remove>") : json::parse(value.toStdString());
    const json bad = mutated(valid_json(), field.toStdString(), patch);
    QTemporaryDir dir;
    const fs::path file = fs::path(dir.path().toStdString()) / "bad.json";
    write_text(file, bad.dump(2));
    try {
      contract::load_contract(file);
      QFAIL("accepted");
    } catch (const InputError& e) {
      const std::string message = e.what();
      const std::string prefix = file.string() + ": field '" + named.toStdString() + "': ";
      QVERIFY2(message.starts_with(prefix), message.c_str());
      QVERIFY2(message.find(what.toStdString()) != std::string::npos, message.c_str());
    }
  }

  void conditioning_file_excludes_text_tokens() {
    json j = mutated(valid_json(), "prompt", "<remove>");
    j = mutated(j, "conditioning_file", "cond.safetensors");
    try {
      contract::parse_contract(j, "c.json");
      QFAIL("accepted text_tokens with a conditioning file");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).starts_with("c.json: field 'text_tokens'"), e.what());
    }
    j.erase("text_tokens");
    const auto c = contract::parse_contract(j, "c.json");
    QCOMPARE(c.conditioning_file, std::string("cond.safetensors"));
    QCOMPARE(c.text_tokens, std::int64_t{0});
  }

  void non_finite_numbers_are_refused() {
    for (const char* field : {"video_shift", "bounds.psnr_db_min", "bounds.ssim_min"}) {
      for (double v :
           {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
        try {
          contract::parse_contract(mutated(valid_json(), field, v), "c.json");
          QFAIL(field);
        } catch (const InputError& e) {
          QVERIFY2(
              std::string(e.what()).find(std::string("field '") + field + "'") != std::string::npos,
              e.what());
        }
      }
    }
  }

  void malformed_files_are_refused_naming_the_file() {
    QTemporaryDir dir;
    const fs::path base(dir.path().toStdString());
    const std::string text = valid_json().dump(2);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"truncated.json", text.substr(0, text.size() / 2)},
        {"empty.json", ""},
        {"array.json", "[1, 2]"},
        {"duplicate.json", R"({"name": "a", "name": "b"})"},
        {"duplicate-nested.json",
         text.substr(0, text.rfind('}')) + R"(, "bounds": {"ssim_min": 1}})"}};
    for (const auto& [name, body] : cases) {
      write_text(base / name, body);
      try {
        contract::load_contract(base / name);
        QFAIL(name.c_str());
      } catch (const InputError& e) {
        QVERIFY2(std::string(e.what()).starts_with((base / name).string() + ":"), e.what());
      }
    }
    try {
      contract::load_contract(base / "absent.json");
      QFAIL("absent file accepted");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("absent.json") != std::string::npos, e.what());
    }
  }

  void duplicate_key_is_named() {
    QTemporaryDir dir;
    const fs::path file = fs::path(dir.path().toStdString()) / "dup.json";
    std::string text = valid_json().dump();
    text.insert(1, R"("frames": 5, )");
    write_text(file, text);
    try {
      contract::load_contract(file);
      QFAIL("duplicate accepted");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("duplicate key 'frames'") != std::string::npos, e.what());
    }
  }

  void digest_is_pinned_to_the_canonical_text() {
    // Hand-written canonical form: sorted keys, compact, doubles as shortest round-trip text.
    const std::string canonical =
        R"({"audio_sample_rate":32000,"audio_shift":3.0,"bounds":{"audio_rel_l2_max":0.05,)"
        R"("psnr_db_min":30.0,"ssim_min":0.99,"temporal_rmse_max":0.01},"fps":24,"frames":124,)"
        R"("height":96,"model":"preset:tiny","name":"digest-pin","prompt":"a kite",)"
        R"("require_gate":false,"sampling_steps":50,"seeds":[42,18446744073709551615],)"
        R"("text_tokens":12,"video_shift":12.5,"width":128})";
    json j = valid_json();
    j["name"] = "digest-pin";
    j["prompt"] = "a kite";
    j["video_shift"] = 12.5;
    j["seeds"] = json::parse("[42, 18446744073709551615]");
    const auto c = contract::parse_contract(j, "/a/b/pin.json");
    QCOMPARE(contract::to_json(c).dump(), canonical);
    // Computed outside the product (Python hashlib) over the text above.
    const std::string pinned = "9888d45e42dc4bd751e085ff7c0201eded91f639d9f24d4a9f5298c6a5f44f30";
    QCOMPARE(h3p::io::sha256_hex(std::string_view(canonical)), pinned);
    QCOMPARE(contract::contract_digest(c), pinned);
  }

  void digest_ignores_order_whitespace_and_location() {
    QTemporaryDir dir;
    const fs::path base(dir.path().toStdString());
    fs::create_directories(base / "elsewhere");
    const json j = valid_json();
    write_text(base / "a.json", j.dump(4));
    // Same content, keys reversed, no whitespace, in another directory.
    std::string reversed = "{";
    bool first = true;
    std::vector<std::string> keys;
    for (const auto& [key, value] : j.items()) keys.push_back(key);
    for (auto k = keys.rbegin(); k != keys.rend(); ++k) {
      reversed += (first ? "" : ",") + json(*k).dump() + ":" + j.at(*k).dump();
      first = false;
    }
    reversed += "}";
    write_text(base / "elsewhere/b.json", reversed);
    const auto a = contract::load_contract(base / "a.json");
    const auto b = contract::load_contract(base / "elsewhere/b.json");
    QVERIFY(a.source != b.source);
    QCOMPARE(contract::contract_digest(a), contract::contract_digest(b));
  }

  void digest_changes_with_every_field() {
    const auto base = contract::parse_contract(valid_json(), "c.json");
    const std::string digest = contract::contract_digest(base);
    const std::vector<std::pair<std::string, json>> changes = {{"name", "other"},
                                                               {"model", "preset:small"},
                                                               {"prompt", "a kite."},
                                                               {"text_tokens", 13},
                                                               {"reference_image", "r.png"},
                                                               {"seeds", {42, 44, 43}},
                                                               {"frames", 125},
                                                               {"width", 160},
                                                               {"height", 64},
                                                               {"fps", 25},
                                                               {"audio_sample_rate", 16000},
                                                               {"sampling_steps", 51},
                                                               {"video_shift", 12.000001},
                                                               {"audio_shift", 2.5},
                                                               {"bounds.psnr_db_min", 31},
                                                               {"bounds.ssim_min", 0.98},
                                                               {"bounds.temporal_rmse_max", 0.02},
                                                               {"bounds.audio_rel_l2_max", 0.06},
                                                               {"require_gate", true}};
    std::set<std::string> seen = {digest};
    for (const auto& [field, value] : changes) {
      const auto changed = contract::parse_contract(mutated(valid_json(), field, value), "c.json");
      const std::string d = contract::contract_digest(changed);
      QVERIFY2(seen.insert(d).second, field.c_str());
    }
  }

  void random_contracts_round_trip_through_text() {
    const std::uint64_t seed = std::random_device{}();
    qInfo("seed %llu", static_cast<unsigned long long>(seed));
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 200; ++i) {
      contract::Contract c;
      c.name = "r" + std::to_string(rng() % 1000);
      c.model = rng() % 2 ? "preset:small" : "models/m" + std::to_string(rng() % 10);
      if (rng() % 2) {
        c.prompt = "prompt " + std::to_string(rng());
        c.text_tokens = 1 + static_cast<std::int64_t>(rng() % 512);
      } else {
        c.conditioning_file = "cond/" + std::to_string(rng() % 9) + ".safetensors";
      }
      std::set<std::uint64_t> seeds;
      const int n = 1 + static_cast<int>(rng() % 5);
      while (static_cast<int>(seeds.size()) < n) seeds.insert(rng());
      c.seeds.assign(seeds.begin(), seeds.end());
      std::shuffle(c.seeds.begin(), c.seeds.end(), rng);
      c.frames = 5 + static_cast<int>(rng() % 300);
      c.width = 32 * (1 + static_cast<int>(rng() % 60));
      c.height = 32 * (1 + static_cast<int>(rng() % 60));
      c.fps = 1 + static_cast<int>(rng() % 60);
      c.audio_sample_rate = 8000 + static_cast<int>(rng() % 40000);
      c.sampling_steps = 2 + static_cast<int>(rng() % 100);
      std::uniform_real_distribution<double> u(1e-6, 100.0);
      c.video_shift = u(rng);
      c.audio_shift = u(rng);
      c.bounds = {u(rng) - 50.0, u(rng) / 100.0, u(rng), u(rng)};
      c.require_gate = rng() % 2;
      c.source = "/x/y.json";
      const json text_form = json::parse(contract::to_json(c).dump(rng() % 2 ? 2 : -1));
      const auto back = contract::parse_contract(text_form, c.source);
      QVERIFY(back == c);
      QCOMPARE(contract::contract_digest(back), contract::contract_digest(c));
    }
  }
};

QTEST_APPLESS_MAIN(TestContract)
#include "test_contract.moc"
