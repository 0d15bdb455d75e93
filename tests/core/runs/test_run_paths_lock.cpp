// Run directory names (reversible impl-spec mapping, zero-padded steps) and the run lock:
// exclusive within a process and across processes, recovered after its holder is killed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/common/error.h"
#include "core/runs/run_lock.h"
#include "core/runs/run_paths.h"

using h3p::InputError;
namespace runs = h3p::runs;
namespace fs = std::filesystem;

namespace {

std::string host_name() {
  char buffer[256] = {};
  gethostname(buffer, sizeof buffer - 1);
  return buffer;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Forks a child that takes the lock on `run_dir`, reports on `ready` ('y' or 'n'), then
// waits for a byte on `go` (or forever when go < 0) and exits.
pid_t fork_holder(const fs::path& run_dir, int ready, int go) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  char status = 'n';
  try {
    auto lock = runs::RunLock::acquire(run_dir);
    status = 'y';
    (void)!write(ready, &status, 1);
    if (go < 0) {
      for (;;) pause();
    }
    char byte;
    (void)!read(go, &byte, 1);
    _exit(0);
  } catch (...) {
    (void)!write(ready, &status, 1);
    _exit(1);
  }
}

// Expects acquire to be refused with "<run>: locked by pid <pid> on host <host>".
void expect_locked_by(const fs::path& run_dir, pid_t pid) {
  try {
    runs::RunLock::acquire(run_dir);
    QFAIL("second acquisition was not refused");
  } catch (const InputError& e) {
    const std::string expected =
        run_dir.string() + ": locked by pid " + std::to_string(pid) + " on host " + host_name();
    QCOMPARE(std::string(e.what()), expected);
  }
}

}  // namespace

class TestRunPathsLock : public QObject {
  Q_OBJECT

 private slots:
  void impl_dir_name_maps_documented_characters() {
    QCOMPARE(runs::impl_dir_name("provider"), std::string("provider"));
    QCOMPARE(runs::impl_dir_name("provider:attention=flash"),
             std::string("provider@attention=flash"));
    QCOMPARE(runs::impl_dir_name("candidate:attention=provider,gemm=provider"),
             std::string("candidate@attention=provider+gemm=provider"));
    QCOMPARE(runs::impl_spec_from_dir_name("candidate@interim=provider+gemm=cublaslt"),
             std::string("candidate:interim=provider,gemm=cublaslt"));
  }

  void impl_dir_name_round_trips_random_specs() {
    const std::uint64_t seed = std::random_device{}();
    qInfo("seed %llu", static_cast<unsigned long long>(seed));
    std::mt19937_64 rng(seed);
    const std::string alphabet = "abcxyzABC019._-=:,";
    for (int i = 0; i < 1000; ++i) {
      std::string spec(1 + rng() % 40, 'a');
      for (auto& c : spec) c = alphabet[rng() % alphabet.size()];
      if (spec.front() == '.') spec.front() = 'p';
      const std::string dir = runs::impl_dir_name(spec);
      QVERIFY(dir.find_first_of(":,/") == std::string::npos);
      QCOMPARE(runs::impl_spec_from_dir_name(dir), spec);
    }
  }

  void impl_dir_name_refuses_unsafe_specs() {
    for (const char* bad : {"", ".", "..", ".hidden", "a/b", "a@b", "a+b", "a b", "a\\b"}) {
      QVERIFY_THROWS_EXCEPTION(InputError, runs::impl_dir_name(bad));
    }
    for (const char* bad : {"", "..", "a:b", "a,b", "a/b"}) {
      QVERIFY_THROWS_EXCEPTION(InputError, runs::impl_spec_from_dir_name(bad));
    }
  }

  void run_paths_follow_the_layout() {
    const auto paths = runs::RunPaths::locate("/runs", "demo", "candidate:attention=provider", 42);
    QCOMPARE(paths.root(), fs::path("/runs/demo/candidate@attention=provider/seed-42"));
    QCOMPARE(paths.manifest(), paths.root() / "manifest.json");
    QCOMPARE(paths.noise(), paths.root() / "inputs/noise.safetensors");
    QCOMPARE(paths.conditioning(), paths.root() / "inputs/conditioning.safetensors");
    QCOMPARE(paths.step_file(0), paths.root() / "steps/000.safetensors");
    QCOMPARE(paths.step_sidecar(7), paths.root() / "steps/007.json");
    QCOMPARE(paths.step_file(48), paths.root() / "steps/048.safetensors");
    QCOMPARE(paths.step_file(1234), paths.root() / "steps/1234.safetensors");
    QCOMPARE(paths.latents(), paths.root() / "latents.safetensors");
    QCOMPARE(paths.metrics_dir(), paths.root() / "metrics");
    QCOMPARE(paths.lock_file(), paths.root() / ".lock");
    QCOMPARE(runs::RunPaths::locate("r", "c", "provider", 18446744073709551615ull).root(),
             fs::path("r/c/provider/seed-18446744073709551615"));
    QVERIFY_THROWS_EXCEPTION(InputError, paths.step_file(-1));
    QVERIFY_THROWS_EXCEPTION(InputError, runs::RunPaths::locate("/runs", "../x", "provider", 1));
    QVERIFY_THROWS_EXCEPTION(InputError, runs::RunPaths::locate("/runs", "a/b", "provider", 1));
  }

  void create_directories_makes_the_tree() {
    QTemporaryDir dir;
    const auto paths = runs::RunPaths::locate(dir.path().toStdString(), "demo", "provider", 3);
    paths.create_directories();
    QVERIFY(fs::is_directory(paths.inputs_dir()));
    QVERIFY(fs::is_directory(paths.steps_dir()));
    QVERIFY(fs::is_directory(paths.metrics_dir()));
  }

  void lock_is_exclusive_within_a_process() {
    QTemporaryDir dir;
    const fs::path run = fs::path(dir.path().toStdString()) / "run";
    {
      auto lock = runs::RunLock::acquire(run);
      QCOMPARE(lock.path(), run / ".lock");
      QVERIFY(read_text(run / ".lock").find("pid " + std::to_string(getpid())) == 0);
      expect_locked_by(run, getpid());
      // A moved lock still holds; the moved-from one releases nothing.
      runs::RunLock moved = std::move(lock);
      expect_locked_by(run, getpid());
    }
    // Released on destruction: it can be taken again, and released early.
    auto again = runs::RunLock::acquire(run);
    again.release();
    again.release();
    auto third = runs::RunLock::acquire(run);
  }

  void lock_is_exclusive_across_processes() {
    QTemporaryDir dir;
    const fs::path run = fs::path(dir.path().toStdString()) / "run";
    int ready[2];
    int go[2];
    QCOMPARE(pipe(ready), 0);
    QCOMPARE(pipe(go), 0);
    const pid_t child = fork_holder(run, ready[1], go[0]);
    QVERIFY(child > 0);
    char status = 0;
    QCOMPARE(read(ready[0], &status, 1), ssize_t{1});
    QCOMPARE(status, 'y');
    expect_locked_by(run, child);
    // The child's lock survives our failed attempt; let it exit normally.
    const char byte = 'x';
    QCOMPARE(write(go[1], &byte, 1), ssize_t{1});
    int wstatus = 0;
    QCOMPARE(waitpid(child, &wstatus, 0), child);
    QVERIFY(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    auto lock = runs::RunLock::acquire(run);
    for (int fd : {ready[0], ready[1], go[0], go[1]}) close(fd);
  }

  void lock_of_a_killed_holder_is_recovered() {
    QTemporaryDir dir;
    const fs::path run = fs::path(dir.path().toStdString()) / "run";
    int ready[2];
    QCOMPARE(pipe(ready), 0);
    const pid_t child = fork_holder(run, ready[1], -1);
    QVERIFY(child > 0);
    char status = 0;
    QCOMPARE(read(ready[0], &status, 1), ssize_t{1});
    QCOMPARE(status, 'y');
    expect_locked_by(run, child);
    QCOMPARE(kill(child, SIGKILL), 0);
    int wstatus = 0;
    QCOMPARE(waitpid(child, &wstatus, 0), child);
    QVERIFY(WIFSIGNALED(wstatus));
    // The dead holder's record is still in the file, but the kernel dropped its lock.
    QVERIFY(read_text(run / ".lock").find("pid " + std::to_string(child)) == 0);
    auto lock = runs::RunLock::acquire(run);
    QVERIFY(read_text(run / ".lock").find("pid " + std::to_string(getpid()) + "\n") == 0);
    expect_locked_by(run, getpid());
    close(ready[0]);
    close(ready[1]);
  }
};

QTEST_APPLESS_MAIN(TestRunPathsLock)
#include "test_run_paths_lock.moc"
