// Hostile model directories through model::load_transformer: shard names escaping the
// directory, symlinks out of it, headers claiming huge sizes, overlapping and out-of-file
// offsets, dtype and shape mismatches. Each must be refused with an InputError naming the
// offending file and what is wrong; an untouched copy of the same checkpoint must load, so
// every refusal is caused by the one hostile edit.
#include <ATen/ATen.h>

#include <QTemporaryDir>
#include <QtTest/QtTest>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/common/error.h"
#include "core/io/atomic_file.h"
#include "core/io/safetensors.h"
#include "core/model/weights.h"

using namespace h3p;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kGolden = fs::path(H3P_SOURCE_DIR) / "tests/data/golden/tiny-fp32/transformer";
const std::string kWeights = "diffusion_pytorch_model.safetensors";
const std::string kIndex = "diffusion_pytorch_model.safetensors.index.json";

// A safetensors file split into its header (JSON) and data section (raw bytes).
struct RawCheckpoint {
  json header;
  std::string data;
};

RawCheckpoint read_raw(const fs::path& path) {
  const std::string bytes = io::read_file(path);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return {json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
}

// Writes `header` and `data` as a safetensors file; `claimed_length` replaces the true header
// length in the first 8 bytes when given.
void write_raw(const fs::path& path, const json& header, const std::string& data,
               std::optional<std::uint64_t> claimed_length = std::nullopt) {
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::uint64_t n = claimed_length.value_or(text.size());
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &n, 8);
  std::ofstream(path, std::ios::binary) << bytes << text << data;
}

// The golden tensor names in file order.
std::vector<std::string> names_in_file_order(const json& header) {
  std::vector<std::pair<std::uint64_t, std::string>> order;
  for (const auto& [name, entry] : header.items()) {
    if (name != "__metadata__") order.emplace_back(entry["data_offsets"][0], name);
  }
  std::sort(order.begin(), order.end());
  std::vector<std::string> out;
  for (auto& [offset, name] : order) out.push_back(name);
  return out;
}

}  // namespace

class HostileModelDirs : public QObject {
  Q_OBJECT

 private slots:
  void init() {
    tmp_ = std::make_unique<QTemporaryDir>();
    QVERIFY(tmp_->isValid());
    root_ = tmp_->path().toStdString();
    dir_ = root_ / "model" / "transformer";
    fs::create_directories(dir_);
    fs::copy_file(kGolden / "config.json", dir_ / "config.json");
  }

  void untouched_copy_loads() {
    fs::copy_file(kGolden / kWeights, dir_ / kWeights);
    const auto model = model::load_transformer(dir_, at::kCPU);
    QCOMPARE(model.config.hidden_size, 48);
  }

  void directory_reached_through_a_symlink_loads() {
    // The whole component may live elsewhere (a model kept outside a runs tree): only files
    // inside the component that lead out of it are refused.
    fs::copy_file(kGolden / kWeights, dir_ / kWeights);
    fs::create_directory_symlink(dir_, root_ / "linked");
    const auto model = model::load_transformer(root_ / "linked", at::kCPU);
    QCOMPARE(model.config.hidden_size, 48);
  }

  void refuses_shard_names_escaping_the_directory_data() {
    QTest::addColumn<QString>("shard");
    QTest::addColumn<QString>("why");
    QTest::newRow("parent") << QStringLiteral("../outside.safetensors")
                            << QStringLiteral("path separator");
    QTest::newRow("dotdot-only") << QStringLiteral("..") << QStringLiteral("'.' or '..'");
    QTest::newRow("dot") << QStringLiteral(".") << QStringLiteral("'.' or '..'");
    QTest::newRow("nested-parent")
        << QStringLiteral("sub/../../outside.safetensors") << QStringLiteral("path separator");
    QTest::newRow("backslash") << QStringLiteral("..\\outside.safetensors")
                               << QStringLiteral("path separator");
    QTest::newRow("empty") << QStringLiteral("") << QStringLiteral("empty");
    QTest::newRow("absolute") << QStringLiteral("ABSOLUTE") << QStringLiteral("path separator");
  }

  void refuses_shard_names_escaping_the_directory() {
    QFETCH(QString, shard);
    QFETCH(QString, why);
    // A valid checkpoint right outside the component: loading it would "work".
    fs::copy_file(kGolden / kWeights, dir_.parent_path() / "outside.safetensors");
    std::string name = shard.toStdString();
    if (name == "ABSOLUTE") name = (dir_.parent_path() / "outside.safetensors").string();
    const json header = read_raw(kGolden / kWeights).header;
    json map = json::object();
    for (const auto& tensor : names_in_file_order(header)) map[tensor] = name;
    io::atomic_write_text(dir_ / kIndex, json{{"weight_map", map}}.dump());
    expect_refused(
        {(dir_ / kIndex).string(), "weight_map", "not a plain file name", why.toStdString()});
  }

  void refuses_symlinked_shard_leaving_the_directory() {
    fs::copy_file(kGolden / kWeights, root_ / "elsewhere.safetensors");
    fs::create_symlink(root_ / "elsewhere.safetensors", dir_ / "shard-1.safetensors");
    const json header = read_raw(kGolden / kWeights).header;
    json map = json::object();
    for (const auto& tensor : names_in_file_order(header)) map[tensor] = "shard-1.safetensors";
    io::atomic_write_text(dir_ / kIndex, json{{"weight_map", map}}.dump());
    expect_refused({(dir_ / kIndex).string(), "'shard-1.safetensors'",
                    "symlink resolves outside the directory"});
  }

  void refuses_symlinked_weights_file_leaving_the_directory() {
    fs::copy_file(kGolden / kWeights, root_ / "elsewhere.safetensors");
    fs::create_symlink("../../elsewhere.safetensors", dir_ / kWeights);
    expect_refused({(dir_ / kWeights).string(), "symlink resolves outside the directory",
                    (fs::canonical(root_) / "elsewhere.safetensors").string()});
  }

  void refuses_symlinked_index_leaving_the_directory() {
    fs::copy_file(kGolden / kWeights, dir_ / kWeights);
    const json header = read_raw(kGolden / kWeights).header;
    json map = json::object();
    for (const auto& tensor : names_in_file_order(header)) map[tensor] = kWeights;
    io::atomic_write_text(root_ / "index.json", json{{"weight_map", map}}.dump());
    fs::create_symlink(root_ / "index.json", dir_ / kIndex);
    expect_refused({(dir_ / kIndex).string(), "symlink resolves outside the directory"});
  }

  void refuses_symlink_inside_to_a_device() {
    // Inside the directory by name, but not a regular file.
    fs::create_symlink("/dev/zero", dir_ / kWeights);
    expect_refused({(dir_ / kWeights).string(), "outside the directory"});
  }

  void refuses_headers_claiming_huge_sizes_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("why");
    QTest::newRow("header-length-2^63") << 0 << QStringLiteral("exceeds the limit");
    QTest::newRow("header-length-past-file")
        << 1 << QStringLiteral("runs past the end of the file");
    QTest::newRow("shape-overflows-64-bits") << 2 << QStringLiteral("overflows 64 bits");
    QTest::newRow("shape-of-4-TiB") << 3 << QStringLiteral("past the end of the file");
    QTest::newRow("dim-beyond-int64") << 4 << QStringLiteral("too large");
  }

  void refuses_headers_claiming_huge_sizes() {
    QFETCH(int, kind);
    QFETCH(QString, why);
    RawCheckpoint raw = read_raw(kGolden / kWeights);
    const std::string last = names_in_file_order(raw.header).back();
    json& entry = raw.header[last];
    const std::uint64_t begin = entry["data_offsets"][0];
    std::optional<std::uint64_t> claimed;
    switch (kind) {
      case 0:
        claimed = std::uint64_t(1) << 63;
        break;
      case 1:
        claimed = 8 + raw.header.dump().size() + raw.data.size() + 8;
        break;
      case 2:
        entry["shape"] = {std::uint64_t(1) << 40, std::uint64_t(1) << 40};
        break;
      case 3:
        entry["shape"] = {std::uint64_t(1) << 20, std::uint64_t(1) << 20};
        entry["data_offsets"] = {begin, begin + (std::uint64_t(4) << 40)};
        break;
      case 4:
        entry["shape"] = {std::uint64_t(1) << 63};
        break;
    }
    write_raw(dir_ / kWeights, raw.header, raw.data, claimed);
    expect_refused({(dir_ / kWeights).string(), why.toStdString()});
  }

  void refuses_overlapping_offsets() {
    RawCheckpoint raw = read_raw(kGolden / kWeights);
    const auto names = names_in_file_order(raw.header);
    // The second tensor starts 4 bytes early (inside the first) and the data shrinks to match.
    json& second = raw.header[names[1]];
    const std::uint64_t begin = second["data_offsets"][0];
    const std::uint64_t end = second["data_offsets"][1];
    second["data_offsets"] = {begin - 4, end - 4};
    for (std::size_t i = 2; i < names.size(); ++i) {
      json& e = raw.header[names[i]];
      e["data_offsets"] = {std::uint64_t(e["data_offsets"][0]) - 4,
                           std::uint64_t(e["data_offsets"][1]) - 4};
    }
    raw.data.resize(raw.data.size() - 4);
    write_raw(dir_ / kWeights, raw.header, raw.data);
    expect_refused(
        {(dir_ / kWeights).string(), "'" + names[1] + "'", "overlaps", "'" + names[0] + "'"});
  }

  void refuses_out_of_file_offsets() {
    RawCheckpoint raw = read_raw(kGolden / kWeights);
    const std::string last = names_in_file_order(raw.header).back();
    raw.data.resize(raw.data.size() - 4);  // the file ends 4 bytes before the last tensor does
    write_raw(dir_ / kWeights, raw.header, raw.data);
    expect_refused({(dir_ / kWeights).string(), "'" + last + "'", "past the end of the file"});
  }

  void refuses_out_of_file_offsets_in_a_shard() {
    // Same defect one level down: the message names the shard, not the index.
    RawCheckpoint raw = read_raw(kGolden / kWeights);
    const auto names = names_in_file_order(raw.header);
    raw.data.resize(raw.data.size() - 4);
    write_raw(dir_ / "part-1.safetensors", raw.header, raw.data);
    json map = json::object();
    for (const auto& tensor : names) map[tensor] = "part-1.safetensors";
    io::atomic_write_text(dir_ / kIndex, json{{"weight_map", map}}.dump());
    expect_refused({(dir_ / "part-1.safetensors").string(), "past the end of the file"});
  }

  void refuses_trailing_bytes() {
    RawCheckpoint raw = read_raw(kGolden / kWeights);
    write_raw(dir_ / kWeights, raw.header, raw.data + std::string(16, '\0'));
    expect_refused({(dir_ / kWeights).string(), "16 trailing bytes"});
  }

  void refuses_dtype_and_shape_mismatches_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("why");
    QTest::newRow("dtype-size-vs-offsets") << 0 << QStringLiteral("needs");
    QTest::newRow("shape-vs-offsets") << 1 << QStringLiteral("needs");
    QTest::newRow("unknown-dtype") << 2 << QStringLiteral("unknown or unsupported dtype");
    QTest::newRow("negative-dim") << 3 << QStringLiteral("negative dim");
    QTest::newRow("wrong-parameter-shape") << 4 << QStringLiteral("has shape");
    QTest::newRow("integer-parameter") << 5 << QStringLiteral("is not floating point");
  }

  void refuses_dtype_and_shape_mismatches() {
    QFETCH(int, kind);
    QFETCH(QString, why);
    const std::string target = "proj_out.bias";
    if (kind <= 3) {
      // Header edits the file layout itself refuses.
      RawCheckpoint raw = read_raw(kGolden / kWeights);
      json& entry = raw.header[target];
      switch (kind) {
        case 0:
          entry["dtype"] = "F16";
          break;
        case 1:
          entry["shape"] = {std::uint64_t(entry["shape"][0]) + 1};
          break;
        case 2:
          entry["dtype"] = "F128";
          break;
        case 3:
          entry["shape"] = {-4};
          break;
      }
      write_raw(dir_ / kWeights, raw.header, raw.data);
      expect_refused({(dir_ / kWeights).string(), "'" + target + "'", why.toStdString()});
      return;
    }
    // A well-formed file whose parameter does not fit the config: the model loader refuses.
    const auto file = io::SafetensorsFile::open(kGolden / kWeights);
    std::vector<io::TensorRecord> records;
    std::vector<std::byte> replacement;
    for (const auto& info : file.tensors()) {
      io::TensorRecord record{info.name, info.dtype, info.shape, file.bytes(info)};
      if (info.name == target) {
        if (kind == 4) {
          record.shape = {info.shape[0] * 2};
          replacement.assign(info.nbytes() * 2, std::byte{0});
        } else {
          record.dtype = io::DType::I32;
          replacement.assign(info.nbytes(), std::byte{0});
        }
        record.bytes = replacement;
      }
      records.push_back(record);
    }
    io::write_safetensors(dir_ / kWeights, records);
    expect_refused({dir_.string(), "parameter '" + target + "'", why.toStdString()});
  }

 private:
  // load_transformer on dir_ must throw InputError whose message holds every needle.
  void expect_refused(const std::vector<std::string>& needles) {
    try {
      model::load_transformer(dir_, at::kCPU);
    } catch (const InputError& e) {
      const std::string what = e.what();
      for (const auto& needle : needles) {
        QVERIFY2(what.find(needle) != std::string::npos,
                 ("'" + needle + "' not in: " + what).c_str());
      }
      return;
    }
    QFAIL("the hostile directory was loaded");
  }

  std::unique_ptr<QTemporaryDir> tmp_;
  fs::path root_;  // the temporary directory
  fs::path dir_;   // root_/model/transformer, the component under test
};

QTEST_APPLESS_MAIN(HostileModelDirs)
#include "test_hostile_model_dirs.moc"
