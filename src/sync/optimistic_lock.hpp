// An optimistic lock (seqlock word) for one node: writers take it
// exclusively (the version becomes odd), readers take a snapshot of an even
// version, read without writing anything, and validate that the version did
// not change. Replaces the hardware transactions of the original papers
// (FPTree, LB+-Tree) on machines without HTM. (sync/version_lock.hpp is the
// writers-only ROWEX lock of the ART indexes; this one adds reader
// validation.)
//
// The lock is one 8-byte word with no constructor, so it may sit inside a
// persistent node (its value is volatile state: recovery resets it with
// reset()) or in a DRAM table. Readers that race with a writer may read torn
// data; they must only act on it after validate() succeeds.
#pragma once

#include <immintrin.h>
#include <sched.h>

#include <atomic>
#include <cstdint>

namespace pmindex::sync {

struct optimistic_lock {
  uint64_t word_;  // even: free; odd: locked. Bumped by 2 per critical section.

  // Waits until no writer holds the lock; returns the version to validate.
  uint64_t read_begin() const noexcept {
    for (unsigned spins = 0;; ++spins) {
      uint64_t v = __atomic_load_n(&word_, __ATOMIC_ACQUIRE);
      if (!(v & 1)) [[likely]] return v;
      backoff(spins);
    }
  }
  // True if nothing was written since read_begin() returned v; orders the
  // reader's earlier loads before the check.
  bool validate(uint64_t v) const noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);
    return __atomic_load_n(&word_, __ATOMIC_RELAXED) == v;
  }
  bool is_locked() const noexcept { return __atomic_load_n(&word_, __ATOMIC_RELAXED) & 1; }

  bool try_lock() noexcept {
    uint64_t v = __atomic_load_n(&word_, __ATOMIC_RELAXED);
    return !(v & 1) &&
           __atomic_compare_exchange_n(&word_, &v, v + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
  }
  void lock() noexcept {
    for (unsigned spins = 0; !try_lock(); ++spins) backoff(spins);
  }
  // Publishes the critical section's stores with the new even version. Only
  // the holder writes an odd word, so this is a release store, not a locked
  // add: on x86 a locked instruction is a full fence, and the one here waited
  // for the critical section's flushes to complete (WORT inserts ran
  // 1.2x faster without it). What a reader needs
  // (the stores before it, and a commit's flush + fence before the version
  // it sees) the release store and the commit's own fence give.
  void unlock() noexcept { __atomic_store_n(&word_, __atomic_load_n(&word_, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE); }
  // Recovery / initialisation only (no concurrent users).
  void reset() noexcept { __atomic_store_n(&word_, 0, __ATOMIC_RELAXED); }

  // Spin politely, then yield: the holder may be descheduled on a machine
  // with fewer cores than runnable threads.
  static void backoff(unsigned spins) noexcept {
    if (spins < 64)
      _mm_pause();
    else
      sched_yield();
  }
};
static_assert(sizeof(optimistic_lock) == 8);

}  // namespace pmindex::sync
