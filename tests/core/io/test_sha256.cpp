// SHA-256: published test vectors, streaming equals one-shot, file digests, corruption found.
#include <QTemporaryDir>
#include <QtTest>

#include "core/io/sha256.h"
#include "io_test_util.h"

using namespace h3p::io;
using namespace h3p::io::test;
namespace fs = std::filesystem;

class TestSha256 : public QObject {
  Q_OBJECT

 private slots:
  void knownVectors();
  void millionA();
  void streamingEqualsOneShot();
  void fileDigestEqualsMemoryDigest();
  void flippedByteDetected();
  void misuseRefused();
  void missingFileRefused();

 private:
  QTemporaryDir tmp_;
  fs::path file(const char* name) const { return fs::path(tmp_.path().toStdString()) / name; }
};

void TestSha256::knownVectors() {
  QCOMPARE(sha256_hex(std::string_view("")),
           std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  QCOMPARE(sha256_hex(std::string_view("abc")),
           std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  QCOMPARE(sha256_hex(std::string_view("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
           std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
  const std::byte none[1] = {};
  QCOMPARE(sha256_hex(std::span<const std::byte>(none, 0)), sha256_hex(std::string_view("")));
}

void TestSha256::millionA() {
  Sha256 sha;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) sha.update(chunk);
  QCOMPARE(sha.hex_digest(),
           std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

void TestSha256::streamingEqualsOneShot() {
  auto rng = seeded_rng("streamingEqualsOneShot");
  const auto data = random_bytes(rng, 100000 + rng() % 1000);
  Sha256 sha;
  std::size_t at = 0;
  while (at < data.size()) {
    const std::size_t n = std::min<std::size_t>(data.size() - at, rng() % 5000);
    sha.update(std::span(data).subspan(at, n));
    at += n;
  }
  Sha256 moved = std::move(sha);
  QCOMPARE(moved.hex_digest(), sha256_hex(data));
}

void TestSha256::fileDigestEqualsMemoryDigest() {
  auto rng = seeded_rng("fileDigestEqualsMemoryDigest");
  for (std::size_t size :
       {std::size_t{0}, std::size_t{1}, std::size_t{1} << 20, (std::size_t{5} << 19) + 77}) {
    const auto data = random_bytes(rng, size);
    write_raw(file("d.bin"), std::string(reinterpret_cast<const char*>(data.data()), size));
    QCOMPARE(sha256_file(file("d.bin")), sha256_hex(data));
  }
}

void TestSha256::flippedByteDetected() {
  auto rng = seeded_rng("flippedByteDetected");
  const auto data = random_bytes(rng, 3000);
  std::string bytes(reinterpret_cast<const char*>(data.data()), data.size());
  write_raw(file("f.bin"), bytes);
  const std::string good = sha256_file(file("f.bin"));
  const std::size_t at = rng() % bytes.size();
  const int bit = static_cast<int>(rng() % 8);
  bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
  write_raw(file("f.bin"), bytes);
  QVERIFY(sha256_file(file("f.bin")) != good);
  bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
  write_raw(file("f.bin"), bytes);
  QCOMPARE(sha256_file(file("f.bin")), good);
}

void TestSha256::misuseRefused() {
  Sha256 sha;
  sha.update(std::string_view("x"));
  sha.hex_digest();
  QVERIFY_THROWS_EXCEPTION(std::logic_error, sha.update(std::string_view("y")));
  QVERIFY_THROWS_EXCEPTION(std::logic_error, sha.hex_digest());
}

void TestSha256::missingFileRefused() {
  H3P_EXPECT_INPUT_ERROR(sha256_file(file("absent.bin")), file("absent.bin").string(),
                         "cannot open");
  H3P_EXPECT_INPUT_ERROR(sha256_file(file("")), tmp_.path().toStdString());
}

QTEST_APPLESS_MAIN(TestSha256)
#include "test_sha256.moc"
