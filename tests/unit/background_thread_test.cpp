// Background threads (DPTree's merges, PACTree's structure changes) run on
// every CPU the process may use, not on the CPU of the caller that started
// them (common/background_thread.hpp). The old bug: DPTree's merge thread,
// started by the first merge from a writer pinned by `pmindex bench --pin`,
// shared that writer's CPU, and a 1-thread write run used one core of two.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include "index_fixture.hpp"

namespace pmindex {
namespace {

std::set<pid_t> tasks() {
  std::set<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
    out.insert(pid_t(std::stol(e.path().filename().string())));
  return out;
}

class BackgroundThread : public test::index_fixture, public testing::WithParamInterface<const char*> {
 protected:
  BackgroundThread() : index_fixture(GetParam()) {}
};

// From a thread pinned to one CPU: open the index and write enough that a
// merge runs (DPTree starts its thread there; PACTree at open). Every thread
// that appeared meanwhile has the main thread's affinity.
TEST_P(BackgroundThread, NotPinnedToTheCallerThatStartsIt) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(::getpid(), sizeof all, &all), 0);
  if (CPU_COUNT(&all) < 2) GTEST_SKIP() << "one CPU: nothing to pin away from";
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;

  const std::set<pid_t> before = tasks();
  std::unique_ptr<index> idx;
  std::thread caller([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    idx = open_idx(std::string(GetParam()) == "dptree" ? "leaf=8,merge_min=16" : "node=4");  // small: merges, splits
    for (uint64_t k = 0; k < 4000; ++k) ASSERT_TRUE(idx->insert(k * 7 + 1, k));
  });
  caller.join();
  ASSERT_TRUE(idx);

  std::set<pid_t> started;
  for (pid_t t : tasks())
    if (!before.count(t)) started.insert(t);
  ASSERT_FALSE(started.empty()) << GetParam() << " started no thread of its own";
  for (pid_t t : started) {
    cpu_set_t got;
    ASSERT_EQ(sched_getaffinity(t, sizeof got, &got), 0);
    EXPECT_TRUE(CPU_EQUAL(&got, &all)) << "thread " << t << " runs on " << CPU_COUNT(&got) << " CPU(s) of "
                                       << CPU_COUNT(&all);
  }
  idx->close();
}

INSTANTIATE_TEST_SUITE_P(Indexes, BackgroundThread, testing::Values("dptree", "pactree"));

}  // namespace
}  // namespace pmindex
