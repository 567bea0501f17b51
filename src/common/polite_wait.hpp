// One step of a wait that may be long: spin, then yield, then sleep.
//
// Why sleep at all: a thread that waits for another one stopped for a long
// time (by the crash checker at a crash point, or descheduled) must not
// stay runnable forever. The crash checker forks an image only when every
// other thread is asleep in the kernel ('S'): a waiter that only yields is
// 'R' and holds each crash point up to its timeout (2 s with one history
// thread beside a background thread; DPTree's merge thread waiting for a
// writer stopped inside the writer gate made its crash tests 16x slower,
// session 33) and the image is then checked without its leak count.
// Short waits (the usual case) never reach the sleep.
#pragma once

#include <chrono>
#include <thread>

#include "pmindex/sync/optimistic_lock.hpp"

namespace pmindex::common {

inline void polite_wait(unsigned spins) noexcept {
  if (spins < 256)
    sync::optimistic_lock::backoff(spins);  // pause, then yield
  else
    std::this_thread::sleep_for(std::chrono::microseconds(50));
}

}  // namespace pmindex::common
