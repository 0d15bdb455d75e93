// Step store: saved calls load back bit-exactly, and every kind of damage (flipped byte in
// the call file or the sidecar, truncation, broken chain, other inputs, missing sidecar) is
// refused with a message naming the file, while a call file without its sidecar is absent.
// ATen first: Qt's `slots` keyword macro breaks ATen headers included after it.
#include <ATen/ATen.h>

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "tests/core/file_text.h"
#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/safetensors.h"
#include "core/io/sha256.h"
#include "core/runs/identity.h"
#include "core/runs/manifest.h"
#include "core/runs/numerics_segments.h"
#include "core/runs/step_store.h"

using h3p::InputError;
using h3p::io::NamedTensor;
namespace runs = h3p::runs;
namespace fs = std::filesystem;
using h3p::test::write_text;
using h3p::test::read_text;

namespace {

// Random transformer-call inputs of the real dtypes at a small random geometry.
std::vector<NamedTensor> random_inputs(std::mt19937_64& rng) {
  const int64_t video = 4 + static_cast<int64_t>(rng() % 20);
  const int64_t audio = 2 + static_cast<int64_t>(rng() % 6);
  const int64_t text = 1 + static_cast<int64_t>(rng() % 7);
  const int64_t rows = video + audio + text;
  auto i64 = at::TensorOptions().dtype(at::kLong);
  return {{"hidden_states", at::randn({1, video, 96})},
          {"audio_hidden_states", at::randn({1, audio, 32})},
          {"encoder_hidden_states", at::randn({1, text, 48}).to(at::kBFloat16)},
          {"timestep", at::rand({2})},
          {"timestep_indices", at::randint(0, 2, {rows}, i64)},
          {"token_tags", at::randint(0, 3, {rows}, i64)},
          {"position_ids", at::randn({rows, 3}, at::TensorOptions().dtype(at::kDouble))},
          {"video_indices", at::arange(text, text + video, i64)},
          {"audio_indices", at::arange(text + video, rows, i64)},
          {"text_indices", at::arange(0, text, i64)}};
}

std::vector<NamedTensor> random_outputs(const std::vector<NamedTensor>& inputs) {
  return {{"sample", at::randn(inputs[0].tensor.sizes())},
          {"audio_sample", at::randn(inputs[1].tensor.sizes())}};
}

bool same(const at::Tensor& a, const at::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && a.sizes() == b.sizes() && at::equal(a, b);
}

void flip_byte(const fs::path& path, std::size_t offset) {
  std::string bytes = read_text(path);
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x01);
  write_text(path, bytes);
}

void truncate(const fs::path& path, std::size_t keep) { fs::resize_file(path, keep); }

// Expects `fn` to throw InputError whose message names `file`.
template <typename Fn>
void expect_refused(Fn fn, const fs::path& file, const char* what) {
  try {
    fn();
    QFAIL((std::string("accepted: ") + what).c_str());
  } catch (const InputError& e) {
    QVERIFY2(std::string(e.what()).find(file.string()) != std::string::npos,
             (std::string(what) + " -> " + e.what()).c_str());
  }
}

// Expects `fn` to throw InputError starting "<file>: field '<field>'".
template <typename Fn>
void expect_field_refused(Fn fn, const fs::path& file, const std::string& field, const char* what) {
  try {
    fn();
    QFAIL((std::string("accepted: ") + what).c_str());
  } catch (const InputError& e) {
    QVERIFY2(std::string(e.what()).starts_with(file.string() + ": field '" + field + "'"),
             (std::string(what) + " -> " + e.what()).c_str());
  }
}

// Replaces the one occurrence of `from` in `path` by `to`.
void replace_once(const fs::path& path, const std::string& from, const std::string& to) {
  std::string text = read_text(path);
  const auto at = text.find(from);
  QVERIFY2(at != std::string::npos && text.find(from, at + 1) == std::string::npos, from.c_str());
  text.replace(at, from.size(), to);
  write_text(path, text);
}

// A manifest read_manifest accepts, recording `numerics` as environment.numerics.
std::string manifest_text(const nlohmann::json& numerics) {
  const std::string hex(64, 'a');
  runs::Manifest m;
  m.contract_name = "demo";
  m.contract_digest = hex;
  m.impl_spec = "provider";
  m.seed = 7;
  m.identity.weights_digest = hex;
  m.identity.config_digest = hex;
  m.identity.source_files = {{"core/model/a.cpp", hex}};
  m.identity.sources_digest = runs::sources_digest_of(m.identity.source_files);
  m.environment = {{"hostname", "host-a"}, {"numerics", numerics}};
  return runs::manifest_to_json(m).dump(2) + "\n";
}

// A run directory with a manifest and `steps` saved steps (inputs saved on even steps).
struct Fixture {
  QTemporaryDir dir;
  runs::RunPaths paths{fs::path(dir.path().toStdString()) / "run"};
  runs::StepStore store{paths, "candidate:attention=provider"};
  std::vector<std::vector<NamedTensor>> inputs;
  std::vector<std::vector<NamedTensor>> outputs;

  Fixture(std::mt19937_64& rng, int steps, const std::string& manifest_text = "{\"m\": 1}\n") {
    paths.create_directories();
    h3p::io::atomic_write_text(paths.manifest(), manifest_text);
    for (int k = 0; k < steps; ++k) add(rng, k % 2 == 0);
  }
  void add(std::mt19937_64& rng, bool save_inputs) {
    inputs.push_back(random_inputs(rng));
    outputs.push_back(random_outputs(inputs.back()));
    store.save(static_cast<int>(inputs.size()) - 1, inputs.back(), save_inputs, outputs.back());
  }
  std::string digest(int step) const { return runs::input_digest(inputs[step]); }
};

}  // namespace

class TestStepStore : public QObject {
  Q_OBJECT

 private:
  std::mt19937_64 rng_;

 private slots:
  void initTestCase() {
    const std::uint64_t seed = std::random_device{}();
    qInfo("seed %llu", static_cast<unsigned long long>(seed));
    rng_.seed(seed);
    at::manual_seed(seed);
  }

  void input_digest_is_content_addressed() {
    auto inputs = random_inputs(rng_);
    const std::string d = runs::input_digest(inputs);
    QCOMPARE(d.size(), std::size_t{64});
    // Same values in another memory layout: same digest.
    auto copy = inputs;
    copy[0].tensor = inputs[0].tensor.transpose(1, 2).contiguous().transpose(1, 2);
    QVERIFY(!copy[0].tensor.is_contiguous());
    QCOMPARE(runs::input_digest(copy), d);
    // One element, the order, a dtype: each changes it.
    copy = inputs;
    copy[3].tensor = inputs[3].tensor.clone();
    copy[3].tensor[0] = std::nextafter(copy[3].tensor[0].item<float>(), 2.0f);
    QVERIFY(runs::input_digest(copy) != d);
    copy = inputs;
    std::swap(copy[0], copy[1]);
    QVERIFY(runs::input_digest(copy) != d);
    copy = inputs;
    copy[4].tensor = inputs[4].tensor.to(at::kInt);
    QVERIFY(runs::input_digest(copy) != d);
  }

  void save_and_load_round_trip() {
    Fixture f(rng_, 4);
    QCOMPARE(f.store.count_complete(), 4);
    for (int k = 0; k < 4; ++k) {
      const auto loaded = f.store.load(k, f.digest(k));
      QCOMPARE(loaded.record.step, k);
      QCOMPARE(loaded.record.input_digest, f.digest(k));
      QCOMPARE(loaded.record.inputs_saved, k % 2 == 0);
      QVERIFY(same(loaded.sample, f.outputs[k][0].tensor));
      QVERIFY(same(loaded.audio_sample, f.outputs[k][1].tensor));
      if (k % 2 == 0) {
        QCOMPARE(loaded.inputs.size(), f.inputs[k].size());
        for (std::size_t i = 0; i < loaded.inputs.size(); ++i) {
          QCOMPARE(loaded.inputs[i].name, f.inputs[k][i].name);
          QVERIFY2(same(loaded.inputs[i].tensor, f.inputs[k][i].tensor),
                   loaded.inputs[i].name.c_str());
        }
      } else {
        QVERIFY(loaded.inputs.empty());
      }
      QCOMPARE(f.store.load_saved(k).record.file_digest, loaded.record.file_digest);
    }
    // The call file is replayable: diffusers names, metadata, outputs last.
    const auto file = h3p::io::SafetensorsFile::open(f.paths.step_file(0));
    QCOMPARE(file.metadata().at("step"), std::string("0"));
    QCOMPARE(file.metadata().at("impl_spec"), std::string("candidate:attention=provider"));
    QCOMPARE(file.tensors().size(), std::size_t{12});
    QCOMPARE(file.tensors().back().name, std::string("audio_sample"));
    QCOMPARE(h3p::io::SafetensorsFile::open(f.paths.step_file(1)).tensors().size(), std::size_t{2});
  }

  void sidecar_chains_to_the_manifest_and_previous_sidecar() {
    Fixture f(rng_, 3);
    const auto s0 = f.store.load_saved(0).record;
    const auto s2 = f.store.load_saved(2).record;
    QCOMPARE(s0.previous_digest, h3p::io::sha256_file(f.paths.manifest()));
    QCOMPARE(s2.previous_digest, h3p::io::sha256_file(f.paths.step_sidecar(1)));
    QCOMPARE(s2.file_digest, h3p::io::sha256_file(f.paths.step_file(2)));
    const std::string text = read_text(f.paths.step_sidecar(2));
    for (const char* key : {"\"step\": 2", "\"file\": \"002.safetensors\"",
                            "\"inputs_saved\": true", "\"format_version\": 1"}) {
      QVERIFY2(text.find(key) != std::string::npos, key);
    }
  }

  void save_refusals() {
    Fixture f(rng_, 2);
    auto in = random_inputs(rng_);
    auto out = random_outputs(in);
    expect_refused([&] { f.store.save(1, in, true, out); }, f.paths.step_sidecar(1), "resave");
    expect_refused([&] { f.store.save(3, in, true, out); }, f.paths.step_file(3), "gap");
    auto bad = in;
    bad[0].name = "latents";
    expect_refused([&] { f.store.save(2, bad, true, out); }, f.paths.step_file(2), "bad name");
    bad = in;
    bad.push_back(in[0]);
    expect_refused([&] { f.store.save(2, bad, true, out); }, f.paths.step_file(2), "twice");
    auto one = out;
    one.pop_back();
    expect_refused([&] { f.store.save(2, in, true, one); }, f.paths.step_file(2), "missing out");
    auto extra = out;
    extra.push_back({"noise", out[0].tensor});
    expect_refused([&] { f.store.save(2, in, true, extra); }, f.paths.step_file(2), "extra out");
    QCOMPARE(f.store.count_complete(), 2);
    QVERIFY(!fs::exists(f.paths.step_file(2)));
    // Step 0 needs the manifest it chains to.
    QTemporaryDir empty;
    runs::StepStore bare(runs::RunPaths(fs::path(empty.path().toStdString())));
    expect_refused([&] { bare.save(0, in, false, out); }, bare.paths().manifest(), "no manifest");
  }

  void flipped_byte_in_call_file_is_refused() {
    Fixture f(rng_, 3);
    const auto file = f.paths.step_file(1);
    const auto size = fs::file_size(file);
    // Header, tensor data, last byte.
    for (std::size_t offset : {std::size_t{10}, static_cast<std::size_t>(size / 2),
                               static_cast<std::size_t>(size - 1)}) {
      const std::string original = read_text(file);
      flip_byte(file, offset);
      expect_refused([&] { f.store.load(1, f.digest(1)); }, file, "flipped call file byte");
      write_text(file, original);
    }
    f.store.load(1, f.digest(1));
  }

  void flipped_byte_in_sidecar_is_refused() {
    Fixture f(rng_, 3);
    const auto sidecar = f.paths.step_sidecar(1);
    const std::string original = read_text(sidecar);
    // Every byte: each flip leaves invalid JSON, a non-canonical text or a changed value.
    for (std::size_t offset = 0; offset < original.size(); ++offset) {
      flip_byte(sidecar, offset);
      expect_refused([&] { f.store.load(1, f.digest(1)); }, sidecar, "flipped sidecar byte");
      write_text(sidecar, original);
    }
    // The next step's chain covers the sidecar's bytes as well.
    flip_byte(sidecar, original.size() - 1);
    expect_refused([&] { f.store.load(2, f.digest(2)); }, f.paths.step_sidecar(2), "chain");
  }

  void whitespace_edit_of_sidecar_is_refused() {
    Fixture f(rng_, 1);
    const auto sidecar = f.paths.step_sidecar(0);
    std::string text = read_text(sidecar);
    text.insert(1, " ");
    write_text(sidecar, text);
    expect_refused([&] { f.store.load(0, f.digest(0)); }, sidecar, "whitespace");
  }

  void truncated_call_file_is_refused() {
    Fixture f(rng_, 2);
    const auto file = f.paths.step_file(0);
    const auto size = fs::file_size(file);
    for (std::size_t keep : {std::size_t{0}, std::size_t{5}, static_cast<std::size_t>(size - 1)}) {
      const std::string original = read_text(file);
      truncate(file, keep);
      expect_refused([&] { f.store.load(0, f.digest(0)); }, file, "truncated call file");
      write_text(file, original);
    }
  }

  void truncated_sidecar_is_refused() {
    Fixture f(rng_, 2);
    const auto sidecar = f.paths.step_sidecar(1);
    const auto size = fs::file_size(sidecar);
    for (std::size_t keep :
         {std::size_t{0}, static_cast<std::size_t>(size / 2), static_cast<std::size_t>(size - 1)}) {
      const std::string original = read_text(sidecar);
      truncate(sidecar, keep);
      expect_refused([&] { f.store.load(1, f.digest(1)); }, sidecar, "truncated sidecar");
      write_text(sidecar, original);
    }
  }

  void swapped_sidecars_are_refused() {
    Fixture f(rng_, 3);
    const auto a = f.paths.step_sidecar(1);
    const auto b = f.paths.step_sidecar(2);
    const std::string ta = read_text(a);
    const std::string tb = read_text(b);
    write_text(a, tb);
    write_text(b, ta);
    expect_refused([&] { f.store.load(1, f.digest(1)); }, a, "swapped sidecar 1");
    expect_refused([&] { f.store.load(2, f.digest(2)); }, b, "swapped sidecar 2");
    // Swapping both call files and sidecars (renaming steps) is refused as well.
    write_text(a, ta);
    write_text(b, tb);
    const auto ca = f.paths.step_file(1);
    const auto cb = f.paths.step_file(2);
    const std::string fa = read_text(ca);
    write_text(ca, read_text(cb));
    write_text(cb, fa);
    expect_refused([&] { f.store.load(1, f.digest(1)); }, ca, "swapped call files");
  }

  void step_spliced_from_another_run_breaks_the_chain() {
    // Two runs with the same calls but different manifests: identical call files, but the
    // chain of one cannot continue the other.
    std::mt19937_64 rng_a(rng_());
    std::mt19937_64 rng_b = rng_a;
    const std::uint64_t torch_seed = rng_();
    at::manual_seed(torch_seed);
    Fixture a(rng_a, 3, "{\"run\": \"a\"}\n");
    at::manual_seed(torch_seed);
    Fixture b(rng_b, 3, "{\"run\": \"b\"}\n");
    QCOMPARE(read_text(a.paths.step_file(1)), read_text(b.paths.step_file(1)));
    fs::copy_file(a.paths.step_sidecar(1), b.paths.step_sidecar(1),
                  fs::copy_options::overwrite_existing);
    try {
      b.store.load(1, b.digest(1));
      QFAIL("spliced sidecar accepted");
    } catch (const InputError& e) {
      const std::string message = e.what();
      QVERIFY2(message.find(b.paths.step_sidecar(1).string() + ": field 'previous_digest'") == 0,
               e.what());
      QVERIFY2(message.find("chain broken") != std::string::npos, e.what());
    }
    // An edited manifest breaks step 0's link.
    h3p::io::atomic_write_text(a.paths.manifest(), "{\"run\": \"a2\"}\n");
    expect_refused([&] { a.store.load(0, a.digest(0)); }, a.paths.step_sidecar(0), "manifest");
  }

  void wrong_input_digest_is_refused() {
    Fixture f(rng_, 2);
    auto other = f.inputs[1];
    other[3].tensor = other[3].tensor * 0.5;
    try {
      f.store.load(1, runs::input_digest(other));
      QFAIL("other inputs accepted");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).starts_with(f.paths.step_sidecar(1).string() +
                                                 ": field 'input_digest'"),
               e.what());
    }
    // Saved inputs that no longer match the recorded digest (file and sidecar both rewritten
    // consistently is out of reach; here the digest field is replaced by another valid one).
    const auto sidecar = f.paths.step_sidecar(0);
    std::string text = read_text(sidecar);
    const std::string key = "\"input_digest\": \"";
    const auto at = text.find(key) + key.size();
    text.replace(at, 64, runs::input_digest(other));
    write_text(sidecar, text);
    expect_refused([&] { f.store.load_saved(0); }, sidecar, "saved inputs vs digest");
  }

  void missing_sidecar_is_treated_as_absent() {
    Fixture f(rng_, 3);
    // A crash between the call file and the sidecar of step 2.
    fs::remove(f.paths.step_sidecar(2));
    QVERIFY(fs::exists(f.paths.step_file(2)));
    QCOMPARE(f.store.count_complete(), 2);
    expect_refused([&] { f.store.load(2, f.digest(2)); }, f.paths.step_sidecar(2), "absent");
    // Resaving overwrites the orphaned call file.
    auto in = random_inputs(rng_);
    auto out = random_outputs(in);
    f.store.save(2, in, false, out);
    QCOMPARE(f.store.count_complete(), 3);
    const auto loaded = f.store.load(2, runs::input_digest(in));
    QVERIFY(same(loaded.sample, out[0].tensor));
    // A gap stops the count: steps after a missing sidecar are not complete.
    fs::remove(f.paths.step_sidecar(1));
    QCOMPARE(f.store.count_complete(), 1);
  }

  void sidecar_without_segment_loads_as_segment_zero() {
    // Sidecars of runs made before numerics segments have no "segment" field.
    Fixture f(rng_, 2);
    for (int k = 0; k < 2; ++k) {
      replace_once(f.paths.step_sidecar(k), "  \"segment\": 0,\n", "");
      if (k == 0) {  // re-chain step 1 to the rewritten sidecar 0
        const std::string key = "\"previous_digest\": \"";
        std::string text = read_text(f.paths.step_sidecar(1));
        text.replace(text.find(key) + key.size(), 64, h3p::io::sha256_file(f.paths.step_sidecar(0)));
        write_text(f.paths.step_sidecar(1), text);
      }
    }
    for (int k = 0; k < 2; ++k) {
      QVERIFY(read_text(f.paths.step_sidecar(k)).find("segment") == std::string::npos);
      const auto loaded = f.store.load(k, f.digest(k));
      QCOMPARE(loaded.record.segment, 0);
      QVERIFY(same(loaded.sample, f.outputs[k][0].tensor));
    }
  }

  void sidecar_naming_another_segment_is_refused() {
    Fixture f(rng_, 2);
    QVERIFY(read_text(f.paths.step_sidecar(1)).find("\"segment\": 0,") != std::string::npos);
    QCOMPARE(f.store.load(1, f.digest(1)).record.segment, 0);
    // The run has one segment (no segments.json): segment 1 did not compute step 1.
    replace_once(f.paths.step_sidecar(1), "\"segment\": 0,", "\"segment\": 1,");
    expect_field_refused([&] { f.store.load(1, f.digest(1)); }, f.paths.step_sidecar(1), "segment",
                         "segment 1 in a one-segment run");
    expect_field_refused([&] { f.store.load_saved(1); }, f.paths.step_sidecar(1), "segment",
                         "segment 1 in a one-segment run (load_saved)");
    f.store.load(0, f.digest(0));  // the other step is untouched
  }

  void sidecar_segment_must_be_an_unsigned_integer() {
    Fixture f(rng_, 1);
    const auto sidecar = f.paths.step_sidecar(0);
    const std::string original = read_text(sidecar);
    // Each stays in canonical form, so the segment check itself refuses it.
    for (const char* value : {"-1", "0.5", "\"0\"", "null", "true", "4294967296"}) {
      replace_once(sidecar, "\"segment\": 0,", std::string("\"segment\": ") + value + ",");
      expect_field_refused([&] { f.store.load(0, f.digest(0)); }, sidecar, "segment", value);
      write_text(sidecar, original);
    }
    f.store.load(0, f.digest(0));
  }

  void set_segments_records_the_segment_of_each_step() {
    Fixture f(rng_, 2);
    f.store.set_segments({0, 2});  // a resume at step 2 under another environment
    f.add(rng_, false);
    QVERIFY(read_text(f.paths.step_sidecar(2)).find("\"segment\": 1,") != std::string::npos);
    QVERIFY(read_text(f.paths.step_sidecar(1)).find("\"segment\": 0,") != std::string::npos);
    for (int k = 0; k < 3; ++k) QCOMPARE(f.store.load(k, f.digest(k)).record.segment, k < 2 ? 0 : 1);
    // A store that does not know the second segment refuses step 2 (and only it).
    runs::StepStore unaware(f.paths);
    unaware.load(1, f.digest(1));
    expect_field_refused([&] { unaware.load(2, f.digest(2)); }, f.paths.step_sidecar(2), "segment",
                         "step 2 of segment 1, store with one segment");
    // The same start twice: the later segment computes the steps.
    unaware.set_segments({0, 2, 2});
    expect_field_refused([&] { unaware.load(2, f.digest(2)); }, f.paths.step_sidecar(2), "segment",
                         "step 2 of segment 1, store with segments 0, 2, 2");
    // Segments start at step 0 and do not go back.
    QVERIFY_THROWS_EXCEPTION(InputError, unaware.set_segments({}));
    QVERIFY_THROWS_EXCEPTION(InputError, unaware.set_segments({1}));
    QVERIFY_THROWS_EXCEPTION(InputError, unaware.set_segments({0, 3, 2}));
  }

  void the_store_reads_the_runs_segments_json() {
    const nlohmann::json numerics = {{"cpu", {{"isa", {"avx2"}}, {"threads", 4}}}};
    Fixture f(rng_, 2, manifest_text(numerics));
    runs::NumericsSegment first;
    first.numerics = numerics;
    runs::NumericsSegment second;
    second.index = 1;
    second.first_step = 2;
    second.check = "verified";
    second.changed = {"cpu.threads"};
    second.numerics = {{"cpu", {{"isa", {"avx2"}}, {"threads", 8}}}};
    runs::write_segments(f.paths, {first, second});
    runs::StepStore resumed(f.paths);
    resumed.load(1, f.digest(1));
    f.inputs.push_back(random_inputs(rng_));
    f.outputs.push_back(random_outputs(f.inputs.back()));
    resumed.save(2, f.inputs.back(), false, f.outputs.back());
    for (int k = 0; k < 3; ++k) QCOMPARE(resumed.load(k, f.digest(k)).record.segment, k < 2 ? 0 : 1);
    QCOMPARE(runs::StepStore(f.paths).load_saved(2).record.segment, 1);
    // A segments.json that does not start from the manifest's numerics is refused at once.
    first.numerics["cpu"]["threads"] = 2;
    runs::write_segments(f.paths, {first, second});
    expect_field_refused([&] { runs::StepStore again(f.paths); }, f.paths.segments(),
                         "segments[0].numerics", "segment 0 other than the manifest");
  }

  void missing_call_file_is_refused() {
    Fixture f(rng_, 2);
    fs::remove(f.paths.step_file(1));
    expect_refused([&] { f.store.load(1, f.digest(1)); }, f.paths.step_file(1), "no call file");
  }
};

QTEST_APPLESS_MAIN(TestStepStore)
#include "test_step_store.moc"
