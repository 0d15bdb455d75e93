// safetensors reader and writer: round trips of every dtype, a hand-built byte-exact file,
// and one refused file per validation rule.
#include <sys/stat.h>

#include <QTemporaryDir>
#include <QtTest>
#include <optional>

#include "core/io/safetensors.h"
#include "core/io/sha256.h"
#include "io_test_util.h"

using namespace h3p::io;
using namespace h3p::io::test;

namespace {

constexpr DType kAllDTypes[] = {DType::F32, DType::BF16, DType::F16, DType::F64,
                                DType::I64, DType::I32,  DType::U8,  DType::BOOL};

struct OwnedTensor {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;
};

std::vector<TensorRecord> records_of(const std::vector<OwnedTensor>& owned) {
  std::vector<TensorRecord> out;
  for (const auto& t : owned) out.push_back({t.name, t.dtype, t.shape, t.bytes});
  return out;
}

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

}  // namespace

class TestSafetensors : public QObject {
  Q_OBJECT

 private slots:
  void dtypeTable();
  void roundTripEveryDtype();
  void byteExactHandBuiltFile();
  void readsHandBuiltFile();
  void zeroSizeTensorsShareOffsets();
  void emptyFile();
  void lookupByName();
  void refusesInvalidHeader_data();
  void refusesInvalidHeader();
  void refusesTruncatedFile();
  void refusesHeaderLengthBeyondFile();
  void refusesHeaderLengthOverLimit();
  void refusesEveryTruncation();
  void survivesCorruptedHeaderBytes();
  void parseInMemoryAgreesWithOpen();
  void writerRefusesBadRecords();

 private:
  QTemporaryDir tmp_;
  std::filesystem::path file(const char* name) const {
    return std::filesystem::path(tmp_.path().toStdString()) / name;
  }
};

void TestSafetensors::dtypeTable() {
  const std::pair<const char*, std::size_t> expected[] = {{"F32", 4}, {"BF16", 2}, {"F16", 2},
                                                          {"F64", 8}, {"I64", 8},  {"I32", 4},
                                                          {"U8", 1},  {"BOOL", 1}};
  for (std::size_t i = 0; i < std::size(kAllDTypes); ++i) {
    QCOMPARE(dtype_name(kAllDTypes[i]), std::string_view(expected[i].first));
    QCOMPARE(dtype_size(kAllDTypes[i]), expected[i].second);
    QCOMPARE(parse_dtype(expected[i].first), std::optional<DType>(kAllDTypes[i]));
  }
  QVERIFY(!parse_dtype("f32").has_value());
  QVERIFY(!parse_dtype("F8_E4M3").has_value());
  QVERIFY(!parse_dtype("").has_value());
}

void TestSafetensors::roundTripEveryDtype() {
  auto rng = seeded_rng("roundTripEveryDtype");
  const std::vector<std::vector<std::int64_t>> shapes = {{},     {0},       {1},      {7},
                                                         {2, 3}, {2, 0, 4}, {3, 1, 5}};
  std::vector<OwnedTensor> owned;
  for (DType dtype : kAllDTypes) {
    for (std::size_t s = 0; s < shapes.size(); ++s) {
      OwnedTensor t{
          std::string(dtype_name(dtype)) + ".t" + std::to_string(s), dtype, shapes[s], {}};
      std::size_t numel = 1;
      for (auto d : t.shape) numel *= static_cast<std::size_t>(d);
      t.bytes = random_bytes(rng, numel * dtype_size(dtype));
      if (dtype == DType::BOOL) {
        for (auto& b : t.bytes) b = static_cast<std::byte>(static_cast<int>(b) & 1);
      }
      owned.push_back(std::move(t));
    }
  }
  std::shuffle(owned.begin(), owned.end(), rng);
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "héllo \"q\""}};
  const auto records = records_of(owned);

  const auto image = encode_safetensors(records, metadata);
  QCOMPARE(encode_safetensors(records, metadata), image);  // deterministic
  const auto path = file("round.safetensors");
  const std::string digest = write_safetensors(path, records, metadata);
  const std::string on_disk = read_raw(path);
  QCOMPARE(on_disk.size(), image.size());
  QVERIFY(std::memcmp(on_disk.data(), image.data(), image.size()) == 0);
  QCOMPARE(digest, sha256_hex(image));

  std::uint64_t header_len = 0;
  std::memcpy(&header_len, on_disk.data(), 8);
  QCOMPARE(header_len % 8, 0u);

  const auto st = SafetensorsFile::open(path);
  QCOMPARE(st.metadata(), metadata);
  QCOMPARE(st.tensors().size(), owned.size());
  // File order is the given order: offsets ascend along `owned`.
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    const TensorInfo& info = st.at(owned[i].name);
    QCOMPARE(info.dtype, owned[i].dtype);
    QCOMPARE(info.shape, owned[i].shape);
    QCOMPARE(info.begin, offset);
    QCOMPARE(info.nbytes(), owned[i].bytes.size());
    offset = info.end;
    const auto bytes = st.bytes(info);
    QVERIFY(std::equal(bytes.begin(), bytes.end(), owned[i].bytes.begin(), owned[i].bytes.end()));
  }
  for (std::size_t i = 1; i < st.tensors().size(); ++i) {
    QVERIFY(st.tensors()[i - 1].begin <= st.tensors()[i].begin);
  }
}

void TestSafetensors::byteExactHandBuiltFile() {
  const float a[2] = {1.0f, -2.0f};
  const std::uint8_t b = 7;
  const std::vector<TensorRecord> records = {
      {"a", DType::F32, {2}, std::as_bytes(std::span(a))},
      {"b", DType::U8, {}, std::as_bytes(std::span(&b, 1))},
  };
  // 130 bytes of JSON + 6 spaces = 136 = 0x88.
  const std::string expected =
      std::string("\x88\0\0\0\0\0\0\0", 8) +
      "{\"__metadata__\":{\"k\":\"v\"},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[8,9]}}      " +
      std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0\x07", 9);
  QCOMPARE(expected.size(), 8u + 136u + 9u);
  const auto image = encode_safetensors(records, {{"k", "v"}});
  QCOMPARE(std::string(reinterpret_cast<const char*>(image.data()), image.size()), expected);
  const auto path = file("exact.safetensors");
  write_safetensors(path, records, {{"k", "v"}});
  QCOMPARE(read_raw(path), expected);
}

void TestSafetensors::readsHandBuiltFile() {
  // Entries deliberately out of file order, header padded with spaces.
  const std::string header = "{" + entry("second", "I32", "[1]", "[8,12]") + "," +
                             entry("first", "F64", "[]", "[0,8]") + "}   ";
  std::string data = make_file(header, 0);
  const double pi = 3.25;
  data.append(reinterpret_cast<const char*>(&pi), 8);
  data += std::string("\x05\x00\x00\x00", 4);
  const auto path = file("hand.safetensors");
  write_raw(path, data);
  const auto st = SafetensorsFile::open(path);
  QCOMPARE(st.tensors().size(), 2u);
  QCOMPARE(st.tensors()[0].name, std::string("first"));
  QCOMPARE(st.tensors()[1].name, std::string("second"));
  QCOMPARE(st.tensors()[0].numel(), 1u);
  double read_pi = 0;
  std::memcpy(&read_pi, st.bytes(st.at("first")).data(), 8);
  QCOMPARE(read_pi, 3.25);
  std::int32_t five = 0;
  std::memcpy(&five, st.bytes(st.at("second")).data(), 4);
  QCOMPARE(five, 5);
  QVERIFY(st.metadata().empty());
}

void TestSafetensors::zeroSizeTensorsShareOffsets() {
  const std::string header = "{" + entry("z2", "F32", "[0,3]", "[4,4]") + "," +
                             entry("x", "F32", "[1]", "[0,4]") + "," +
                             entry("z1", "BF16", "[0]", "[0,0]") + "}";
  const auto path = file("zero.safetensors");
  write_raw(path, make_file(header, 4));
  const auto st = SafetensorsFile::open(path);
  QCOMPARE(st.tensors().size(), 3u);
  QCOMPARE(st.tensors()[0].name, std::string("z1"));
  QCOMPARE(st.tensors()[1].name, std::string("x"));
  QCOMPARE(st.tensors()[2].name, std::string("z2"));
  QCOMPARE(st.bytes(st.at("z2")).size(), 0u);
  QCOMPARE(st.at("z2").numel(), 0u);
}

void TestSafetensors::emptyFile() {
  const auto path = file("empty.safetensors");
  QCOMPARE(write_safetensors(path, {}), sha256_hex(encode_safetensors({})));
  QCOMPARE(read_raw(path), le64(8) + "{}      ");
  const auto st = SafetensorsFile::open(path);
  QVERIFY(st.tensors().empty());
  QVERIFY(st.metadata().empty());
}

void TestSafetensors::lookupByName() {
  const std::int64_t v = 42;
  const auto path = file("lookup.safetensors");
  write_safetensors(path, {{"w", DType::I64, {1}, std::as_bytes(std::span(&v, 1))}});
  const auto st = SafetensorsFile::open(path);
  const auto copy = st;  // shares the mapping
  QVERIFY(copy.find("w") != nullptr);
  QVERIFY(copy.find("nope") == nullptr);
  H3P_EXPECT_INPUT_ERROR(copy.at("nope"), path.string(), "no tensor 'nope'");
}

void TestSafetensors::refusesInvalidHeader_data() {
  QTest::addColumn<QByteArray>("header");
  QTest::addColumn<int>("data_bytes");
  QTest::addColumn<QStringList>("fragments");
  auto row = [](const char* tag, const std::string& header, int data, QStringList frags) {
    QTest::newRow(tag) << QByteArray::fromStdString(header) << data << frags;
  };
  row("not json", "{\"a\":", 0, {"header", "invalid JSON"});
  row("not an object", "[1,2]", 0, {"header", "not a JSON object"});
  row("string header", "\"x\"", 0, {"not a JSON object"});
  row("bad dtype", "{" + entry("t", "F8", "[1]", "[0,1]") + "}", 1, {"'t'", "dtype"});
  row("lowercase dtype", "{" + entry("t", "f32", "[1]", "[0,4]") + "}", 4, {"'t'", "dtype"});
  row("dtype not string", "{\"t\":{\"dtype\":1,\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
      {"'t'", "dtype"});
  row("negative dim", "{" + entry("t", "F32", "[2,-1]", "[0,0]") + "}", 0, {"'t'", "negative dim"});
  row("fractional dim", "{" + entry("t", "F32", "[1.5]", "[0,4]") + "}", 4,
      {"'t'", "shape", "not an integer"});
  row("shape not array", "{" + entry("t", "F32", "3", "[0,12]") + "}", 12, {"'t'", "shape"});
  row("shape overflow", "{" + entry("t", "F32", "[4294967296,4294967296,16]", "[0,4]") + "}", 4,
      {"'t'", "overflows"});
  row("wrong byte count", "{" + entry("t", "F32", "[2]", "[0,4]") + "}", 4, {"'t'", "needs 8"});
  row("offsets reversed", "{" + entry("t", "U8", "[0]", "[4,0]") + "}", 4, {"'t'", "before begin"});
  row("negative offset", "{" + entry("t", "U8", "[4]", "[-4,0]") + "}", 4, {"'t'", "data_offsets"});
  row("three offsets", "{" + entry("t", "U8", "[4]", "[0,4,8]") + "}", 4, {"'t'", "data_offsets"});
  row("gap at start", "{" + entry("t", "U8", "[4]", "[4,8]") + "}", 8, {"'t'", "gap of 4"});
  row("gap between",
      "{" + entry("a", "F32", "[1]", "[0,4]") + "," + entry("b", "F32", "[1]", "[8,12]") + "}", 12,
      {"'b'", "gap of 4"});
  row("overlap",
      "{" + entry("a", "F32", "[2]", "[0,8]") + "," + entry("b", "F32", "[2]", "[4,12]") + "}", 12,
      {"'b'", "overlaps tensor 'a'"});
  row("same range twice",
      "{" + entry("a", "F32", "[1]", "[0,4]") + "," + entry("b", "F32", "[1]", "[0,4]") + "}", 4,
      {"overlaps"});
  row("offsets past end", "{" + entry("t", "F32", "[2]", "[0,8]") + "}", 4,
      {"'t'", "past the end"});
  row("trailing bytes", "{" + entry("t", "F32", "[1]", "[0,4]") + "}", 8, {"4 trailing bytes"});
  row("data without tensors", "{}", 3, {"3 trailing bytes"});
  row("duplicate names",
      "{" + entry("a", "F32", "[1]", "[0,4]") + "," + entry("a", "F32", "[1]", "[4,8]") + "}", 8,
      {"duplicate entry 'a'"});
  row("duplicate field",
      "{\"t\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],"
      "\"data_offsets\":[0,1]}}",
      1, {"'t'", "duplicate key 'dtype'"});
  row("duplicate metadata key", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0,
      {"__metadata__", "duplicate key 'k'"});
  row("metadata value not string", "{\"__metadata__\":{\"k\":1}}", 0,
      {"__metadata__", "'k'", "not a string"});
  row("metadata nested", "{\"__metadata__\":{\"k\":{\"x\":\"y\"}}}", 0, {"__metadata__", "'k'"});
  row("metadata not object", "{\"__metadata__\":[\"a\"]}", 0, {"__metadata__"});
  row("entry not object", "{\"t\":[1]}", 0, {"'t'", "not a JSON object"});
  row("missing field", "{\"t\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, {"'t'", "data_offsets"});
  row("unknown field",
      "{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],"
      "\"extra\":0}}",
      1, {"'t'", "'extra'"});
  row("invalid utf8", "{\"\xff\":{}}", 0, {"invalid JSON"});
  row("trailing garbage", "{} x", 0, {"invalid JSON"});
  row("empty header", "", 0, {"invalid JSON"});
}

void TestSafetensors::refusesInvalidHeader() {
  QFETCH(QByteArray, header);
  QFETCH(int, data_bytes);
  QFETCH(QStringList, fragments);
  const auto path = file("bad.safetensors");
  write_raw(path, make_file(header.toStdString(), static_cast<std::size_t>(data_bytes)));
  std::vector<std::string> expected = {path.string()};
  for (const auto& f : fragments) expected.push_back(f.toStdString());
  const std::string message = input_error_of([&] { SafetensorsFile::open(path); });
  for (const auto& fragment : expected) {
    QVERIFY2(message.find(fragment) != std::string::npos,
             qPrintable(QString::fromStdString("\"" + message + "\" lacks \"" + fragment + "\"")));
  }
}

void TestSafetensors::refusesTruncatedFile() {
  const auto path = file("short.safetensors");
  write_raw(path, "\x02\0\0");
  H3P_EXPECT_INPUT_ERROR(SafetensorsFile::open(path), path.string(), "truncated");
  write_raw(path, "");
  H3P_EXPECT_INPUT_ERROR(SafetensorsFile::open(path), path.string(), "truncated");
  H3P_EXPECT_INPUT_ERROR(SafetensorsFile::open(file("absent.safetensors")), "absent.safetensors",
                         "cannot open");
  H3P_EXPECT_INPUT_ERROR(SafetensorsFile::open(file("")), "not a regular file");
  const auto fifo = file("fifo.safetensors");
  QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
  H3P_EXPECT_INPUT_ERROR(SafetensorsFile::open(fifo), fifo.string(), "not a regular file");
}

void TestSafetensors::refusesHeaderLengthBeyondFile() {
  const auto path = file("beyond.safetensors");
  write_raw(path, le64(1000) + "{}");
  H3P_EXPECT_INPUT_ERROR(SafetensorsFile::open(path), path.string(), "header length 1000",
                         "past the end");
  write_raw(path, le64(~0ull) + "{}");  // also past the limit: refused either way, no overflow
  H3P_EXPECT_INPUT_ERROR(SafetensorsFile::open(path), path.string(), "header length");
}

void TestSafetensors::refusesHeaderLengthOverLimit() {
  const auto path = file("huge.safetensors");
  write_raw(path, le64(kMaxHeaderBytes + 8) + "{}");
  H3P_EXPECT_INPUT_ERROR(SafetensorsFile::open(path), path.string(), "exceeds the limit");
}

void TestSafetensors::refusesEveryTruncation() {
  auto rng = seeded_rng("refusesEveryTruncation");
  const auto payload = random_bytes(rng, 24);
  const auto image = encode_safetensors({{"a", DType::F32, {2, 3}, payload}}, {{"m", "v"}});
  const std::string full(reinterpret_cast<const char*>(image.data()), image.size());
  const auto path = file("trunc.safetensors");
  for (std::size_t n = 0; n < full.size(); ++n) {
    write_raw(path, full.substr(0, n));
    const std::string message = input_error_of([&] { SafetensorsFile::open(path); });
    QVERIFY2(message.find(path.string()) != std::string::npos,
             qPrintable(QString("length %1: %2").arg(n).arg(QString::fromStdString(message))));
  }
  write_raw(path, full);
  QCOMPARE(SafetensorsFile::open(path).tensors().size(), 1u);
}

void TestSafetensors::survivesCorruptedHeaderBytes() {
  // A hostile file is refused with an InputError or read consistently; never out of bounds.
  auto rng = seeded_rng("survivesCorruptedHeaderBytes");
  const auto a = random_bytes(rng, 16);
  const auto b = random_bytes(rng, 6);
  const auto image = encode_safetensors(
      {{"alpha", DType::I64, {2}, a}, {"beta", DType::BF16, {1, 3}, b}}, {{"k", "v"}});
  const auto path = file("fuzz.safetensors");
  std::size_t refused = 0;
  for (int round = 0; round < 300; ++round) {
    std::string bytes(reinterpret_cast<const char*>(image.data()), image.size());
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      const std::size_t at = rng() % (image.size() - 22);  // header region and length
      bytes[at] = static_cast<char>(rng() & 0xff);
    }
    write_raw(path, bytes);
    try {
      const auto st = SafetensorsFile::open(path);
      std::uint64_t total = 0;
      for (const auto& info : st.tensors()) total += st.bytes(info).size();
      QVERIFY(total <= bytes.size());
    } catch (const h3p::InputError& e) {
      ++refused;
      QVERIFY(std::string(e.what()).find(path.string()) != std::string::npos);
    }
  }
  QVERIFY(refused > 0);
}

void TestSafetensors::parseInMemoryAgreesWithOpen() {
  // SafetensorsFile::parse (an image in memory, what the fuzz target drives) must accept and
  // refuse exactly what open() does, with the same message under the given name.
  auto rng = seeded_rng("parseInMemoryAgreesWithOpen");
  const auto a = random_bytes(rng, 16);
  const auto b = random_bytes(rng, 6);
  const auto image = encode_safetensors(
      {{"alpha", DType::I64, {2}, a}, {"beta", DType::BF16, {1, 3}, b}}, {{"k", "v"}});
  const auto path = file("same.safetensors");
  std::size_t refused = 0;
  std::size_t accepted = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<std::byte> bytes = image;
    if (round > 0) {
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) bytes[rng() % (image.size() - 22)] = std::byte(rng() & 0xff);
    }
    if (round % 7 == 3) bytes.resize(rng() % bytes.size());  // truncations too
    write_raw(path, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    std::string from_file;
    std::string from_memory;
    std::optional<SafetensorsFile> opened;
    std::optional<SafetensorsFile> parsed;
    try {
      opened = SafetensorsFile::open(path);
    } catch (const h3p::InputError& e) {
      from_file = e.what();
    }
    try {
      parsed = SafetensorsFile::parse(bytes, path);
    } catch (const h3p::InputError& e) {
      from_memory = e.what();
    }
    QCOMPARE(QString::fromStdString(from_memory), QString::fromStdString(from_file));
    QCOMPARE(parsed.has_value(), opened.has_value());
    if (!parsed) {
      ++refused;
      continue;
    }
    ++accepted;
    QCOMPARE(parsed->path(), path);
    QCOMPARE(parsed->metadata(), opened->metadata());
    QCOMPARE(parsed->tensors().size(), opened->tensors().size());
    for (std::size_t i = 0; i < parsed->tensors().size(); ++i) {
      const TensorInfo& x = parsed->tensors()[i];
      const TensorInfo& y = opened->tensors()[i];
      QCOMPARE(x.name, y.name);
      QCOMPARE(x.begin, y.begin);
      QCOMPARE(x.end, y.end);
      const auto bx = parsed->bytes(x);
      const auto by = opened->bytes(y);
      QVERIFY(std::equal(bx.begin(), bx.end(), by.begin(), by.end()));
    }
  }
  QVERIFY(refused > 0);
  QVERIFY(accepted > 0);  // round 0 at least
}

void TestSafetensors::writerRefusesBadRecords() {
  const std::vector<std::byte> four(4);
  const auto path = file("refused.safetensors");
  H3P_EXPECT_INPUT_ERROR(encode_safetensors({{"a", DType::F32, {2}, four}}), "'a'", "needs 8");
  H3P_EXPECT_INPUT_ERROR(
      encode_safetensors({{"a", DType::F32, {1}, four}, {"a", DType::F32, {1}, four}}), "'a'",
      "duplicate");
  H3P_EXPECT_INPUT_ERROR(encode_safetensors({{"__metadata__", DType::U8, {4}, four}}), "reserved");
  H3P_EXPECT_INPUT_ERROR(encode_safetensors({{"n", DType::U8, {-4}, four}}), "'n'", "shape");
  H3P_EXPECT_INPUT_ERROR(write_safetensors(path, {{"a", DType::I64, {1}, four}}), path.string(),
                         "'a'");
  QVERIFY(!std::filesystem::exists(path));
  for (const auto& name : dir_entries(file("")))
    QVERIFY2(name.find(".tmp-") == std::string::npos, name.c_str());
}

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
