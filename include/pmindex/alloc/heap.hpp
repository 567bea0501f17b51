// The pool allocator. Small blocks (<= 4 KiB) come from chunks of 64 KiB
// dedicated to one size class; larger blocks take a run of whole chunks.
//
// All allocator state lives in DRAM: the fast path (a per-thread cache per
// class) writes nothing to the pool and never flushes. The state is copied
// into the pool only at a clean close (save) and read back at the next open
// (load). After a crash the state is rebuilt by tracing: the index reports
// every block it can reach, and everything else is free (rebuild_*), so a
// block allocated but never linked is reclaimed and nothing leaks.
//
// A small per-class reserve (set_reserve) is kept back from alloc for
// operations that free space, so that they succeed on a full pool.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "pmindex/alloc/size_classes.hpp"
#include "pmindex/sync/spin_lock.hpp"

namespace pmindex::alloc {

class heap;

// Per-thread cache: a stack of free block offsets per class. A refill takes
// up to the heap's batch() blocks; a free that finds 2 x batch() cached
// gives batch() back.
struct thread_cache {
  static constexpr uint32_t k_capacity = 128;
  static constexpr uint32_t k_batch = 64;  // the largest batch
  struct bin {
    uint32_t count = 0;
    uint64_t blocks[k_capacity];
  };
  bin bins[k_nclasses];
};

struct heap_usage {
  uint64_t used_bytes = 0;      // bytes in blocks handed out (class-rounded; not the reserve's)
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
  // Immediate free; callers that may race with readers use epochs first.
  // A free of a class whose remove reserve is short pays it back first.
  void free(thread_cache& tc, uint64_t off);

  // --- the remove reserve
  // Blocks kept back from alloc() for operations that free space (a
  // copy-on-write remove), so that they succeed on a full pool; inserts
  // report pool_full that much earlier. Per size class (small blocks only):
  // set_reserve keeps `count` blocks of n's class; take_reserved lends one;
  // the next free() of that class pays it back -- the block the borrower
  // replaced, once it is reclaimed, so a remove that takes a block of the
  // class it gives back never drains it for good. DRAM state only: to the
  // pool a reserved block is free space (tracing does not reach it, and a
  // clean close releases it first), so nothing about it is persisted.
  void set_reserve(size_t n, uint32_t count);
  // A reserved block of n's class, or 0 if none is left.
  uint64_t take_reserved(size_t n);
  // Whether waiting can refill n's reserve: blocks of its class are lent
  // and not yet paid back, or some are back already.
  bool reserve_expected(size_t n) const;
  // Whether blocks of some class are lent and not yet paid back.
  bool reserve_owed() const noexcept { return owed_total_.load(std::memory_order_relaxed) != 0; }
  // Clean close: reserved blocks become free space again (before save).
  void release_reserve();
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
  uint64_t alloc_large(size_t n);
  int64_t new_small_chunk(unsigned cls);
  void free_large(uint64_t off);
  void refill(thread_cache::bin& b, unsigned cls);
  void release(unsigned cls, const uint64_t* offs, uint32_t n);
  void release_locked(unsigned cls, const uint64_t* offs, uint32_t n);
  uint64_t take_block_locked(unsigned cls);  // one block of cls from the chunks, or 0
  bool repay(unsigned cls, uint64_t off);    // into cls's reserve if it is short
  void fill_reserve_locked(unsigned cls);
  void refill_reserves_locked();
  void note_reserve_locked(unsigned cls);    // updates reserve_short_ and owed_total_
  // First fit; -1 if none.
  int64_t take_run(uint64_t n);
  void give_run(uint64_t first, uint64_t n) noexcept;  // coalesces; never throws (spare_ when out of DRAM)
  void make_spare();                                  // may throw bad_alloc
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
  // Blocks a thread cache takes at a time: 64, less in a small pool, where
  // the blocks cached by every thread in every class would otherwise hold
  // a large part of it out of the other threads' reach (a 2 MiB pool has
  // 31 chunks; one 64-block batch of 1 KiB blocks fills a chunk).
  uint32_t batch_;
  mutable sync::spin_lock mu_;  // short sections; see spin_lock.hpp for why not a mutex
  std::vector<uint32_t> kind_;     // chunk words, see detail/header.hpp
  std::vector<uint16_t> used_;     // allocated blocks per small chunk
  std::vector<uint64_t> bitmap_;   // nchunks * k_words
  std::vector<int64_t> next_, prev_;  // partial-chunk lists, by class
  int64_t partial_[k_nclasses];
  std::map<uint64_t, uint64_t> runs_;  // free chunk runs: first -> count
  uint64_t free_chunks_ = 0;           // sum of runs_
  std::map<uint64_t, uint64_t>::node_type spare_;  // a node for give_run when no DRAM is left
  uint64_t lost_chunks_ = 0;  // freed when no spare node could be made (out of DRAM): unused until the next open
  struct reserve {
    uint32_t want = 0;  // blocks to keep
    uint32_t owed = 0;  // lent and not yet paid back
    std::vector<uint64_t> held;
  };
  reserve reserve_[k_nclasses];                      // under mu_
  std::atomic<uint8_t> reserve_short_[k_nclasses]{};  // held < want (read by free)
  std::atomic<uint32_t> owed_total_{0};              // sum of owed
};

}  // namespace pmindex::alloc
