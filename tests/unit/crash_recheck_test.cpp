// A crash image forked while another thread of the history still ran can
// leave that thread's lock held forever in the child (ASan's allocator has
// no fork handler), so the child hangs without any fault of the recovery.
// The checker checks such an image once more in a new child instead of
// reporting a hang (crashtest.cpp, run_images). Seen in CI-like runs on a
// loaded machine: crash_dptree_threads2 and crash_roart_threads4 reported
// "recovery or the oracle hung" for images whose recovery takes 0.1 s.
//
// The index here is the canary behind a lock that its background thread
// holds, spinning (never parked), until a recovering child says it waits
// for it: the first child hangs on the copy of the held lock, the parent's
// thread then lets go, and the second child recovers. A holder that sleeps
// instead ('S': the freeze counts it as blocked) makes the image frozen,
// and a frozen image's hung child is checked again too (in CI,
// DPTree children of frozen images hung on an allocator lock).
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "crash/crashtest.hpp"
#include "pmindex/index.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::crash {
namespace {

std::mutex g_held;                // held by the background thread at the fork
std::atomic<bool> g_holding{false};
bool g_sleeping = false;          // the holder sleeps (frozen images) instead of spinning
std::thread g_holder;
std::string g_marker;             // a recovering child creates it, then waits for g_held

bool marker_exists() {
  struct stat st;
  return ::stat(g_marker.c_str(), &st) == 0;
}

void start_holder() {
  if (g_holder.joinable()) return;
  g_holder = std::thread([] {
    std::unique_lock l(g_held);
    g_holding = true;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!marker_exists() && std::chrono::steady_clock::now() < give_up) {
      if (g_sleeping) {  // asleep in the kernel: the checker counts it as blocked
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      // Busy (running, not asleep): the checker cannot count it as parked.
      for (int i = 0; i < 100000; ++i) __asm__ volatile("");  // (kept: not optimised away)
    }
  });
  while (!g_holding) std::this_thread::yield();
}

void register_locked_canary() {
  static std::once_flag once;
  std::call_once(once, [] {
    index_entry e = *find_index("canary");
    e.name = "crash-test-locked-canary";
    e.description = "crash checker test: the canary behind a lock a running thread holds";
    auto canary = e.factory;
    e.factory = [canary](pm::pool& p, open_kind k, const index_config& c) {
      if (k == open_kind::created) {
        start_holder();
      } else {  // a reopen (in the checker's child): wait for the lock
        std::ofstream(g_marker).put('x');
        std::lock_guard l(g_held);
      }
      return canary(p, k, c);
    };
    register_index(e);
  });
}

// A short history of the locked canary; `sleeping`: the holder sleeps.
result run_locked_canary(const std::string& marker, bool sleeping) {
  g_marker = marker + std::to_string(::getpid());
  ::unlink(g_marker.c_str());
  g_sleeping = sleeping;
  register_locked_canary();
  config c;
  c.index = "crash-test-locked-canary";
  c.quiet = true;
  c.save_dir = "";
  c.print_violations = false;
  c.ops = 40;
  c.images = 8;
  c.child_timeout = 1;
  result r = run(c);
  if (g_holder.joinable()) g_holder.join();
  g_sleeping = false;
  ::unlink(g_marker.c_str());
  return r;
}

TEST(CrashRecheck, AHungChildOfAnUnfrozenImageIsCheckedAgain) {
  result r = run_locked_canary("/tmp/pmindex-crash-recheck-", false);
  EXPECT_EQ(r.violations, 0u) << (r.messages.empty() ? "" : r.messages[0]);
  EXPECT_GE(r.rechecked, 1u);  // the first child did hang
  EXPECT_GE(r.images, 1u);
}

TEST(CrashRecheck, AHungChildOfAFrozenImageIsCheckedAgain) {
  result r = run_locked_canary("/tmp/pmindex-crash-recheck-frozen-", true);
  EXPECT_EQ(r.violations, 0u) << (r.messages.empty() ? "" : r.messages[0]);
  EXPECT_GE(r.rechecked, 1u);  // the first child did hang
  EXPECT_LT(r.unfrozen, r.images);  // and some image was frozen (the sleeping holder counts as blocked)
}

}  // namespace
}  // namespace pmindex::crash
