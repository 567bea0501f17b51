// One step of a wait that may be long: spin, then yield, then sleep.
//
// Why sleep at all: a thread that waits for another one stopped for a long
// time (by the crash checker at a crash point, or descheduled) must not
// stay runnable forever. The crash checker forks an image only when every
// other thread is asleep in the kernel ('S'): a waiter that only yields is
// 'R' and holds each crash point up to its timeout (2 s with one history
// thread beside a background thread; DPTree's merge thread waiting for a
// writer stopped inside the writer gate made its crash tests 16x slower)
// and the image is then checked without its leak count.
// Short waits (the usual case) never reach the sleep.
//
// But a sleeper is not blocked: it wakes by itself, and if what it waited
// for came true before the crash point (a writer left the gate, then
// parked), it runs on while the checker forks, into malloc say, and the
// child inherits the allocator lock it held: the child hangs (DPTree's merge
// thread in CI, crash_dptree_threads2 and extra_dptree_threads2_merges).
// So after each sleep the waiter asks `g_after_sleep` (set by the crash
// checker only) whether it must park until the crash point ends.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "sync/optimistic_lock.hpp"

namespace pmindex::common {

// Null except under the crash checker (src/crash/shadow.cpp).
inline std::atomic<void (*)()> g_after_sleep{nullptr};

inline void polite_wait(unsigned spins) noexcept {
  if (spins < 256) {
    sync::optimistic_lock::backoff(spins);  // pause, then yield
    return;
  }
  std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (auto park = g_after_sleep.load(std::memory_order_acquire)) park();
}

}  // namespace pmindex::common
