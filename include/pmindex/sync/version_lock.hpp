// A per-node version lock for ROWEX-style writers (Leis et al., "The ART of
// practical synchronization"): one 32-bit word inside a node, bit 0 = locked,
// bit 1 = obsolete (the node was replaced and must not be written again), the
// rest a version counter bumped by every unlock. Readers never touch it.
//
// The word may live inside a persistent node; it is volatile state, so
// recovery resets it to 0 (nothing held, not obsolete). A clean open that
// trusts such words must not wait forever on one a damaged pool holds
// (PermART's node_lock: load() and try_lock(), and a wait that can tell).
#pragma once

#include <immintrin.h>
#include <sched.h>

#include <atomic>
#include <cstdint>

namespace pmindex::sync {

class version_lock {
 public:
  static constexpr uint32_t k_locked = 1;
  static constexpr uint32_t k_obsolete = 2;
  static constexpr uint32_t k_step = 4;

  explicit version_lock(uint32_t& word) noexcept : w_(word) {}

  // Spins until the lock is taken; false (not taken) if the node is obsolete.
  bool lock() noexcept {
    for (unsigned spins = 0;; backoff(spins++)) {
      uint32_t v = w_.load(std::memory_order_acquire);
      if (v & k_obsolete) return false;
      if (!(v & k_locked) &&
          w_.compare_exchange_weak(v, v | k_locked, std::memory_order_acquire, std::memory_order_relaxed))
        return true;
    }
  }
  // The word now, and one attempt to lock it from the free value v read
  // from it (for a caller that must act between the two: PermART's
  // node_lock opens a writer section only for a lock it may get).
  uint32_t load() const noexcept { return w_.load(std::memory_order_acquire); }
  bool try_lock(uint32_t v) noexcept {
    return w_.compare_exchange_strong(v, v | k_locked, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() noexcept {
    uint32_t v = w_.load(std::memory_order_relaxed);
    w_.store((v & ~k_locked) + k_step, std::memory_order_release);
  }
  // Unlocks and marks the node replaced: waiting writers see it and restart.
  void unlock_obsolete() noexcept {
    uint32_t v = w_.load(std::memory_order_relaxed);
    w_.store(((v & ~k_locked) + k_step) | k_obsolete, std::memory_order_release);
  }
  bool obsolete() const noexcept { return w_.load(std::memory_order_acquire) & k_obsolete; }
  bool locked() const noexcept { return w_.load(std::memory_order_acquire) & k_locked; }

  // Spin politely; yield after a while (the machine may have fewer cores
  // than runnable threads, and the holder may be descheduled).
  static void backoff(unsigned spins) noexcept {
    if (spins < 64)
      _mm_pause();
    else
      sched_yield();
  }

 private:
  std::atomic_ref<uint32_t> w_;
};

}  // namespace pmindex::sync
