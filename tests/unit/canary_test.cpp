// canary: random operations against a std::map oracle (all modes), clean
// and dirty reopen, recovery of tagged links and upper levels, concurrent
// readers, trace() agreeing with the allocator, bad params.
#include <unistd.h>

#include <atomic>
#include <map>
#include <thread>

#include "basic/canary/node.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

using test::temp_pool;

options opts(const std::string& path, pm::mode m = pm::mode::persist) {
  options o;
  o.pool_path = path;
  o.pool_size = 32 << 20;
  o.mode = m;
  o.quiet = true;
  return o;
}

void expect_equal(index& idx, const std::map<uint64_t, uint64_t>& ref) {
  std::vector<record> all;
  idx.range(0, UINT64_MAX, all);
  ASSERT_EQ(all.size(), ref.size());
  size_t i = 0;
  for (auto& [k, v] : ref) {
    ASSERT_EQ(all[i].key, k);
    ASSERT_EQ(all[i].value, v);
    ++i;
  }
  auto c = idx.check();
  ASSERT_TRUE(c.ok) << c.message;
}

void random_ops(index& idx, std::map<uint64_t, uint64_t>& ref, std::mt19937_64& rng, int n, uint64_t universe) {
  for (int i = 0; i < n; ++i) {
    uint64_t k = rng() % universe, v = rng();
    switch (rng() % 5) {
      case 0:
      case 1: ASSERT_EQ(idx.insert(k, v), ref.emplace(k, v).second); break;
      case 2: {
        bool present = ref.count(k);
        ASSERT_EQ(idx.update(k, v), present);
        if (present) ref[k] = v;
        break;
      }
      case 3: ASSERT_EQ(idx.remove(k), ref.erase(k) == 1); break;
      default: {
        auto it = ref.find(k);
        auto got = idx.lookup(k);
        ASSERT_EQ(got.has_value(), it != ref.end());
        if (got) {
          ASSERT_EQ(*got, it->second);
        }
        record out[8];
        size_t m = idx.scan(k, 8, out);
        auto r = ref.lower_bound(k);
        for (size_t j = 0; j < m; ++j, ++r) {
          ASSERT_NE(r, ref.end());
          ASSERT_EQ(out[j].key, r->first);
          ASSERT_EQ(out[j].value, r->second);
        }
        if (m < 8) {
          ASSERT_EQ(r, ref.end());
        }
      }
    }
  }
}

class CanaryModes : public ::testing::TestWithParam<pm::mode> {};

TEST_P(CanaryModes, MatchesStdMap) {
  uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  temp_pool tp("canary-map");
  auto idx = open(opts(tp.path(), GetParam()));
  std::map<uint64_t, uint64_t> ref;
  int n = test::long_run() ? 200000 : 20000;
  random_ops(*idx, ref, rng, n, 5000);
  expect_equal(*idx, ref);
  EXPECT_EQ(idx->stats().records, ref.size());
  // Extremes of the key space.
  for (uint64_t k : {uint64_t{0}, UINT64_MAX, UINT64_MAX - 1}) {
    ASSERT_EQ(idx->upsert(k, k ^ 1), !ref.count(k));
    ref[k] = k ^ 1;
  }
  expect_equal(*idx, ref);
}

INSTANTIATE_TEST_SUITE_P(Modes, CanaryModes,
                         ::testing::Values(pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr),
                         [](const auto& info) {
                           auto s = std::string(pm::to_string(info.param));
                           return s == "volatile" ? std::string("volatile_") : s;
                         });

TEST(Canary, CleanAndDirtyReopenKeepEverything) {
  uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  temp_pool tp("canary-reopen");
  std::map<uint64_t, uint64_t> ref;
  for (int round = 0; round < 6; ++round) {
    auto idx = open(opts(tp.path()));
    if (round) {
      EXPECT_EQ(idx->report().was_clean, round % 2 == 0);
    }
    expect_equal(*idx, ref);
    random_ops(*idx, ref, rng, 3000, 2000);
    if (round % 2 == 0) idx->abandon();
    else idx->close();
  }
}

// Dirty reopen traces exactly the live nodes: the allocator's count of used
// blocks equals records + the root, and freed space is reused.
TEST(Canary, TraceMatchesAllocator) {
  temp_pool tp("canary-trace");
  {
    auto idx = open(opts(tp.path()));
    for (uint64_t i = 0; i < 3000; ++i) idx->insert(i, i);
    for (uint64_t i = 0; i < 3000; i += 2) idx->remove(i);
    idx->abandon();  // removed nodes waiting in limbo are lost with DRAM
  }
  auto idx = open(opts(tp.path()));
  EXPECT_EQ(idx->report().traced_blocks, 1501u);
  EXPECT_EQ(idx->pool().usage().used_blocks, 1501u);
  uint64_t live = 0;
  idx->pool().rebuild_heap([&](pm::pool::trace_sink& s) {
    idx->trace(s);
    live = s.blocks();
  });
  EXPECT_EQ(live, 1501u);
  EXPECT_TRUE(idx->check().ok);
}

// Recovery clears an UNPERSISTED tag left on a level-0 link and rebuilds the
// upper levels (here: wiped) from level 0.
TEST(Canary, RecoveryClearsTagsAndRebuildsUpperLevels) {
  temp_pool tp("canary-tags");
  {
    auto idx = open(opts(tp.path()));
    for (uint64_t i = 1; i <= 1000; ++i) idx->insert(i * 10, i);
    auto& p = idx->pool();
    auto* r = p.ptr<basic::canary::detail::root>(p.root());
    uint64_t first = r->head.next[0];
    r->head.next[0] = first | basic::canary::detail::k_unpersisted;  // a crash mid-link
    for (uint32_t i = 1; i < basic::canary::detail::k_max_height; ++i) r->head.next[i] = 0;
    idx->abandon();
  }
  auto idx = open(opts(tp.path()));
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
  for (uint64_t i = 1; i <= 1000; ++i) ASSERT_EQ(idx->lookup(i * 10), i);
  EXPECT_EQ(idx->stats().records, 1000u);
}

TEST(Canary, DamagedLevelZeroIsCorruptNotACrash) {
  temp_pool tp("canary-damaged");
  {
    auto idx = open(opts(tp.path()));
    for (uint64_t i = 1; i <= 100; ++i) idx->insert(i, i);
    auto& p = idx->pool();
    auto* r = p.ptr<basic::canary::detail::root>(p.root());
    r->head.next[0] = p.size() + 4096;  // outside the pool
    idx->abandon();
  }
  try {
    open(opts(tp.path()));
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::corrupt);
  }
  // The failed recovery left the pool dirty, not marked clean.
  EXPECT_EQ(test::run_pmindex({"verify", "--pool", tp.path()}), 11);
}

// A clean pool whose damage left a commit marker set (a value's odd
// seqlock, a level-0 link's or a kv word's UNPERSISTED tag): a dirty open
// clears markers, a clean one trusts them, and readers waiting for a writer
// that does not exist hung forever (`damagetest --index canary` found it:
// verify and lookups at the deadline). Now each is errc::corrupt. Run in a
// child with a deadline, so that the old hang fails the test instead of
// hanging it.
TEST(Canary, DamagedCommitMarkersAreCorruptNotAHang) {
  using namespace basic::canary::detail;
  enum class damage { seq, link_tag, kv_tag };
  for (damage d : {damage::seq, damage::link_tag, damage::kv_tag}) {
    SCOPED_TRACE(int(d));
    temp_pool tp("canary-marker");
    options o = opts(tp.path());
    if (d == damage::kv_tag) o.params = "keys=bytes";
    {
      auto idx = open(o);
      auto& p = idx->pool();
      if (d == damage::kv_tag) {
        for (int i = 10; i < 60; ++i) idx->insert(std::string("k") + std::to_string(i), "v");
        auto* r = p.ptr<broot>(p.root());
        p.ptr<bnode>(r->head.next[0])->kv |= k_unpersisted;
      } else {
        for (uint64_t i = 1; i <= 50; ++i) idx->insert(i, i);
        auto* r = p.ptr<root>(p.root());
        if (d == damage::seq) {
          p.ptr<node>(r->head.next[0])->seq = 1;
        } else {
          r->head.next[0] |= k_unpersisted;
        }
      }
      idx->close();  // clean: the marker is trusted at the next open
    }
    auto idx = open(o);
    auto corrupt = [](auto&& op) { test::exit_0_if_corrupt(op); };
    if (d == damage::kv_tag) {
      std::string v;
      EXPECT_EXIT(corrupt([&] { idx->lookup("k10", &v); }), testing::ExitedWithCode(0), "") << "lookup";
      // A writer's own search meets it too (it holds the writers' mutex):
      // "k0" sorts before the damaged first node.
      EXPECT_EXIT(corrupt([&] { idx->insert(std::string("k0"), "v"); }), testing::ExitedWithCode(0), "") << "insert";
    } else {
      EXPECT_EXIT(corrupt([&] { idx->lookup(1); }), testing::ExitedWithCode(0), "") << "lookup";
      record out[4];
      EXPECT_EXIT(corrupt([&] { idx->scan(0, 4, out); }), testing::ExitedWithCode(0), "") << "scan";
    }
    if (d == damage::seq) {
      EXPECT_FALSE(idx->check().ok);  // no writer runs: an odd seqlock is damage
    }
  }
}

// Lock-free readers (lookup, scan) run beside a writer; values are derived
// from keys so a reader can tell a torn or foreign value.
TEST(Canary, ConcurrentReadersSeeConsistentRecords) {
  uint64_t seed = test::test_seed();
  temp_pool tp("canary-conc");
  auto idx = open(opts(tp.path()));
  auto val = [](uint64_t k, uint64_t gen) { return (k << 20) | (gen & 0xfffff); };
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0};
  std::thread reader([&] {
    std::mt19937_64 rng(seed + 1);
    record out[32];
    while (!stop.load()) {
      uint64_t k = rng() % 4096;
      if (auto v = idx->lookup(k); v && (*v >> 20) != k) bad.fetch_add(1);
      size_t m = idx->scan(k, 32, out);
      for (size_t j = 0; j < m; ++j) {
        if ((out[j].value >> 20) != out[j].key || out[j].key < k) bad.fetch_add(1);
        if (j && out[j - 1].key >= out[j].key) bad.fetch_add(1);
      }
    }
  });
  std::mt19937_64 rng(seed);
  int n = test::long_run() ? 300000 : 40000;
  for (int i = 0; i < n; ++i) {
    uint64_t k = rng() % 4096;
    switch (rng() % 3) {
      case 0: idx->insert(k, val(k, i)); break;
      case 1: idx->update(k, val(k, i)); break;
      default: idx->remove(k);
    }
  }
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_TRUE(idx->check().ok);
}

TEST(Canary, BadParamsAreUsageErrors) {
  temp_pool tp("canary-params");
  auto o = opts(tp.path());
  o.params = "mutant=no_such_mutant";
  try {
    open(o);
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::usage);
  }
}

}  // namespace
}  // namespace pmindex
