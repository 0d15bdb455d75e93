// kernels/cpu/parallel: every item is visited exactly once whatever the worker count, the item
// count or the grain; and the kernels' OpenMP team keeps its threads from call to call when
// calls need different numbers of workers (libgomp replaces the threads of a team that shrinks
// and grows again, which is what made the kernels slower at 16 threads than at 8).
#include <QtTest/QtTest>

#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>
#include <set>
#include <vector>

#include "kernels/cpu/gemm_dispatch.h"
#include "kernels/cpu/parallel.h"

namespace cpu = h3p::kernels::cpu;

class TestParallel : public QObject {
  Q_OBJECT

 private slots:
  void cleanup() { cpu::set_threads_for_tests(0); }

  void everyItemOnce() {
    for (int threads : {1, 2, 3, 4, 7}) {
      cpu::set_threads_for_tests(threads);
      QCOMPARE(cpu::kernel_threads(), threads);
      for (std::int64_t items : {1, 2, 3, 5, 8, 13, 64, 1000}) {
        std::vector<int> seen(static_cast<std::size_t>(items), 0);
        cpu::run_items(items, [&](std::int64_t i) { ++seen[static_cast<std::size_t>(i)]; });
        for (std::int64_t i = 0; i < items; ++i) {
          QVERIFY2(seen[static_cast<std::size_t>(i)] == 1,
                   qPrintable(QString("run_items: item %1 of %2 at %3 threads visited %4 times")
                                  .arg(i).arg(items).arg(threads).arg(seen[i])));
        }
        for (std::int64_t grain : {1, 3, 100}) {
          std::vector<int> covered(static_cast<std::size_t>(items), 0);
          cpu::parallel_for(items, grain, [&](std::int64_t begin, std::int64_t end) {
            QVERIFY(begin < end);
            for (std::int64_t i = begin; i < end; ++i) ++covered[static_cast<std::size_t>(i)];
          });
          for (std::int64_t i = 0; i < items; ++i) QCOMPARE(covered[static_cast<std::size_t>(i)], 1);
        }
        std::vector<int> chunked(static_cast<std::size_t>(items), 0);
        cpu::run_chunks(items, [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t i = begin; i < end; ++i) ++chunked[static_cast<std::size_t>(i)];
        });
        for (std::int64_t i = 0; i < items; ++i) QCOMPARE(chunked[static_cast<std::size_t>(i)], 1);
      }
    }
  }

  void teamKeepsItsThreads() {
    constexpr int kThreads = 4;
    cpu::set_threads_for_tests(kThreads);
    std::set<long> threads;
    std::mutex mutex;
    auto record = [&] {
      const long tid = syscall(SYS_gettid);
      const std::lock_guard<std::mutex> lock(mutex);
      threads.insert(tid);
    };
    // Calls that need 4, 2 and 3 workers in turn, as a block's gemms and elementwise ops do.
    for (int round = 0; round < 50; ++round) {
      for (std::int64_t items : {4, 2, 3}) cpu::run_items(items, [&](std::int64_t) { record(); });
      cpu::parallel_for(2, 1, [&](std::int64_t, std::int64_t) { record(); });
    }
    QVERIFY2(threads.size() <= static_cast<std::size_t>(kThreads),
             qPrintable(QString("%1 distinct threads ran the kernels' work at %2 threads: the team "
                                "was rebuilt between calls")
                            .arg(threads.size()).arg(kThreads)));
  }
};

QTEST_APPLESS_MAIN(TestParallel)
#include "test_parallel.moc"
