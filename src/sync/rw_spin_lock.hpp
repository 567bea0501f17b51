// A reader-writer spin lock (SharedLockable: std::shared_lock and
// std::unique_lock work) for short critical sections that threads on other
// cores hit at once: DPTree's buffer map, which writers lock exclusively
// for one B-tree insertion (~0.2 us) while readers hold it shared.
//
// Why not std::shared_mutex: a contended pthread rwlock parks the waiter in
// the kernel, and the futex wake costs microseconds, more than the section
// (measured on DPTree: 2-thread updates 0.80x of one global lock, session
// 33). Waiters spin with pause, then yield, then sleep (polite_wait.hpp), so
// a descheduled holder on an oversubscribed machine is not starved.
// A waiting writer raises `pending`, which holds new readers back, so a
// stream of readers cannot shut writers out.
#pragma once

#include <atomic>
#include <cstdint>

#include "sync/polite_wait.hpp"

namespace pmindex::common {

class rw_spin_lock {
 public:
  void lock_shared() noexcept {
    for (unsigned spins = 0;; ++spins) {
      uint32_t s = s_.load(std::memory_order_relaxed);
      if (!(s & (k_writer | k_pending)) && s_.compare_exchange_weak(s, s + 1, std::memory_order_acquire)) return;
      polite_wait(spins);
    }
  }
  void unlock_shared() noexcept { s_.fetch_sub(1, std::memory_order_release); }

  void lock() noexcept {
    for (unsigned spins = 0;; ++spins) {
      uint32_t s = s_.load(std::memory_order_relaxed);
      if ((s & ~k_pending) == 0) {  // no writer, no reader: take it (and clear pending: others raise it again)
        if (s_.compare_exchange_weak(s, k_writer, std::memory_order_acquire)) return;
        continue;
      }
      if (!(s & k_pending)) s_.fetch_or(k_pending, std::memory_order_relaxed);
      polite_wait(spins);
    }
  }
  void unlock() noexcept { s_.fetch_and(~k_writer, std::memory_order_release); }

 private:
  static constexpr uint32_t k_writer = 1u << 31, k_pending = 1u << 30;  // low bits: readers
  std::atomic<uint32_t> s_{0};
};

}  // namespace pmindex::common
