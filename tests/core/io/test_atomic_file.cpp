// atomic_write: the target is replaced whole or not at all, and no temporary file survives.
#include <sys/resource.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <regex>

#include "core/io/atomic_file.h"
#include "core/io/safetensors.h"
#include "core/io/sha256.h"
#include "io_test_util.h"

using namespace h3p::io;
using namespace h3p::io::test;
namespace fs = std::filesystem;

namespace {

struct ProducerFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Lowers the file size limit for its lifetime (writes past it fail with EFBIG, like a full
// disk); SIGXFSZ is ignored meanwhile so the failure arrives as an error code.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

}  // namespace

class TestAtomicFile : public QObject {
  Q_OBJECT

 private slots:
  // Only atomic_write's own temporaries (.<name>.tmp-<pid>-<n>) are removed.
  void remove_stale_temporaries_removes_only_temporaries() {
    QTemporaryDir tmp;
    const std::filesystem::path dir = tmp.path().toStdString();
    const char* stale[] = {".a.safetensors.tmp-123-4", ".manifest.json.tmp-9-0"};
    const char* kept[] = {"a.safetensors", ".b.tmp-x-1", "c.tmp-1-2", ".d.tmp-12", ".e.tmp-1-2x"};
    for (const char* n : stale) h3p::io::atomic_write_text(dir / n, "x");
    for (const char* n : kept) h3p::io::atomic_write_text(dir / n, "x");
    QCOMPARE(h3p::io::remove_stale_temporaries(dir), 2);
    for (const char* n : stale) QVERIFY(!std::filesystem::exists(dir / n));
    for (const char* n : kept) QVERIFY(std::filesystem::exists(dir / n));
  }

  void init();
  void writesNewFile();
  void replacesExistingFile();
  void streamsManyChunks();
  void temporaryNameInSameDirectory();
  void throwingProducerKeepsOldFile();
  void throwingProducerCreatesNothing();
  void failedWriteKeepsOldFile();
  void failedWriteOfSafetensorsKeepsOldFile();
  void failedRenameRemovesTemporary();
  void missingDirectoryRefused();
  void readFileErrors();

 private:
  std::unique_ptr<QTemporaryDir> tmp_;
  fs::path dir_;
  void expect_no_temporaries() {
    for (const auto& name : dir_entries(dir_)) {
      QVERIFY2(name.find(".tmp-") == std::string::npos, name.c_str());
    }
  }
};

void TestAtomicFile::init() {
  tmp_ = std::make_unique<QTemporaryDir>();
  dir_ = tmp_->path().toStdString();
}

void TestAtomicFile::writesNewFile() {
  const auto path = dir_ / "a.txt";
  const std::string digest = atomic_write_text(path, "hello\n");
  QCOMPARE(read_raw(path), std::string("hello\n"));
  QCOMPARE(read_file(path), std::string("hello\n"));
  QCOMPARE(digest, sha256_hex(std::string_view("hello\n")));
  QCOMPARE(digest, sha256_file(path));
  QCOMPARE(dir_entries(dir_), std::vector<std::string>{"a.txt"});
}

void TestAtomicFile::replacesExistingFile() {
  const auto path = dir_ / "a.txt";
  write_raw(path, std::string(10000, 'x'));
  atomic_write_text(path, "short");
  QCOMPARE(read_file(path), std::string("short"));
  atomic_write_text(path, "");
  QCOMPARE(read_file(path), std::string());
  QCOMPARE(dir_entries(dir_), std::vector<std::string>{"a.txt"});
}

void TestAtomicFile::streamsManyChunks() {
  auto rng = seeded_rng("streamsManyChunks");
  const auto data = random_bytes(rng, 3 * (1u << 20) + 12345);  // crosses the 1 MiB buffer
  const auto path = dir_ / "big.bin";
  const std::string digest = atomic_write(path, [&](FileSink& sink) {
    std::size_t at = 0;
    while (at < data.size()) {
      const std::size_t n = std::min<std::size_t>(data.size() - at, rng() % (1u << 21));
      sink.write(std::span(data).subspan(at, n));
      at += n;
    }
  });
  const std::string back = read_file(path);
  QCOMPARE(back.size(), data.size());
  QVERIFY(std::memcmp(back.data(), data.data(), data.size()) == 0);
  QCOMPARE(digest, sha256_hex(data));
}

void TestAtomicFile::temporaryNameInSameDirectory() {
  const auto path = dir_ / "out.json";
  std::vector<std::string> during;
  atomic_write(path, [&](FileSink& sink) {
    sink.write(std::string_view("{}"));
    during = dir_entries(dir_);
  });
  QCOMPARE(during.size(), 1u);
  const std::regex pattern("^\\.out\\.json\\.tmp-" + std::to_string(getpid()) + "-[0-9]+$");
  QVERIFY2(std::regex_match(during[0], pattern), during[0].c_str());
  QCOMPARE(read_file(path), std::string("{}"));
  QCOMPARE(dir_entries(dir_), std::vector<std::string>{"out.json"});
}

void TestAtomicFile::throwingProducerKeepsOldFile() {
  const auto path = dir_ / "keep.txt";
  atomic_write_text(path, "old contents");
  bool caught = false;
  try {
    atomic_write(path, [](FileSink& sink) {
      sink.write(std::string(3u << 20, 'n'));  // some bytes reach the temporary file
      throw ProducerFailed("stop");
    });
  } catch (const ProducerFailed&) {
    caught = true;
  }
  QVERIFY(caught);
  QCOMPARE(read_file(path), std::string("old contents"));
  expect_no_temporaries();
  QCOMPARE(dir_entries(dir_), std::vector<std::string>{"keep.txt"});
}

void TestAtomicFile::throwingProducerCreatesNothing() {
  const auto path = dir_ / "never.txt";
  QVERIFY_THROWS_EXCEPTION(ProducerFailed, atomic_write(path, [](FileSink& sink) {
                             sink.write(std::string_view("partial"));
                             throw ProducerFailed("stop");
                           }));
  QVERIFY(dir_entries(dir_).empty());
}

void TestAtomicFile::failedWriteKeepsOldFile() {
  const auto path = dir_ / "full.bin";
  atomic_write_text(path, "previous");
  {
    FileSizeLimit limit(4096);
    H3P_EXPECT_INPUT_ERROR(atomic_write_text(path, std::string(1u << 16, 'z')), path.string(),
                           "write failed");
    H3P_EXPECT_INPUT_ERROR(atomic_write_text(path, std::string(5u << 20, 'z')), path.string(),
                           "write failed");
  }
  QCOMPARE(read_file(path), std::string("previous"));
  expect_no_temporaries();
  QCOMPARE(dir_entries(dir_), std::vector<std::string>{"full.bin"});
}

void TestAtomicFile::failedWriteOfSafetensorsKeepsOldFile() {
  const auto path = dir_ / "ckpt.safetensors";
  const std::vector<std::byte> small(16), large(1u << 16);
  write_safetensors(path, {{"w", DType::F32, {4}, small}});
  const std::string before = read_file(path);
  {
    FileSizeLimit limit(4096);
    H3P_EXPECT_INPUT_ERROR(write_safetensors(path, {{"w", DType::F32, {1u << 14}, large}}),
                           path.string());
  }
  QCOMPARE(read_file(path), before);
  QCOMPARE(SafetensorsFile::open(path).at("w").nbytes(), 16u);
  expect_no_temporaries();
}

void TestAtomicFile::failedRenameRemovesTemporary() {
  // A non-empty directory where the file should go: rename fails after the bytes are synced.
  const auto path = dir_ / "taken";
  fs::create_directory(path);
  write_raw(path / "inside", "x");
  H3P_EXPECT_INPUT_ERROR(atomic_write_text(path, "data"), path.string(), "rename failed");
  QCOMPARE(dir_entries(dir_), std::vector<std::string>{"taken"});
  QCOMPARE(read_file(path / "inside"), std::string("x"));
}

void TestAtomicFile::missingDirectoryRefused() {
  const auto path = dir_ / "no" / "such" / "file.txt";
  H3P_EXPECT_INPUT_ERROR(atomic_write_text(path, "data"), path.string());
  H3P_EXPECT_INPUT_ERROR(atomic_write_text(dir_ / "", "data"), "not a file path");
}

void TestAtomicFile::readFileErrors() {
  H3P_EXPECT_INPUT_ERROR(read_file(dir_ / "absent"), (dir_ / "absent").string(), "cannot open");
  H3P_EXPECT_INPUT_ERROR(read_file(dir_), dir_.string(), "directory");
}

QTEST_APPLESS_MAIN(TestAtomicFile)
#include "test_atomic_file.moc"
