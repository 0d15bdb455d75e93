#include "core/common/cpu_block_pool.h"

#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <sstream>
#include <string_view>

#include "core/common/error.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define H3P_POOL_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define H3P_POOL_ASAN 1
#endif
#if defined(H3P_POOL_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace h3p {
namespace {

// Every block starts with a header; the data follows it, so the DataPtr's context is the data
// pointer itself (is_simple_data_ptr, raw_deallocate) and the deleter finds its pool.
struct BlockHeader {
  CpuBlockPool* pool;
  std::size_t block_bytes;  // the size class; 0 for a block that bypasses the pool
};
constexpr std::size_t kAlignment = 64;  // c10::gAlignment on x86-64 and aarch64 servers
constexpr std::size_t kHeaderBytes = kAlignment;
static_assert(sizeof(BlockHeader) <= kHeaderBytes);
// Larger requests are refused before the size arithmetic could overflow.
constexpr std::size_t kMaxRequest = SIZE_MAX >> 2;
// Above LibTorch's default CPU allocator (registered at priority 0).
constexpr std::uint8_t kInstallPriority = 1;
// The engine pools by default where the heap maps every large block afresh: under ASan. glibc,
// kept from unmapping by keep_freed_host_memory(), splits and merges freed memory across
// sizes, which size classes cannot: there the pool holds more memory and faults in more
// (docs/benchmarks.md, 2026-12-06).
#if defined(H3P_POOL_ASAN)
constexpr bool kPoolByDefault = true;
#else
constexpr bool kPoolByDefault = false;
#endif

void poison(const void* p, std::size_t n) {
#if defined(H3P_POOL_ASAN)
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

void unpoison(const void* p, std::size_t n) {
#if defined(H3P_POOL_ASAN)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p;
  (void)n;
#endif
}

void* heap_allocate(std::size_t bytes) {
  void* p = nullptr;
  return posix_memalign(&p, kAlignment, bytes) == 0 ? p : nullptr;
}

// Hands a block the pool owned back to the heap (unpoisoned: the heap owns its shadow again).
void heap_free(void* base, std::size_t bytes) {
  unpoison(base, bytes);
  std::free(base);
}

// A multiple of a quarter of the largest power of two not above `bytes` (at least 64).
std::size_t size_class(std::size_t bytes) {
  const std::size_t step = std::max<std::size_t>(std::bit_floor(bytes) / 4, kAlignment);
  return (bytes + step - 1) / step * step;
}

}  // namespace

std::string CpuBlockPoolParams::to_string() const {
  std::ostringstream out;
  out << "min_cached_bytes=" << min_cached_bytes << " max_cached_bytes=" << max_cached_bytes;
  return out.str();
}

CpuBlockPool::CpuBlockPool(CpuBlockPoolParams params) : params_(params) {}

CpuBlockPool::~CpuBlockPool() { release_cached(); }

std::size_t CpuBlockPool::cached_class(std::size_t whole) const {
  if (whole < params_.min_cached_bytes) return 0;
  const std::size_t cls = size_class(whole);
  return cls <= params_.max_cached_bytes ? cls : 0;
}

std::size_t CpuBlockPool::block_bytes(std::size_t bytes) const {
  const std::size_t cls = cached_class(bytes + kHeaderBytes);
  return cls != 0 ? cls : bytes + kHeaderBytes;
}

c10::DataPtr CpuBlockPool::allocate(std::size_t bytes) const {
  // LibTorch 1.x calls this one; the pool is never a const object (it is created by new or
  // as a non-const variable), so casting the const away is defined.
  return const_cast<CpuBlockPool*>(this)->allocate(bytes);
}

c10::DataPtr CpuBlockPool::allocate(std::size_t bytes) {
  const c10::Device cpu(c10::DeviceType::CPU);
  if (bytes == 0) return {nullptr, nullptr, &delete_block, cpu};
  TORCH_CHECK(bytes <= kMaxRequest, "CPU block pool: cannot allocate ", bytes, " bytes");
  const std::size_t cls = cached_class(bytes + kHeaderBytes);
  const bool pooled = cls != 0;
  const std::size_t whole = pooled ? cls : bytes + kHeaderBytes;

  // Step 1: a cached block of the class, else a fresh one (after emptying the pool if the
  // heap is short).
  void* base = pooled ? take_cached(whole) : nullptr;
  const bool fresh = base == nullptr;
  if (fresh) {
    base = heap_allocate(whole);
    if (base == nullptr && pooled) {
      release_cached();
      base = heap_allocate(whole);
    }
    TORCH_CHECK(base != nullptr, "CPU block pool: out of memory: tried to allocate ", bytes,
                " bytes (", whole, " with the header and size class)");
  }

  // Step 2: the header, poisoned while the block is live; only the asked-for bytes are
  // addressable (a cached block is poisoned whole, a fresh one gets its tail poisoned).
  unpoison(base, kHeaderBytes);
  const BlockHeader header{this, pooled ? whole : 0};
  std::memcpy(base, &header, sizeof header);
  poison(base, kHeaderBytes);
  char* data = static_cast<char*>(base) + kHeaderBytes;
  if (fresh) {
    poison(data + bytes, whole - kHeaderBytes - bytes);
  } else {
    unpoison(data, bytes);
  }
  return {data, data, &delete_block, cpu};
}

c10::DeleterFnPtr CpuBlockPool::raw_deleter() const { return &delete_block; }

void CpuBlockPool::copy_data(void* dest, const void* src, std::size_t count) const {
  std::memcpy(dest, src, count);
}

CpuBlockPoolStats CpuBlockPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CpuBlockPool::release_cached() {
  Recency released;
  {
    std::lock_guard lock(mutex_);
    released.swap(recency_);
    classes_.clear();
    stats_.cached_blocks = 0;
    stats_.cached_bytes = 0;
  }
  for (const Cached& c : released) heap_free(c.base, c.bytes);
}

void* CpuBlockPool::take_cached(std::size_t block_bytes) {
  std::lock_guard lock(mutex_);
  auto found = classes_.find(block_bytes);
  if (found == classes_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  const Recency::iterator newest = found->second.back();
  void* base = newest->base;
  found->second.pop_back();
  if (found->second.empty()) classes_.erase(found);
  recency_.erase(newest);
  --stats_.cached_blocks;
  stats_.cached_bytes -= block_bytes;
  ++stats_.hits;
  return base;
}

void CpuBlockPool::put_back(void* base, std::size_t block_bytes) {
  poison(base, block_bytes);
  Recency evicted;  // freed after the lock is let go
  bool kept = false;
  {
    std::lock_guard lock(mutex_);
    // Step 1: the least recently freed blocks go until this one fits under the cap. The oldest
    // block overall is the oldest of its class (classes are kept in the order of freeing).
    while (!recency_.empty() && stats_.cached_bytes + block_bytes > params_.max_cached_bytes) {
      const Recency::iterator oldest = std::prev(recency_.end());
      auto same = classes_.find(oldest->bytes);
      same->second.pop_front();
      if (same->second.empty()) classes_.erase(same);
      --stats_.cached_blocks;
      stats_.cached_bytes -= oldest->bytes;
      ++stats_.evictions;
      evicted.splice(evicted.end(), recency_, oldest);
    }
    // Step 2: keep the block; if the bookkeeping cannot grow, the block goes to the heap.
    try {
      recency_.push_front(Cached{base, block_bytes});
      try {
        classes_[block_bytes].push_back(recency_.begin());
      } catch (const std::bad_alloc&) {
        recency_.pop_front();
        throw;
      }
      ++stats_.cached_blocks;
      stats_.cached_bytes += block_bytes;
      kept = true;
    } catch (const std::bad_alloc&) {
    }
  }
  for (const Cached& c : evicted) heap_free(c.base, c.bytes);
  if (!kept) heap_free(base, block_bytes);
}

void CpuBlockPool::delete_block(void* data) {
  if (data == nullptr) return;
  char* base = static_cast<char*>(data) - kHeaderBytes;
  unpoison(base, kHeaderBytes);
  BlockHeader header{};
  std::memcpy(&header, base, sizeof header);
  if (header.block_bytes == 0) {
    std::free(base);
    return;
  }
  header.pool->put_back(base, header.block_bytes);
}

bool install_cpu_block_pool() {
  const char* value = std::getenv("H3P_CPU_POOL");
  const std::string_view wanted = value == nullptr ? std::string_view() : value;
  bool install = kPoolByDefault;
  if (wanted == "0") {
    install = false;
  } else if (wanted == "1") {
    install = true;
  } else if (!wanted.empty()) {
    throw InputError("environment: H3P_CPU_POOL: unknown value " + single_quoted(wanted) +
                     " (1 pools the engine's CPU tensors, 0 does not)");
  }
  if (!install) return false;
  // Never destroyed: tensors may be freed during static destruction, and the blocks it holds
  // at exit stay reachable from here.
  static CpuBlockPool* const pool = new CpuBlockPool();
  c10::SetCPUAllocator(pool, kInstallPriority);
  return true;
}

}  // namespace h3p
