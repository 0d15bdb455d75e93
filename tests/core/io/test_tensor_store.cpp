// TensorStore: single files, diffusers' sharded index, and hostile indexes.
#include <QTemporaryDir>
#include <QtTest>

#include "core/io/atomic_file.h"
#include "core/io/tensor_store.h"
#include "io_test_util.h"

using namespace h3p::io;
using namespace h3p::io::test;
namespace fs = std::filesystem;

namespace {

// Writes a shard holding `names`, each one I32 scalar equal to its position + base.
void write_shard(const fs::path& path, const std::vector<std::string>& names, int base = 0) {
  std::vector<std::int32_t> values(names.size());
  std::vector<TensorRecord> records;
  for (std::size_t i = 0; i < names.size(); ++i) {
    values[i] = base + static_cast<int>(i);
    records.push_back({names[i], DType::I32, {}, std::as_bytes(std::span(&values[i], 1))});
  }
  write_safetensors(path, records);
}

std::string index_json(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string text = "{\"metadata\":{\"total_size\":16},\"weight_map\":{";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) text += ",";
    text += "\"" + entries[i].first + "\":\"" + entries[i].second + "\"";
  }
  return text + "}}";
}

std::int32_t value_of(const StoredTensor& t) {
  std::int32_t v = 0;
  std::memcpy(&v, t.file->bytes(*t.info).data(), 4);
  return v;
}

}  // namespace

class TestTensorStore : public QObject {
  Q_OBJECT

 private slots:
  void init();
  void singleFile();
  void shardedHappyPath();
  void indexWinsOverSingleFile();
  void symlinkInsideDirectoryAccepted();
  void neitherFileExists();
  void refusesHostileShardNames_data();
  void refusesHostileShardNames();
  void refusesSymlinkEscape();
  void refusesMissingTensor();
  void refusesTensorInTwoShards();
  void refusesDuplicateMapKey();
  void refusesUnlistedTensor();
  void refusesMalformedIndex_data();
  void refusesMalformedIndex();
  void refusesMissingShard();

 private:
  std::unique_ptr<QTemporaryDir> tmp_;
  fs::path root_;  // the temporary directory
  fs::path dir_;   // the component directory inside it
  fs::path index_path() const { return dir_ / "model.safetensors.index.json"; }
};

void TestTensorStore::init() {
  tmp_ = std::make_unique<QTemporaryDir>();
  root_ = tmp_->path().toStdString();
  dir_ = root_ / "transformer";
  fs::create_directory(dir_);
}

void TestTensorStore::singleFile() {
  write_shard(dir_ / "model.safetensors", {"b.weight", "a.bias", "c"}, 10);
  const auto store = TensorStore::open(dir_, "model");
  QCOMPARE(store.files().size(), 1u);
  QCOMPARE(store.names(), (std::vector<std::string>{"a.bias", "b.weight", "c"}));
  QCOMPARE(value_of(store.at("b.weight")), 10);
  QCOMPARE(value_of(store.at("a.bias")), 11);
  QVERIFY(store.find("zzz").file == nullptr);
  QVERIFY(store.find("zzz").info == nullptr);
  H3P_EXPECT_INPUT_ERROR(store.at("zzz"), dir_.string(), "missing tensor 'zzz'");
}

void TestTensorStore::shardedHappyPath() {
  write_shard(dir_ / "model-00002-of-00002.safetensors", {"y", "z"}, 20);
  write_shard(dir_ / "model-00001-of-00002.safetensors", {"x", "w"}, 10);
  atomic_write_text(index_path(), index_json({{"x", "model-00001-of-00002.safetensors"},
                                              {"z", "model-00002-of-00002.safetensors"},
                                              {"w", "model-00001-of-00002.safetensors"},
                                              {"y", "model-00002-of-00002.safetensors"}}));
  auto store = TensorStore::open(dir_, "model");
  QCOMPARE(store.files().size(), 2u);
  QCOMPARE(store.files()[0].path().filename().string(),
           std::string("model-00001-of-00002.safetensors"));
  QCOMPARE(store.files()[1].path().filename().string(),
           std::string("model-00002-of-00002.safetensors"));
  QCOMPARE(store.names(), (std::vector<std::string>{"w", "x", "y", "z"}));
  QCOMPARE(store.at("x").file, &store.files()[0]);
  QCOMPARE(store.at("z").file, &store.files()[1]);
  QCOMPARE(value_of(store.at("x")), 10);
  QCOMPARE(value_of(store.at("w")), 11);
  QCOMPARE(value_of(store.at("y")), 20);
  QCOMPARE(value_of(store.at("z")), 21);
  // Moving the store keeps located tensors valid.
  const TensorStore moved = std::move(store);
  QCOMPARE(value_of(moved.at("z")), 21);
}

void TestTensorStore::indexWinsOverSingleFile() {
  write_shard(dir_ / "model.safetensors", {"single"});
  write_shard(dir_ / "s1.safetensors", {"sharded"}, 5);
  atomic_write_text(index_path(), index_json({{"sharded", "s1.safetensors"}}));
  const auto store = TensorStore::open(dir_, "model");
  QCOMPARE(store.names(), std::vector<std::string>{"sharded"});
}

void TestTensorStore::symlinkInsideDirectoryAccepted() {
  fs::create_directory(dir_ / "blobs");
  write_shard(dir_ / "blobs" / "abc123", {"t"}, 3);
  fs::create_symlink("blobs/abc123", dir_ / "s1.safetensors");
  atomic_write_text(index_path(), index_json({{"t", "s1.safetensors"}}));
  QCOMPARE(value_of(TensorStore::open(dir_, "model").at("t")), 3);
}

void TestTensorStore::neitherFileExists() {
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), dir_.string(), "model.safetensors",
                         "model.safetensors.index.json");
}

void TestTensorStore::refusesHostileShardNames_data() {
  QTest::addColumn<QString>("shard");
  QTest::newRow("parent") << "../outside.safetensors";
  QTest::newRow("dotdot") << "..";
  QTest::newRow("dot") << ".";
  QTest::newRow("dotdot inside") << "a..b.safetensors";
  QTest::newRow("absolute") << "/etc/passwd";
  QTest::newRow("subdir") << "sub/s.safetensors";
  QTest::newRow("backslash") << "..\\\\outside.safetensors";  // JSON escape of one backslash
  QTest::newRow("empty") << "";
}

void TestTensorStore::refusesHostileShardNames() {
  QFETCH(QString, shard);
  // A real file where a traversal would land, so only the name check can refuse it.
  write_shard(root_ / "outside.safetensors", {"t"});
  fs::create_directory(dir_ / "sub");
  write_shard(dir_ / "sub" / "s.safetensors", {"t"});
  atomic_write_text(index_path(), index_json({{"t", shard.toStdString()}}));
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), index_path().string(), "weight_map",
                         "not a plain file name");
}

void TestTensorStore::refusesSymlinkEscape() {
  write_shard(root_ / "outside.safetensors", {"t"});
  fs::create_symlink(root_ / "outside.safetensors", dir_ / "s1.safetensors");
  atomic_write_text(index_path(), index_json({{"t", "s1.safetensors"}}));
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), index_path().string(),
                         "'s1.safetensors'", "outside the directory");
  // A relative link climbing out is refused too.
  fs::remove(dir_ / "s1.safetensors");
  fs::create_symlink("../outside.safetensors", dir_ / "s1.safetensors");
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), "outside the directory");
  // A dangling link is refused with the shard's name.
  fs::remove(dir_ / "s1.safetensors");
  fs::create_symlink("nowhere.safetensors", dir_ / "s1.safetensors");
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), "'s1.safetensors'");
}

void TestTensorStore::refusesMissingTensor() {
  write_shard(dir_ / "s1.safetensors", {"a"});
  atomic_write_text(index_path(),
                    index_json({{"a", "s1.safetensors"}, {"ghost", "s1.safetensors"}}));
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), index_path().string(), "'ghost'",
                         "missing from shard 's1.safetensors'");
}

void TestTensorStore::refusesTensorInTwoShards() {
  write_shard(dir_ / "s1.safetensors", {"a", "dup"});
  write_shard(dir_ / "s2.safetensors", {"b", "dup"});
  atomic_write_text(
      index_path(),
      index_json({{"a", "s1.safetensors"}, {"b", "s2.safetensors"}, {"dup", "s1.safetensors"}}));
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), "s2.safetensors", "'dup'", "one shard");
}

void TestTensorStore::refusesDuplicateMapKey() {
  write_shard(dir_ / "s1.safetensors", {"a"});
  write_shard(dir_ / "s2.safetensors", {"a"});
  atomic_write_text(index_path(), index_json({{"a", "s1.safetensors"}, {"a", "s2.safetensors"}}));
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), index_path().string(),
                         "duplicate key 'a'");
}

void TestTensorStore::refusesUnlistedTensor() {
  write_shard(dir_ / "s1.safetensors", {"a", "stowaway"});
  atomic_write_text(index_path(), index_json({{"a", "s1.safetensors"}}));
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), "s1.safetensors", "'stowaway'",
                         "not listed");
}

void TestTensorStore::refusesMalformedIndex_data() {
  QTest::addColumn<QString>("text");
  QTest::addColumn<QString>("fragment");
  QTest::newRow("not json") << "{\"weight_map\":"
                            << "invalid JSON";
  QTest::newRow("array") << "[]"
                         << "not a JSON object";
  QTest::newRow("no weight_map") << "{\"metadata\":{}}"
                                 << "weight_map";
  QTest::newRow("weight_map array") << "{\"weight_map\":[]}"
                                    << "weight_map";
  QTest::newRow("weight_map empty") << "{\"weight_map\":{}}"
                                    << "empty";
  QTest::newRow("shard not string") << "{\"weight_map\":{\"a\":1}}"
                                    << "'a'";
  QTest::newRow("duplicate weight_map") << "{\"weight_map\":{},\"weight_map\":{}}"
                                        << "duplicate entry 'weight_map'";
}

void TestTensorStore::refusesMalformedIndex() {
  QFETCH(QString, text);
  QFETCH(QString, fragment);
  atomic_write_text(index_path(), text.toStdString());
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), index_path().string(),
                         fragment.toStdString());
}

void TestTensorStore::refusesMissingShard() {
  atomic_write_text(index_path(), index_json({{"a", "s9.safetensors"}}));
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), "s9.safetensors", "cannot open");
  // A corrupt shard is refused with its own path.
  write_raw(dir_ / "s9.safetensors", "junk");
  H3P_EXPECT_INPUT_ERROR(TensorStore::open(dir_, "model"), "s9.safetensors", "truncated");
}

QTEST_APPLESS_MAIN(TestTensorStore)
#include "test_tensor_store.moc"
