// Numerics segments (core/runs/numerics_segments.h): which environment fields count as a change,
// how a change is described, segments.json written and read back, every refusal of a damaged or
// hand-edited segments.json (naming the field), and the queries reports make (mixed, segment of
// a step, step ranges).
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tests/core/file_text.h"
#include "core/common/error.h"
#include "core/runs/manifest.h"
#include "core/runs/numerics_segments.h"
#include "core/runs/run_paths.h"

using h3p::InputError;
using nlohmann::json;
namespace runs = h3p::runs;
namespace fs = std::filesystem;
using h3p::test::write_text;
using h3p::test::read_text;

namespace {

// A numerics environment as numerics_environment() records it on a CPU host.
json cpu_numerics(const std::string& openblas_core = "SkylakeX") {
  return {{"cpu",
           {{"model", "Intel(R) Xeon(R) Gold 6230"},
            {"isa", {"avx", "avx2", "avx512f", "fma"}},
            {"aten_capability", "AVX512"},
            {"openblas_core", openblas_core},
            {"threads", 8}}},
          {"torch", {{"version", "2.4.1"}, {"build_sha256", std::string(64, 'a')}}},
          {"device", "cpu"},
          {"attention", {{"requested", "default"}, {"selected", "math"}}},
          {"kernels", json::object()},
          {"env", json::object()}};
}

runs::Manifest manifest_with(const json& numerics, const std::string& host = "host-a") {
  runs::Manifest m;
  m.environment = {{"hostname", host}};
  if (!numerics.is_null()) m.environment["numerics"] = numerics;
  return m;
}

// segments.json of a run resumed twice: verified at step 30, accepted (mixed) at step 45.
json three_segments(const json& numerics) {
  json later = numerics;
  later["cpu"]["openblas_core"] = "Haswell";
  return {{"format_version", 1},
          {"segments",
           {{{"segment", 0},
             {"first_step", 0},
             {"check", "initial"},
             {"numerics", numerics},
             {"host", "host-a"}},
            {{"segment", 1},
             {"first_step", 30},
             {"check", "verified"},
             {"changed", {"cpu.threads"}},
             {"recomputed_steps", {0, 29}},
             {"difference", nullptr},
             {"numerics", numerics},
             {"host", "host-b"}},
            {{"segment", 2},
             {"first_step", 45},
             {"check", "accepted"},
             {"changed", {"cpu.openblas_core"}},
             {"recomputed_steps", {30}},
             {"difference",
              {{"step", 30}, {"output", "sample"}, {"rel_l2", 1.25e-7}, {"max_abs", 3e-6}}},
             {"numerics", later},
             {"host", "host-c"}}}}};
}

const std::string kFile = "run/segments.json";

// Expects parse_segments to refuse `doc` with a message starting "<kFile>: field '<field>'".
void expect_field_refused(const json& doc, const json& manifest_numerics,
                          const std::string& field) {
  try {
    runs::parse_segments(doc.dump(2), kFile, manifest_numerics);
    QFAIL(("accepted; expected a refusal of field '" + field + "'").c_str());
  } catch (const InputError& e) {
    const std::string prefix = kFile + ": field '" + field + "': ";
    QVERIFY2(std::string(e.what()).starts_with(prefix), e.what());
  }
}

// Expects parse_segments to refuse `text` with a message that starts with kFile and holds `what`.
void expect_text_refused(const std::string& text, const std::string& what) {
  try {
    runs::parse_segments(text, kFile, cpu_numerics());
    QFAIL(("accepted; expected a refusal holding '" + what + "'").c_str());
  } catch (const InputError& e) {
    const std::string message = e.what();
    QVERIFY2(message.starts_with(kFile + ": "), e.what());
    QVERIFY2(message.find(what) != std::string::npos, e.what());
  }
}

runs::NumericsSegment segment(int index, int first_step, const std::string& check) {
  runs::NumericsSegment s;
  s.index = index;
  s.first_step = first_step;
  s.check = check;
  return s;
}

}  // namespace

class TestNumericsSegments : public QObject {
  Q_OBJECT

 private slots:
  void equal_environments_have_no_changes() {
    QCOMPARE(runs::numerics_changes(cpu_numerics(), cpu_numerics()), std::vector<std::string>{});
    QCOMPARE(runs::numerics_changes(json::object(), json::object()), std::vector<std::string>{});
  }

  void a_changed_leaf_is_named_by_its_dotted_path() {
    json now = cpu_numerics();
    now["cpu"]["openblas_core"] = "Haswell";
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now),
             std::vector<std::string>{"cpu.openblas_core"});
    // Arrays are one field; several changes come sorted.
    now["cpu"]["isa"] = {"avx", "avx2", "fma"};
    now["torch"]["version"] = "2.5.0";
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now),
             (std::vector<std::string>{"cpu.isa", "cpu.openblas_core", "torch.version"}));
    // A value of another type is a change too.
    now = cpu_numerics();
    now["cpu"]["threads"] = "8";
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now), std::vector<std::string>{"cpu.threads"});
  }

  void an_added_or_removed_key_is_a_change() {
    json now = cpu_numerics();
    now["env"]["OPENBLAS_CORETYPE"] = "Haswell";
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now),
             std::vector<std::string>{"env.OPENBLAS_CORETYPE"});
    QCOMPARE(runs::numerics_changes(now, cpu_numerics()),
             std::vector<std::string>{"env.OPENBLAS_CORETYPE"});
    json without_onednn = cpu_numerics();
    json with_onednn = cpu_numerics();
    with_onednn["cpu"]["onednn"] = "3.4.2";
    QCOMPARE(runs::numerics_changes(with_onednn, without_onednn),
             std::vector<std::string>{"cpu.onednn"});
  }

  void the_cpu_model_is_not_compared() {
    json now = cpu_numerics();
    now["cpu"]["model"] = "AMD EPYC 7763 64-Core Processor";
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now), std::vector<std::string>{});
    now["cpu"]["threads"] = 16;
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now), std::vector<std::string>{"cpu.threads"});
    // Only cpu.model: a field of the same name elsewhere counts.
    now = cpu_numerics();
    now["kernels"]["model"] = "x";
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now), std::vector<std::string>{"kernels.model"});
  }

  void empty_objects_are_no_fields() {
    json now = cpu_numerics();
    now.erase("kernels");  // {} in the run, absent now
    now.erase("env");
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now), std::vector<std::string>{});
    now["plugin"] = json::object();
    QCOMPARE(runs::numerics_changes(cpu_numerics(), now), std::vector<std::string>{});
  }

  void an_unrecorded_environment_differs_in_numerics() {
    QCOMPARE(runs::numerics_changes(json(), cpu_numerics()), std::vector<std::string>{"numerics"});
    QCOMPARE(runs::numerics_changes(cpu_numerics(), json()), std::vector<std::string>{"numerics"});
    QCOMPARE(runs::numerics_changes(json(), json()), std::vector<std::string>{});
  }

  void describe_changes_shows_both_values() {
    json now = cpu_numerics("Haswell");
    now["env"]["OPENBLAS_CORETYPE"] = "Haswell";
    const auto fields = runs::numerics_changes(cpu_numerics(), now);
    QCOMPARE(runs::describe_changes(cpu_numerics(), now, fields),
             std::string("cpu.openblas_core: \"SkylakeX\" -> \"Haswell\"; "
                         "env.OPENBLAS_CORETYPE: absent -> \"Haswell\""));
    QCOMPARE(runs::describe_changes(now, cpu_numerics(), {"env.OPENBLAS_CORETYPE"}),
             std::string("env.OPENBLAS_CORETYPE: \"Haswell\" -> absent"));
    QCOMPARE(runs::describe_changes(json(), cpu_numerics(), {"numerics"}),
             std::string("numerics: not recorded by the run -> recorded"));
    QCOMPARE(runs::describe_changes(cpu_numerics(), now, {}), std::string());
  }

  void write_then_read_round_trips() {
    QTemporaryDir dir;
    const runs::RunPaths paths(fs::path(dir.path().toStdString()) / "run");
    paths.create_directories();
    const json numerics = cpu_numerics();
    const auto expected = runs::parse_segments(three_segments(numerics).dump(2), kFile, numerics);
    QCOMPARE(expected.size(), std::size_t{3});
    QCOMPARE(expected[2].difference->rel_l2, 1.25e-7);
    runs::write_segments(paths, expected);
    QVERIFY(fs::exists(paths.segments()));
    const auto back = runs::read_segments(paths, manifest_with(numerics));
    QCOMPARE(back.size(), expected.size());
    for (std::size_t i = 0; i < back.size(); ++i) QVERIFY2(back[i] == expected[i], kFile.c_str());
    // Written as the file documents: format_version and one record per segment.
    const json written = json::parse(read_text(paths.segments()));
    QCOMPARE(written["format_version"].get<int>(), runs::kSegmentsFormatVersion);
    QCOMPARE(written["segments"], three_segments(numerics)["segments"]);
    // A run that recorded no numerics (older builds): null on both sides.
    std::vector<runs::NumericsSegment> unrecorded = {segment(0, 0, "initial"),
                                                     segment(1, 4, "unchecked")};
    unrecorded[1].numerics = numerics;
    unrecorded[1].changed = {"numerics"};
    runs::write_segments(paths, unrecorded);
    QVERIFY(runs::read_segments(paths, manifest_with(json())) == unrecorded);
  }

  void without_the_file_the_manifest_is_segment_zero() {
    QTemporaryDir dir;
    const runs::RunPaths paths(fs::path(dir.path().toStdString()) / "run");
    paths.create_directories();
    const auto segments = runs::read_segments(paths, manifest_with(cpu_numerics(), "node-7"));
    QCOMPARE(segments.size(), std::size_t{1});
    QCOMPARE(segments[0].index, 0);
    QCOMPARE(segments[0].first_step, 0);
    QCOMPARE(segments[0].check, std::string("initial"));
    QCOMPARE(segments[0].numerics, cpu_numerics());
    QCOMPARE(segments[0].host, std::string("node-7"));
    QVERIFY(segments[0].changed.empty() && !segments[0].difference);
    // A manifest without environment.numerics: segment 0 records none.
    QVERIFY(runs::read_segments(paths, manifest_with(json()))[0].numerics.is_null());
    QVERIFY(!fs::exists(paths.segments()));  // reading writes nothing
  }

  void read_segments_refusals_name_the_file() {
    QTemporaryDir dir;
    const runs::RunPaths paths(fs::path(dir.path().toStdString()) / "run");
    paths.create_directories();
    json doc = three_segments(cpu_numerics());
    doc["segments"][1]["segment"] = 5;
    write_text(paths.segments(), doc.dump(2));
    try {
      runs::read_segments(paths, manifest_with(cpu_numerics()));
      QFAIL("accepted segments.json with segment 5 at index 1");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).starts_with(paths.segments().string() +
                                                 ": field 'segments[1].segment': is 5, expected 1"),
               e.what());
    }
    // The manifest's numerics is what segment 0 is checked against.
    write_text(paths.segments(), three_segments(cpu_numerics()).dump(2));
    QCOMPARE(runs::read_segments(paths, manifest_with(cpu_numerics())).size(), std::size_t{3});
    QVERIFY_THROWS_EXCEPTION(InputError,
                             runs::read_segments(paths, manifest_with(cpu_numerics("Haswell"))));
  }

  void refuses_format_and_top_level_fields() {
    const json numerics = cpu_numerics();
    json doc = three_segments(numerics);
    doc["format_version"] = 2;
    expect_field_refused(doc, numerics, "format_version");
    doc["format_version"] = "1";
    expect_field_refused(doc, numerics, "format_version");
    doc.erase("format_version");
    expect_field_refused(doc, numerics, "format_version");
    doc = three_segments(numerics);
    doc["notes"] = "hand-edited";
    expect_field_refused(doc, numerics, "notes");
    doc = three_segments(numerics);
    doc["segments"] = json::array();
    expect_field_refused(doc, numerics, "segments");
    doc["segments"] = json::object();
    expect_field_refused(doc, numerics, "segments");
    expect_text_refused("[1, 2]", "must be a JSON object");
  }

  void refuses_unknown_and_malformed_segment_fields() {
    const json numerics = cpu_numerics();
    json doc = three_segments(numerics);
    doc["segments"][1]["colour"] = "red";
    expect_field_refused(doc, numerics, "segments[1].colour");
    doc = three_segments(numerics);
    doc["segments"][2] = 7;
    expect_field_refused(doc, numerics, "segments[2]");
    doc = three_segments(numerics);
    doc["segments"][1]["first_step"] = -1;
    expect_field_refused(doc, numerics, "segments[1].first_step");
    doc = three_segments(numerics);
    doc["segments"][1]["changed"] = {"cpu.threads", 3};
    expect_field_refused(doc, numerics, "segments[1].changed");
    doc = three_segments(numerics);
    doc["segments"][1]["recomputed_steps"] = {0, 2.5};
    expect_field_refused(doc, numerics, "segments[1].recomputed_steps");
    doc = three_segments(numerics);
    doc["segments"][1]["numerics"] = "cpu";
    expect_field_refused(doc, numerics, "segments[1].numerics");
    doc = three_segments(numerics);
    doc["segments"][1]["host"] = 3;
    expect_field_refused(doc, numerics, "segments[1].host");
  }

  void refuses_segments_out_of_order() {
    const json numerics = cpu_numerics();
    json doc = three_segments(numerics);
    doc["segments"][2]["segment"] = 3;  // 0, 1, 3
    expect_field_refused(doc, numerics, "segments[2].segment");
    doc = three_segments(numerics);
    std::swap(doc["segments"][1], doc["segments"][2]);
    expect_field_refused(doc, numerics, "segments[1].segment");
    doc = three_segments(numerics);
    doc["segments"][1].erase("segment");
    expect_field_refused(doc, numerics, "segments[1].segment");
    // Segment 0 is the initial one at step 0.
    doc = three_segments(numerics);
    doc["segments"][0]["check"] = "verified";
    expect_field_refused(doc, numerics, "segments[0]");
    doc = three_segments(numerics);
    doc["segments"][0]["first_step"] = 1;
    expect_field_refused(doc, numerics, "segments[0]");
    // A later segment neither starts before the previous one nor is initial.
    doc = three_segments(numerics);
    doc["segments"][2]["first_step"] = 29;
    expect_field_refused(doc, numerics, "segments[2]");
    doc = three_segments(numerics);
    doc["segments"][1]["check"] = "initial";
    expect_field_refused(doc, numerics, "segments[1]");
    // The same first step twice is a resume that stopped before computing a step: accepted.
    doc = three_segments(numerics);
    doc["segments"][2]["first_step"] = 30;
    QCOMPARE(runs::parse_segments(doc.dump(2), kFile, numerics).size(), std::size_t{3});
  }

  void refuses_a_bad_check() {
    const json numerics = cpu_numerics();
    json doc = three_segments(numerics);
    doc["segments"][1]["check"] = "maybe";
    expect_field_refused(doc, numerics, "segments[1].check");
    doc["segments"][1]["check"] = true;
    expect_field_refused(doc, numerics, "segments[1].check");
    doc["segments"][1].erase("check");
    expect_field_refused(doc, numerics, "segments[1].check");
  }

  void refuses_a_malformed_difference() {
    const json numerics = cpu_numerics();
    const std::vector<std::function<void(json&)>> damages = {
        [](json& d) { d.erase("rel_l2"); },
        [](json& d) { d.erase("step"); },
        [](json& d) { d["step"] = -1; },
        [](json& d) { d["step"] = 1.5; },
        [](json& d) { d["step"] = std::uint64_t{1} << 40; },  // beyond any step number
        [](json& d) { d["output"] = 3; },
        [](json& d) { d["max_abs"] = "3e-6"; },
        [](json& d) { d = json::array({30, "sample"}); },
        [](json& d) { d = "step 30"; },
    };
    for (std::size_t k = 0; k < damages.size(); ++k) {
      json doc = three_segments(numerics);
      damages[k](doc["segments"][2]["difference"]);
      expect_field_refused(doc, numerics, "segments[2].difference");
    }
    // Null and absent both mean "no difference".
    json doc = three_segments(numerics);
    doc["segments"][2].erase("difference");
    QVERIFY(!runs::parse_segments(doc.dump(), kFile, numerics)[2].difference);
  }

  void refuses_segment_zero_other_than_the_manifest() {
    const json numerics = cpu_numerics();
    const json doc = three_segments(numerics);
    expect_field_refused(doc, cpu_numerics("Haswell"), "segments[0].numerics");
    expect_field_refused(doc, json(), "segments[0].numerics");
    json unrecorded = doc;
    unrecorded["segments"][0].erase("numerics");
    expect_field_refused(unrecorded, numerics, "segments[0].numerics");
    QCOMPARE(runs::parse_segments(unrecorded.dump(), kFile, json()).size(), std::size_t{3});
  }

  void refuses_text_that_is_not_one_json_document() {
    const std::string text = three_segments(cpu_numerics()).dump(2);
    expect_text_refused(text.substr(0, text.size() / 2), "not valid JSON");
    expect_text_refused("", "not valid JSON");
    // nlohmann::json keeps the last of two equal keys; the file may not say two things.
    std::string twice = text;
    const std::string accepted = "\"check\": \"accepted\",";
    const auto at = twice.find(accepted);
    QVERIFY(at != std::string::npos);
    twice.insert(at, "\"check\": \"verified\", ");
    expect_text_refused(twice, "duplicate key 'check'");
  }

  void is_mixed_only_when_a_difference_was_accepted() {
    const auto segments = runs::parse_segments(three_segments(cpu_numerics()).dump(),
                                               kFile, cpu_numerics());
    QVERIFY(runs::is_mixed(segments));
    QVERIFY(!runs::is_mixed({segments[0], segments[1]}));
    QVERIFY(!runs::is_mixed({segments[0]}));
    QVERIFY(!runs::is_mixed({segment(0, 0, "initial"), segment(1, 3, "unchecked")}));
  }

  void segment_of_step_and_starts() {
    const std::vector<runs::NumericsSegment> segments = {
        segment(0, 0, "initial"), segment(1, 30, "verified"), segment(2, 30, "accepted"),
        segment(3, 45, "verified")};
    QCOMPARE(runs::segment_starts(segments), (std::vector<int>{0, 30, 30, 45}));
    QCOMPARE(runs::segment_of_step(segments, 0), 0);
    QCOMPARE(runs::segment_of_step(segments, 29), 0);
    QCOMPARE(runs::segment_of_step(segments, 30), 2);  // segment 1 computed nothing
    QCOMPARE(runs::segment_of_step(segments, 44), 2);
    QCOMPARE(runs::segment_of_step(segments, 45), 3);
    QCOMPARE(runs::segment_of_step(segments, 1000), 3);
    QCOMPARE(runs::segment_of_step({segment(0, 0, "initial")}, 7), 0);
  }

  void describe_segments_gives_step_ranges() {
    std::vector<runs::NumericsSegment> segments = {segment(0, 0, "initial"),
                                                   segment(1, 30, "accepted")};
    segments[0].host = "a";
    segments[1].host = "b";
    segments[1].changed = {"cpu.openblas_core"};
    segments[1].recomputed_steps = {0, 29};
    segments[1].difference = runs::OutputDifference{29, "sample", 1.2e-7, 3e-6};
    QCOMPARE(runs::describe_segments(segments, 49),
             std::string("steps 0-29: segment 0 (initial, host a); steps 30-48: segment 1 "
                         "(accepted: changed cpu.openblas_core; step 29 differed in sample, "
                         "rel L2 1.2e-07, host b)"));
    // Verified: the recomputed steps are listed; one step and no steps.
    segments[1].check = "verified";
    segments[1].difference.reset();
    segments[1].changed = {"cpu.threads", "env.OMP_NUM_THREADS"};
    QCOMPARE(runs::describe_segments(segments, 31),
             std::string("steps 0-29: segment 0 (initial, host a); step 30: segment 1 "
                         "(verified: changed cpu.threads env.OMP_NUM_THREADS; recomputed steps "
                         "0, 29 bitwise equal, host b)"));
    segments[1].first_step = 5;
    segments[1].recomputed_steps = {4};
    segments[1].host.clear();
    QCOMPARE(runs::describe_segments(segments, 6),
             std::string("steps 0-4: segment 0 (initial, host a); step 5: segment 1 (verified: "
                         "changed cpu.threads env.OMP_NUM_THREADS; recomputed step 4 bitwise "
                         "equal)"));
    segments[1].check = "unchecked";
    segments[1].recomputed_steps.clear();
    QCOMPARE(runs::describe_segments(segments, 5),
             std::string("steps 0-4: segment 0 (initial, host a); no steps: segment 1 "
                         "(unchecked: changed cpu.threads env.OMP_NUM_THREADS)"));
    QCOMPARE(runs::describe_segments({segment(0, 0, "initial")}, 0),
             std::string("no steps: segment 0 (initial)"));
    QCOMPARE(runs::describe_segments({segment(0, 0, "initial")}, 1),
             std::string("step 0: segment 0 (initial)"));
  }

  void short_figure_keeps_three_digits() {
    QCOMPARE(runs::short_figure(1.2345e-7), std::string("1.23e-07"));
    QCOMPARE(runs::short_figure(0.5), std::string("0.5"));
    QCOMPARE(runs::short_figure(0), std::string("0"));
  }
};

QTEST_APPLESS_MAIN(TestNumericsSegments)
#include "test_numerics_segments.moc"
