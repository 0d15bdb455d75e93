#pragma once
// A cache of freed large host blocks in front of LibTorch's CPU allocator.
//
// Why: ASan's allocator maps every block of 128 KiB or more afresh and unmaps it on free (so
// does glibc's above its mmap threshold), so each CPU operator's output is page-faulted in
// anew. The pool keeps such blocks and hands them to the next allocation of the same size
// class. Memory held: at most max_cached_bytes of freed blocks, on top of what live tensors use.
// Under AddressSanitizer a cached block is poisoned, so a use after free of tensor memory is
// still reported, and so are the bytes of a block past the size that was asked for.
#include <c10/core/Allocator.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

namespace h3p {

// What the pool keeps.
struct CpuBlockPoolParams {
  std::size_t min_cached_bytes = std::size_t{128} << 10;  // smaller blocks bypass the pool
  std::size_t max_cached_bytes = std::size_t{1} << 30;    // freed bytes held, all classes
  std::string to_string() const;                          // "min_cached_bytes=… max_…=…"
};

// Counters since construction, read under the pool's lock.
struct CpuBlockPoolStats {
  std::uint64_t hits = 0;         // allocations served by a cached block
  std::uint64_t misses = 0;       // allocations of a cached size that went to the heap
  std::uint64_t evictions = 0;    // cached blocks handed back to the heap to stay under the cap
  std::size_t cached_blocks = 0;  // blocks held now
  std::size_t cached_bytes = 0;   // bytes held now (whole size classes)
};

// LibTorch CPU allocator with a size-class cache of freed blocks. Data is aligned to 64 bytes
// like LibTorch's default CPU allocator. A block of min_cached_bytes or more is rounded up to
// its size class (a multiple of a quarter of its power of two: at most 25 % more); when it is
// freed it is kept for the next allocation of that class, the least recently freed blocks
// going back to the heap first once max_cached_bytes would be exceeded; a class larger than the
// cap is never kept. Thread safe. Every DataPtr it returns must be freed before the pool is
// destroyed (the engine's pool is never destroyed: install_cpu_block_pool).
class CpuBlockPool : public c10::Allocator {
 public:
  explicit CpuBlockPool(CpuBlockPoolParams params = {});
  ~CpuBlockPool();  // hands the cached blocks back to the heap
  CpuBlockPool(const CpuBlockPool&) = delete;
  CpuBlockPool& operator=(const CpuBlockPool&) = delete;

  // The overrides of c10::Allocator carry no `override`: LibTorch 1.x declares allocate const
  // and 2.x does not, and only 2.x has copy_data, so both allocates are defined and each
  // LibTorch overrides what it declares (marking some would make clang warn about the rest).

  // `bytes` of 64-byte aligned memory (no data for 0); throws c10::Error when the heap has
  // none.
  c10::DataPtr allocate(std::size_t bytes) const;
  c10::DataPtr allocate(std::size_t bytes);
  // The deleter of every DataPtr from this pool (raw_allocate / raw_deallocate work).
  c10::DeleterFnPtr raw_deleter() const;
  // memcpy; LibTorch 2.x asks allocators for it (copy-on-write storage, clone).
  void copy_data(void* dest, const void* src, std::size_t count) const;

  CpuBlockPoolStats stats() const;  // a consistent snapshot
  void release_cached();            // hands every cached block back to the heap
  const CpuBlockPoolParams& params() const { return params_; }

  // The bytes a block for `bytes` of data takes from the heap (header included): its size
  // class when it is large enough to be cached, else the exact size.
  std::size_t block_bytes(std::size_t bytes) const;

 private:
  struct Cached {
    void* base;
    std::size_t bytes;
  };
  using Recency = std::list<Cached>;  // front: most recently freed

  std::size_t cached_class(std::size_t whole) const;   // 0: a block of `whole` is not kept
  void* take_cached(std::size_t block_bytes);          // nullptr on a miss
  void put_back(void* base, std::size_t block_bytes);  // caches or frees
  static void delete_block(void* data);                // the DataPtr deleter

  const CpuBlockPoolParams params_;
  mutable std::mutex mutex_;
  Recency recency_;
  // Per size class, oldest first; each entry points into recency_.
  std::unordered_map<std::size_t, std::deque<Recency::iterator>> classes_;
  CpuBlockPoolStats stats_;
};

// Installs a process-wide CpuBlockPool (default params) as LibTorch's CPU allocator where it
// pays, and returns whether it did: by default in AddressSanitizer builds only (glibc, kept
// from unmapping by keep_freed_host_memory, reuses freed memory across sizes better than size
// classes do). H3P_CPU_POOL=1 installs it in any build, H3P_CPU_POOL=0 in none; another value
// throws InputError. The pool is never destroyed, so tensors freed during static destruction
// are safe and what it holds at exit stays reachable (no leak for LeakSanitizer). Call at
// start-up, before the first tensor; calling again installs the same pool.
bool install_cpu_block_pool();

}  // namespace h3p
