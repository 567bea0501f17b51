// The pool allocator. Small blocks (<= 4 KiB) come from chunks of 64 KiB
// dedicated to one size class; larger blocks take a run of whole chunks.
//
// All allocator state lives in DRAM: the fast path (a per-thread cache per
// class) writes nothing to the pool and never flushes. The state is copied
// into the pool only at a clean close (save) and read back at the next open
// (load). After a crash the state is rebuilt by tracing: the index reports
// every block it can reach, and everything else is free (rebuild_*), so a
// block allocated but never linked is reclaimed and nothing leaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "pmindex/alloc/size_classes.hpp"
#include "pmindex/sync/spin_lock.hpp"

namespace pmindex::alloc {

class heap;

// Per-thread cache: a stack of free block offsets per class.
struct thread_cache {
  static constexpr uint32_t k_capacity = 128;
  static constexpr uint32_t k_batch = 64;
  struct bin {
    uint32_t count = 0;
    uint64_t blocks[k_capacity];
  };
  bin bins[k_nclasses];
};

struct heap_usage {
  uint64_t used_bytes = 0;      // bytes in blocks handed out (class-rounded)
  uint64_t used_blocks = 0;
  uint64_t reserved_bytes = 0;  // bytes in chunks taken from the free space
  uint64_t capacity_bytes = 0;  // bytes the heap can ever hand out
  uint64_t dram_bytes = 0;      // the allocator's own DRAM
};

class heap {
 public:
  // Manages chunks [heap_offset, heap_offset + nchunks * k_chunk_size) of a
  // pool mapped at `base`. Starts empty (a new pool).
  heap(char* base, uint64_t heap_offset, uint64_t nchunks);

  // Fast path: a free block of `n` bytes, or 0 if the pool is full.
  uint64_t alloc(thread_cache& tc, size_t n);
  // One block that may come from the reserve: the last chunk(s) the heap
  // keeps back from `alloc`, so that an operation which frees space (a
  // copy-on-write remove) still succeeds on a full pool. Slow path (locks).
  uint64_t alloc_reserve(size_t n);
  // Immediate free; callers that may race with readers use epochs first.
  void free(thread_cache& tc, uint64_t off);
  // Returns every cached block to the shared state (thread exit, close).
  void drain(thread_cache& tc);

  // Usable size of the block at `off` (its class or large-run size).
  size_t block_size(uint64_t off) const;
  heap_usage usage() const;

  // Copy the state into / out of the pool's allocator area (clean close and
  // clean open). The caller flushes the area.
  void save(char* meta) const;
  void load(const char* meta);

  // Tracing recovery: reset, mark each reachable block, then finish. Throws
  // pmindex::error(corrupt) for a block outside the heap, misaligned for its
  // class, in a chunk of another class, or marked twice.
  void rebuild_begin();
  void rebuild_mark(uint64_t off, size_t n);
  void rebuild_end();

  // True if the block at `off` is currently allocated (tests, leak checks).
  bool is_allocated(uint64_t off) const;

 private:
  uint64_t alloc_large(size_t n, bool reserve_ok = false);
  int64_t new_small_chunk(unsigned cls, bool reserve_ok);
  void free_large(uint64_t off);
  void refill(thread_cache::bin& b, unsigned cls);
  void release(unsigned cls, const uint64_t* offs, uint32_t n);
  // First fit; -1 if none, or if taking it would eat into the reserve.
  int64_t take_run(uint64_t n, bool reserve_ok = false);
  void give_run(uint64_t first, uint64_t n);  // coalesces
  void list_push(unsigned cls, uint64_t c);
  void list_remove(unsigned cls, uint64_t c);
  void rebuild_lists();
  uint64_t chunk_of(uint64_t off) const { return (off - heap_offset_) / k_chunk; }
  uint64_t chunk_start(uint64_t c) const { return heap_offset_ + c * k_chunk; }
  uint64_t* bits(uint64_t c) { return &bitmap_[c * k_words]; }
  const uint64_t* bits(uint64_t c) const { return &bitmap_[c * k_words]; }

  static constexpr uint64_t k_chunk = 64 * 1024;
  static constexpr uint64_t k_words = k_chunk / 16 / 64;  // bitmap words/chunk
  static constexpr int64_t k_nil = -1;

  char* base_;
  uint64_t heap_offset_;
  uint64_t nchunks_;
  mutable sync::spin_lock mu_;  // short sections; see spin_lock.hpp for why not a mutex
  std::vector<uint32_t> kind_;     // chunk words, see detail/header.hpp
  std::vector<uint16_t> used_;     // allocated blocks per small chunk
  std::vector<uint64_t> bitmap_;   // nchunks * k_words
  std::vector<int64_t> next_, prev_;  // partial-chunk lists, by class
  int64_t partial_[k_nclasses];
  std::map<uint64_t, uint64_t> runs_;  // free chunk runs: first -> count
  uint64_t free_chunks_ = 0;           // sum of runs_
  uint64_t reserve_chunks_ = 0;        // kept back from alloc (see alloc_reserve)
};

}  // namespace pmindex::alloc
