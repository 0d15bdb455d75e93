// CpuBlockPool: freed blocks come back for the same size class and never too small, data is
// 64-byte aligned, the cap holds (least recently freed out first), concurrent use hands no block
// out twice, cached blocks are poisoned under ASan, and the engine's install switch works.
#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>

#include <QtTest>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/common/cpu_block_pool.h"
#include "core/common/error.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define H3P_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define H3P_TEST_ASAN 1
#endif
#if defined(H3P_TEST_ASAN)
#include <sanitizer/asan_interface.h>
#endif

using h3p::CpuBlockPool;
using h3p::CpuBlockPoolParams;

namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

CpuBlockPoolParams params(std::size_t max_cached_bytes) {
  CpuBlockPoolParams p;
  p.min_cached_bytes = 128 * kKiB;
  p.max_cached_bytes = max_cached_bytes;
  return p;
}

bool aligned64(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 64 == 0; }

// Writes every byte of a block: under ASan, a block smaller than asked for is reported.
void fill(void* p, std::size_t n, unsigned char v) { std::memset(p, v, n); }

}  // namespace

class TestCpuBlockPool : public QObject {
  Q_OBJECT

 private slots:
  void freedBlockIsReusedForTheSameClass();
  void smallBlocksBypassThePool();
  void largerRequestNeverGetsASmallerBlock();
  void dataIsAligned();
  void capIsRespectedOldestOut();
  void classAboveTheCapIsNeverKept();
  void concurrentUseHandsNoBlockOutTwice();
  void cachedBlockIsPoisoned();
  void installSwitchAndTensors();
};

void TestCpuBlockPool::freedBlockIsReusedForTheSameClass() {
  CpuBlockPool pool(params(64 * kMiB));
  void* first = nullptr;
  {
    c10::DataPtr a = pool.allocate(300 * kKiB);
    first = a.get();
    fill(a.get(), 300 * kKiB, 1);
  }
  QCOMPARE(pool.stats().cached_blocks, std::size_t{1});
  QCOMPARE(pool.stats().cached_bytes, pool.block_bytes(300 * kKiB));
  {
    c10::DataPtr b = pool.allocate(300 * kKiB);
    QCOMPARE(b.get(), first);
    QCOMPARE(pool.stats().hits, std::uint64_t{1});
    QCOMPARE(pool.stats().cached_blocks, std::size_t{0});
  }
  // Another size of the same class takes the same block.
  const std::size_t other = 300 * kKiB - 1000;
  QCOMPARE(pool.block_bytes(other), pool.block_bytes(300 * kKiB));
  c10::DataPtr c = pool.allocate(other);
  QCOMPARE(c.get(), first);
  QCOMPARE(pool.stats().hits, std::uint64_t{2});
  QCOMPARE(pool.stats().misses, std::uint64_t{1});
}

void TestCpuBlockPool::smallBlocksBypassThePool() {
  CpuBlockPool pool(params(64 * kMiB));
  for (int i = 0; i < 10; ++i) {
    c10::DataPtr a = pool.allocate(1000);
    QVERIFY(a.get() != nullptr);
    fill(a.get(), 1000, 2);
  }
  QCOMPARE(pool.stats().cached_blocks, std::size_t{0});
  QCOMPARE(pool.stats().hits + pool.stats().misses, std::uint64_t{0});
  c10::DataPtr none = pool.allocate(0);
  QVERIFY(none.get() == nullptr);
  // raw_allocate / raw_deallocate go through the same deleter.
  void* raw = pool.raw_allocate(512 * kKiB);
  QVERIFY(aligned64(raw));
  pool.raw_deallocate(raw);
  QCOMPARE(pool.stats().cached_blocks, std::size_t{1});
}

void TestCpuBlockPool::largerRequestNeverGetsASmallerBlock() {
  CpuBlockPool pool(params(256 * kMiB));
  // Classes grow with the size and always hold the data and the header.
  std::size_t previous = 0;
  for (std::size_t n = 1; n < 64 * kMiB; n = n * 9 / 8 + 1) {
    const std::size_t whole = pool.block_bytes(n);
    QVERIFY2(whole >= n + 64, qPrintable(QString::number(n)));
    QVERIFY(whole >= previous);
    if (n >= 128 * kKiB) QVERIFY2(whole <= n + n / 4 + 64 + 64, qPrintable(QString::number(n)));
    previous = whole;
  }
  // Free blocks of many sizes, then ask for each size again, largest first: every block handed
  // out must take its whole size (ASan reports an overflow; the byte pattern catches a shared
  // block), and a reused block must come from the same class.
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> size(100 * kKiB, 3 * kMiB);
  std::vector<std::size_t> sizes(40);
  for (auto& s : sizes) s = size(rng);
  std::vector<std::pair<void*, std::size_t>> freed;  // data pointer, class
  for (std::size_t s : sizes) {
    c10::DataPtr p = pool.allocate(s);
    freed.emplace_back(p.get(), pool.block_bytes(s));
  }
  std::sort(sizes.rbegin(), sizes.rend());
  std::vector<c10::DataPtr> live;
  unsigned char tag = 0;
  for (std::size_t s : sizes) {
    c10::DataPtr p = pool.allocate(s);
    for (const auto& [data, cls] : freed) {
      if (data == p.get()) QCOMPARE(cls, pool.block_bytes(s));
    }
    fill(p.get(), s, ++tag);
    live.push_back(std::move(p));
  }
  tag = 0;
  for (std::size_t i = 0; i < live.size(); ++i) {
    const auto* bytes = static_cast<const unsigned char*>(live[i].get());
    ++tag;
    QCOMPARE(bytes[0], tag);
    QCOMPARE(bytes[sizes[i] - 1], tag);
  }
}

void TestCpuBlockPool::dataIsAligned() {
  CpuBlockPool pool(params(64 * kMiB));
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{1000},
                        128 * kKiB - 64, 128 * kKiB, 128 * kKiB + 3, 3 * kMiB + 5}) {
    for (int round = 0; round < 2; ++round) {  // fresh, then reused
      c10::DataPtr p = pool.allocate(n);
      QVERIFY2(aligned64(p.get()), qPrintable(QString::number(n)));
      QCOMPARE(p.get_context(), p.get());
      QVERIFY(p.get_deleter() == pool.raw_deleter());
      QVERIFY(p.device() == c10::Device(c10::DeviceType::CPU));
    }
  }
  QVERIFY(pool.stats().hits >= 4);
}

void TestCpuBlockPool::capIsRespectedOldestOut() {
  CpuBlockPool pool(params(1 * kMiB));
  const std::size_t n = 256 * kKiB;
  const std::size_t cls = pool.block_bytes(n);  // 320 KiB: three fit under 1 MiB
  QCOMPARE(cls, std::size_t{320 * kKiB});
  std::vector<c10::DataPtr> blocks;
  std::vector<void*> order;
  for (int i = 0; i < 10; ++i) {
    blocks.push_back(pool.allocate(n));
    order.push_back(blocks.back().get());
  }
  blocks.clear();  // freed in order 0..9
  const h3p::CpuBlockPoolStats s = pool.stats();
  QVERIFY(s.cached_bytes <= pool.params().max_cached_bytes);
  QCOMPARE(s.cached_blocks, std::size_t{3});
  QCOMPARE(s.cached_bytes, 3 * cls);
  QCOMPARE(s.evictions, std::uint64_t{7});
  // The three most recently freed stay, and the newest comes back first.
  c10::DataPtr a = pool.allocate(n);
  c10::DataPtr b = pool.allocate(n);
  c10::DataPtr c = pool.allocate(n);
  QCOMPARE(a.get(), order[9]);
  QCOMPARE(b.get(), order[8]);
  QCOMPARE(c.get(), order[7]);
  // Freed again (order[9] first, so it is the oldest), then a block of another class (640 KiB)
  // pushes the two oldest out, whatever their class.
  a.clear();
  b.clear();
  c.clear();
  { c10::DataPtr big = pool.allocate(600 * kKiB); }
  const h3p::CpuBlockPoolStats t = pool.stats();
  QVERIFY(t.cached_bytes <= pool.params().max_cached_bytes);
  QCOMPARE(t.cached_blocks, std::size_t{2});
  QCOMPARE(t.cached_bytes, cls + pool.block_bytes(600 * kKiB));
  QCOMPARE(t.evictions, std::uint64_t{9});
  c10::DataPtr kept = pool.allocate(n);
  QCOMPARE(kept.get(), order[7]);
  kept.clear();
  pool.release_cached();
  QCOMPARE(pool.stats().cached_blocks, std::size_t{0});
  QCOMPARE(pool.stats().cached_bytes, std::size_t{0});
}

void TestCpuBlockPool::classAboveTheCapIsNeverKept() {
  CpuBlockPool pool(params(1 * kMiB));
  {
    c10::DataPtr big = pool.allocate(2 * kMiB);
    fill(big.get(), 2 * kMiB, 3);
  }
  QCOMPARE(pool.stats().cached_blocks, std::size_t{0});
  QCOMPARE(pool.stats().misses, std::uint64_t{0});
  // 900 KiB: class 1 MiB, kept.
  { c10::DataPtr kept = pool.allocate(900 * kKiB); }
  QCOMPARE(pool.stats().cached_bytes, std::size_t{1 * kMiB});
  // Under a cap of 1100 KiB, 1050 KiB fit but their class (1280 KiB) does not.
  CpuBlockPool odd(params(1100 * kKiB));
  QCOMPARE(odd.block_bytes(1050 * kKiB), 1050 * kKiB + 64);
  {
    c10::DataPtr near = odd.allocate(1050 * kKiB);
    fill(near.get(), 1050 * kKiB, 4);
  }
  QCOMPARE(odd.stats().cached_blocks, std::size_t{0});
  QCOMPARE(odd.stats().misses, std::uint64_t{0});
}

void TestCpuBlockPool::concurrentUseHandsNoBlockOutTwice() {
  const std::size_t cap = 8 * kMiB;
  CpuBlockPool pool(params(cap));
  constexpr int kThreads = 4;
  constexpr int kRounds = 1500;
  std::atomic<std::uint64_t> pooled{0};
  std::atomic<int> corrupt{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      std::uniform_int_distribution<std::size_t> size(64 * kKiB, 1 * kMiB);
      std::vector<std::pair<c10::DataPtr, std::size_t>> held;
      for (int r = 0; r < kRounds; ++r) {
        const std::size_t n = size(rng);
        c10::DataPtr p = pool.allocate(n);
        if (pool.block_bytes(n) >= pool.params().min_cached_bytes) ++pooled;
        auto* bytes = static_cast<unsigned char*>(p.get());
        const auto tag = static_cast<unsigned char>(t * 50 + r % 50);
        std::memset(bytes, tag, 64);
        std::memset(bytes + n - 64, tag, 64);
        held.emplace_back(std::move(p), n);
        if (held.size() > 3 || rng() % 2 == 0) {  // free a random held block
          const std::size_t i = rng() % held.size();
          const auto* h = static_cast<const unsigned char*>(held[i].first.get());
          const unsigned char want = h[0];
          for (std::size_t k = 0; k < 64; ++k) {
            if (h[k] != want || h[held[i].second - 64 + k] != want) ++corrupt;
          }
          if (want / 50 != t) ++corrupt;
          held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  QCOMPARE(corrupt.load(), 0);
  const h3p::CpuBlockPoolStats s = pool.stats();
  QCOMPARE(s.hits + s.misses, pooled.load());
  QVERIFY(s.hits > 0);
  QVERIFY(s.cached_bytes <= cap);
  QVERIFY(s.cached_blocks > 0);
  // What the pool holds is what it counted: taking every block back empties it exactly.
  pool.release_cached();
  QCOMPARE(pool.stats().cached_bytes, std::size_t{0});
}

void TestCpuBlockPool::cachedBlockIsPoisoned() {
#if defined(H3P_TEST_ASAN)
  CpuBlockPool pool(params(64 * kMiB));
  const std::size_t n = 300 * kKiB;
  char* data = nullptr;
  {
    c10::DataPtr a = pool.allocate(n);
    data = static_cast<char*>(a.get());
    QVERIFY(!__asan_address_is_poisoned(data));
    QVERIFY(!__asan_address_is_poisoned(data + n - 1));
    QVERIFY(__asan_address_is_poisoned(data + n));  // past the asked-for size
    QVERIFY(__asan_address_is_poisoned(data - 1));  // the pool's header
  }
  // Cached: the whole block reads as freed memory.
  QVERIFY(__asan_address_is_poisoned(data));
  QVERIFY(__asan_address_is_poisoned(data + n / 2));
  QCOMPARE(__asan_region_is_poisoned(data, n), static_cast<void*>(data));
  // Reused for fewer bytes: those are addressable, the rest of the class is not.
  c10::DataPtr b = pool.allocate(n - 4096);
  QCOMPARE(b.get(), static_cast<void*>(data));
  QVERIFY(__asan_region_is_poisoned(data, n - 4096) == nullptr);
  QVERIFY(__asan_address_is_poisoned(data + n - 4096));
#else
  QSKIP("poisoning is checked in the AddressSanitizer build");
#endif
}

void TestCpuBlockPool::installSwitchAndTensors() {
  c10::Allocator* const before = c10::GetCPUAllocator();
  setenv("H3P_CPU_POOL", "0", 1);
  QVERIFY(!h3p::install_cpu_block_pool());
  QCOMPARE(c10::GetCPUAllocator(), before);
  setenv("H3P_CPU_POOL", "yes", 1);
  bool refused = false;
  try {
    h3p::install_cpu_block_pool();
  } catch (const h3p::InputError& e) {
    refused = std::string(e.what()).find("H3P_CPU_POOL") != std::string::npos;
  }
  QVERIFY(refused);
  QCOMPARE(c10::GetCPUAllocator(), before);
  // Unset: the build decides (pooled under ASan only).
  unsetenv("H3P_CPU_POOL");
#if defined(H3P_TEST_ASAN)
  QVERIFY(h3p::install_cpu_block_pool());
  QVERIFY(dynamic_cast<CpuBlockPool*>(c10::GetCPUAllocator()) != nullptr);
#else
  QVERIFY(!h3p::install_cpu_block_pool());
  QCOMPARE(c10::GetCPUAllocator(), before);
#endif
  setenv("H3P_CPU_POOL", "1", 1);
  QVERIFY(h3p::install_cpu_block_pool());
  unsetenv("H3P_CPU_POOL");
  auto* pool = dynamic_cast<CpuBlockPool*>(c10::GetCPUAllocator());
  QVERIFY(pool != nullptr);
  // Tensors take their storage from it and give it back; operator outputs reuse it.
  const at::Tensor x = at::arange(1 << 17, at::kFloat);  // 512 KiB
  void* first = nullptr;
  {
    const at::Tensor y = x * 2;
    first = y.data_ptr();
    QCOMPARE(y[12345].item<float>(), 24690.0f);
  }
  const at::Tensor z = x + 1;
  QCOMPARE(z.data_ptr(), first);
  QCOMPARE(z[7].item<float>(), 8.0f);
  QVERIFY(pool->stats().hits >= 1);
}

QTEST_APPLESS_MAIN(TestCpuBlockPool)
#include "test_cpu_block_pool.moc"
