// The crash checker's model of durability (src/crash/shadow.cpp, image.cpp):
// which states a line may hold after a crash, per the x86 flush/fence rules.
// The end-to-end checks are `pmindex crashtest` (tests/registry_tests.cmake).
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "../../src/sync/polite_wait.hpp"
#include "../../src/crash/image.hpp"
#include "../../src/crash/shadow.hpp"
#include "crash/crashtest.hpp"

namespace pmindex::crash {
namespace {

class CrashShadow : public ::testing::Test {
 protected:
  static constexpr uint64_t k_size = 1 << 20;
  void SetUp() override {
    void* m = mmap(nullptr, k_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    base_ = static_cast<char*>(m);
    obs_.on_map(base_, k_size);
  }
  void TearDown() override { munmap(base_, k_size); }
  uint64_t* word(uint64_t line, unsigned w = 0) { return reinterpret_cast<uint64_t*>(base_ + line * 64) + w; }
  const candidate* find(const std::vector<candidate>& c, uint64_t line) {
    for (auto& x : c)
      if (x.line == line) return &x;
    return nullptr;
  }
  uint64_t word_of(const char* state, unsigned w = 0) {
    uint64_t v;
    std::memcpy(&v, state + 8 * w, 8);
    return v;
  }
  char* base_ = nullptr;
  shadow_observer obs_{1};
};

TEST_F(CrashShadow, FlushThenFenceIsDurable) {
  *word(3) = 7;
  obs_.on_flush(word(3), 8);
  obs_.on_fence();
  EXPECT_TRUE(obs_.candidates().empty());
  EXPECT_EQ(obs_.events(), 2u);
}

TEST_F(CrashShadow, UnflushedStoreMayBeLostOrKept) {
  *word(5, 2) = 9;
  auto c = obs_.candidates();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].line, 5u);
  ASSERT_EQ(c[0].n, 1u);  // the durable value (zeros); choice 1 keeps the current one
  EXPECT_EQ(word_of(c[0].state[0], 2), 0u);
}

TEST_F(CrashShadow, FlushWithoutFenceKeepsThreeStates) {
  *word(1) = 1;
  obs_.on_flush(word(1), 8);
  obs_.on_fence();
  *word(1) = 2;
  obs_.on_flush(word(1), 8);  // not fenced
  *word(1) = 3;
  auto c = obs_.candidates();
  ASSERT_EQ(c.size(), 1u);
  ASSERT_EQ(c[0].n, 2u);
  EXPECT_EQ(word_of(c[0].state[0]), 1u);  // durable
  EXPECT_EQ(word_of(c[0].state[1]), 2u);  // at the unfenced flush
  EXPECT_EQ(combinations(c), 3u);
  // Variants enumerate the three states; the current value is never torn.
  for (uint64_t v = 0; v < 3; ++v) {
    std::vector<char> copy(base_, base_ + k_size);
    apply_variant(c, 1, 0, v, copy.data());
    uint64_t got;
    std::memcpy(&got, copy.data() + 64, 8);
    EXPECT_EQ(got, v + 1);
  }
}

TEST_F(CrashShadow, StoresAfterTheFlushAreNotDurable) {
  *word(2) = 1;
  obs_.on_flush(word(2), 8);
  *word(2) = 2;  // after the flush, before the fence
  obs_.on_fence();
  auto c = obs_.candidates();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(word_of(c[0].state[0]), 1u);
}

TEST_F(CrashShadow, AFenceOrdersOnlyItsOwnThreadsFlushes) {
  shadow_observer obs(2);
  obs.on_map(base_, k_size);
  *word(4) = 1;
  std::thread([&] { obs.on_flush(word(4), 8); }).join();  // flushed, never fenced by its thread
  obs.on_fence();                                         // another thread's fence
  auto c = obs.candidates();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(word_of(c[0].state[0]), 0u);
}

TEST_F(CrashShadow, AnOlderFlushNeverOverridesANewerDurableValue) {
  shadow_observer obs(2);
  obs.on_map(base_, k_size);
  *word(6) = 1;
  obs.on_flush(word(6), 8);  // this thread: pending value 1
  std::thread([&] {
    *word(6) = 2;
    obs.on_flush(word(6), 8);
    obs.on_fence();  // durable: 2
  }).join();
  obs.on_fence();  // must not bring back 1
  EXPECT_TRUE(obs.candidates().empty());
}

TEST_F(CrashShadow, VariantZeroLosesEveryUnfencedStore) {
  for (uint64_t l = 0; l < 40; ++l) *word(l) = l + 1;
  auto c = obs_.candidates();
  ASSERT_EQ(c.size(), 40u);
  EXPECT_GT(combinations(c), k_enumerate_limit);
  std::vector<char> copy(base_, base_ + k_size);
  apply_variant(c, 1, 0, 0, copy.data());
  for (uint64_t l = 0; l < 40; ++l) EXPECT_EQ(copy[l * 64], 0);
}

// A waiter that sleeps in polite_wait is asleep ('S') when the crash point
// looks, so the crash counts it as frozen; if what it waits for comes true,
// it must not run on while the crash forks its images (CI: a DPTree merge
// thread went on into malloc, and the child hung on the allocator's lock).
// It parks after its sleep until the crash point ends. The mutant check:
// without the park after the sleep (polite_wait.hpp), `ran_during` is true.
TEST(CrashFreeze, ASleepingWaiterParksUntilTheCrashPointEnds) {
  struct calls : shadow_observer::listener {
    std::function<void()> at_crash;
    bool wants(uint64_t) override { return true; }
    void crash(uint64_t, bool) override { at_crash(); }
  };
  // As the checker does between its calibration run and the real one: the
  // next observer is made before the last one is dropped (the first version
  // of the park left no observer registered then, and CI still hung).
  auto last = std::make_unique<shadow_observer>(1);
  auto next = std::make_unique<shadow_observer>(1);
  last.reset();
  shadow_observer& obs = *next;
  std::atomic<bool> go{false}, ran{false};
  std::atomic<unsigned> sleeps{0};
  std::thread waiter([&] {
    for (unsigned spins = 0; !go.load(); ++spins) {
      common::polite_wait(spins);
      if (spins >= 256) sleeps.fetch_add(1);
    }
    ran = true;
  });
  while (sleeps.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  bool ran_during = false;
  calls l;
  l.at_crash = [&] {
    go = true;  // what it waits for comes true while the crash runs
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ran_during = ran.load();
  };
  obs.set_listener(&l);
  obs.crash_now();
  waiter.join();
  EXPECT_FALSE(ran_during) << "the waiter ran on during the crash point";
  EXPECT_TRUE(ran);
}

TEST(CrashChecker, CanaryPassesAShortRun) {
  config c;
  c.index = "canary";
  c.ops = 80;
  c.images = 150;
  c.quiet = true;
  c.save_dir = "";
  auto r = run(c);
  EXPECT_GT(r.images, 100u);
  EXPECT_EQ(r.violations, 0u) << (r.messages.empty() ? "" : r.messages.front());
}

#ifdef PMINDEX_MUTANTS
TEST(CrashChecker, CatchesFlushWithoutFence) {
  config c;
  c.index = "canary";
  c.params = "mutant=flush_without_fence";
  c.ops = 80;
  c.images = 300;
  c.quiet = true;
  c.print_violations = false;
  c.save_dir = "";
  c.max_violations = 1;
  EXPECT_EQ(run(c).violations, 1u);
}
#endif

}  // namespace
}  // namespace pmindex::crash
