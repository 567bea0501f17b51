// Races the node locks of WORT, WOART and ART+CoW prevent (both key layouts;
// art/detail/node_locks.hpp), made deterministic with the test hook
// g_before_lock: a writer descends, then -- before it takes its locks --
// another writer changes the very word it planned to change. Its locks
// must see that (the version moved) and restart it. With g_stale_locks (the
// version check skipped: the bug) each case loses a key; the test proves
// that too, so it would fail if the check were gone.
//
// Lookups read no versions (node_locks.hpp, "LOOKUPS"); what keeps them
// from returning a word whose writer has not made it durable yet is one
// check at the end of each lock-free walk. With the hook g_before_unlock a
// writer stops, holding its locks, after its commit: a lookup started then
// must not return before the writer releases them (given 300 ms).
// g_unchecked_reads skips the gate's check (1) or the locks' (2): each lets
// the lookup return early.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "art/detail/node_locks.hpp"
#include "pmindex/index.hpp"

namespace pmindex {
namespace {

#ifdef PMINDEX_MUTANTS
using art::detail::g_before_lock;
using art::detail::g_before_unlock;
using art::detail::g_stale_locks;
using art::detail::g_unchecked_reads;

struct param {
  const char* index;
  const char* keys;
};
std::string param_name(const testing::TestParamInfo<param>& p) {
  return std::string(p.param.index) + "_" + p.param.keys;
}

class WortRace : public testing::TestWithParam<param> {
 protected:
  void TearDown() override {
    g_before_lock = nullptr;
    g_before_unlock = nullptr;
    g_stale_locks = false;
    g_unchecked_reads = 0;
  }
  std::unique_ptr<index> fresh() {
    options o;
    o.index = GetParam().index;
    o.mode = pm::mode::persist;
    o.pool_path = "/dev/shm/e-wortrace-" + std::to_string(getpid()) + "-" + o.index + ".pool";
    o.pool_size = 16 << 20;
    o.params = std::string("keys=") + GetParam().keys;
    o.quiet = true;
    ::unlink(o.pool_path.c_str());
    auto idx = open(o);
    ::unlink(o.pool_path.c_str());  // (mapped: the file is not needed)
    return idx;
  }
  static std::string k(uint64_t x) { return std::string(std::string_view(key_bytes(x))); }
  static std::string v(uint64_t x) { return std::string(std::string_view(value_bytes(x))); }
  static bool has(index& idx, uint64_t x) { return idx.lookup(k(x), nullptr); }

  // Runs `op` with `meanwhile` run between its descent and its locks, and
  // returns the keys of `expect` that are missing afterwards (plus a
  // check() failure, if any).
  std::string race(index& idx, const std::function<void()>& op, const std::function<void()>& meanwhile,
                   const std::vector<uint64_t>& expect) {
    std::function<void()> hook = meanwhile;
    g_before_lock = &hook;
    op();
    EXPECT_EQ(g_before_lock.load(), nullptr) << "the hook did not run";
    std::string missing;
    for (uint64_t x : expect)
      if (!has(idx, x)) missing += std::to_string(x >> 56) + " ";
    if (auto c = idx.check(); !c.ok) missing += "check: " + c.message;
    return missing;
  }

  // Keys by their first byte (same first byte: they meet in one word).
  static constexpr uint64_t x11 = 0x1100000000000001ull, x12 = 0x1200000000000002ull,
                            x13 = 0x1300000000000003ull, x22 = 0x2200000000000004ull,
                            y11 = 0x1100000000000005ull;

  // Two inserts planned on one leaf word (the root holds leaf x11): the
  // second one's pair node would replace the first one's.
  std::string insert_insert() {
    auto idx = fresh();
    EXPECT_TRUE(idx->insert(k(x11), v(1)));
    return race(
        *idx, [&] { EXPECT_TRUE(idx->insert(k(x12), v(2))); }, [&] { EXPECT_TRUE(idx->insert(k(x13), v(3))); },
        {x11, x12, x13});
  }
  // A remove planned to replace a node {x11, x22} by its last leaf x22,
  // while an insert puts y11 next to x11 (a new node in x11's word).
  std::string remove_insert() {
    auto idx = fresh();
    EXPECT_TRUE(idx->insert(k(x11), v(1)));
    EXPECT_TRUE(idx->insert(k(x22), v(2)));
    std::string m = race(
        *idx, [&] { EXPECT_TRUE(idx->remove(k(x11))); }, [&] { EXPECT_TRUE(idx->insert(k(y11), v(3))); },
        {x22, y11});
    if (has(*idx, x11)) m += "removed key present";
    return m;
  }

  // Runs `op`; while its writer holds its locks after the commit, another
  // thread looks `x` up. Returns what went wrong: the lookup returned
  // before the release, or returned something other than `present` after.
  std::string lookup_during(index& idx, const std::function<void()>& op, uint64_t x, bool present) {
    std::atomic<int> got{-1};
    std::thread reader;
    bool early = false;
    std::function<void()> hook = [&] {
      reader = std::thread([&] { got = has(idx, x) ? 1 : 0; });
      // 300 ms for the reader to return (it must not): a lookup that does
      // not wait returns at once, even on a loaded machine.
      for (int i = 0; i < 300 && got.load() < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      early = got.load() >= 0;
    };
    g_before_unlock = &hook;
    op();
    EXPECT_EQ(g_before_unlock.load(), nullptr) << "the hook did not run";
    if (reader.joinable()) reader.join();
    std::string wrong;
    if (early) wrong += "returned while the writer held its locks; ";
    if (got.load() != int(present)) wrong += "then " + std::string(got.load() ? "found" : "missed") + " the key; ";
    return wrong;
  }
  // An insert, an update and a remove, each with a lookup of its key.
  std::string lookups_during_commits() {
    auto idx = fresh();
    EXPECT_TRUE(idx->insert(k(x11), v(1)));
    EXPECT_TRUE(idx->insert(k(x22), v(2)));
    std::string m = "insert: " + lookup_during(*idx, [&] { EXPECT_TRUE(idx->insert(k(x12), v(3))); }, x12, true);
    m += "update: " + lookup_during(*idx, [&] { EXPECT_TRUE(idx->update(k(x11), v(4))); }, x11, true);
    m += "remove: " + lookup_during(*idx, [&] { EXPECT_TRUE(idx->remove(k(x22))); }, x22, false);
    return m == "insert: update: remove: " ? "" : m;
  }
};

TEST_P(WortRace, LookupsWaitForTheWriterToRelease) { EXPECT_EQ(lookups_during_commits(), ""); }

// Each of the lookups' two checks skipped: the lookups return early.
TEST_P(WortRace, WithoutTheGateCheckLookupsReturnEarly) {
  g_unchecked_reads = 1;
  EXPECT_NE(lookups_during_commits(), "");
}
TEST_P(WortRace, WithoutTheLockCheckLookupsReturnEarly) {
  g_unchecked_reads = 2;
  EXPECT_NE(lookups_during_commits(), "");
}

TEST_P(WortRace, StaleDescentRestarts) {
  EXPECT_EQ(insert_insert(), "");
  EXPECT_EQ(remove_insert(), "");
}

// The same races with the version check skipped: each loses a key (so the
// test above can fail).
TEST_P(WortRace, WithoutTheVersionCheckKeysAreLost) {
  g_stale_locks = true;
  EXPECT_NE(insert_insert(), "");
  EXPECT_NE(remove_insert(), "");
}

INSTANTIATE_TEST_SUITE_P(All, WortRace,
                         testing::Values(param{"wort", "u64"}, param{"woart", "u64"}, param{"artcow", "u64"},
                                         param{"wort", "bytes"}, param{"woart", "bytes"},
                                         param{"artcow", "bytes"}),
                         param_name);
#endif

}  // namespace
}  // namespace pmindex
