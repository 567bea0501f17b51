// The ordered pmemids structures (btree, skiplist, ...) in every mode they
// offer (the generic conformance suites run dram and persist only, and
// their byte keys are longer than these structures' 16):
// random operations against a std::map, check() and a full scan after each
// phase, then a clean and a dirty reopen (tx: the undo logs rolled back
// first) with the same content; and the per-insert persistence cost of each
// mode as each header states it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "pmemids_ops.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "substrate_util.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

struct param {
  const char* index;
  pm::mode mode;
  bool bytes;
};

class PmemidsOrdered : public testing::TestWithParam<param> {};

options opts(const std::string& path, const param& p) {
  return test::pmemids::pool_options(p.index, path, p.mode, p.bytes);
}

using test::pmemids::key_of;
using test::pmemids::ref_map;
void compare(index& idx, const ref_map& ref) { test::pmemids::compare_scan(idx, ref); }

TEST_P(PmemidsOrdered, RandomOpsReopenAndRecover) {
  const param p = GetParam();
  std::mt19937_64 rng(test::test_seed());
  test::temp_pool tp("pmemids-btree");
  ref_map ref;
  {
    auto idx = open(opts(tp.path(), p));
    for (int i = 0; i < 6000; ++i) {
      std::string k = key_of(rng() % 3000, p.bytes);
      std::string v = p.bytes ? std::string(rng() % 101, static_cast<char>('A' + rng() % 26))
                              : std::string(std::string_view(value_bytes(rng())));
      switch (rng() % 4) {
        case 0:
        case 1: EXPECT_EQ(idx->insert(k, v), ref.emplace(k, v).second) << i; break;
        case 2: {
          bool had = ref.count(k);
          EXPECT_EQ(idx->update(k, v), had) << i;
          if (had) ref[k] = v;
          break;
        }
        default: EXPECT_EQ(idx->remove(std::string_view(k)), ref.erase(k) == 1) << i;
      }
      if (i % 1500 == 0) compare(*idx, ref);
    }
    compare(*idx, ref);
    if (p.mode == pm::mode::dram) return;
    idx->close();
  }
  auto idx = open(opts(tp.path(), p));
  EXPECT_TRUE(idx->report().was_clean);
  compare(*idx, ref);
  for (int i = 0; i < 500; ++i) {
    std::string k = key_of(3000 + i, p.bytes);
    std::string v = p.bytes ? "v" + std::to_string(i) : std::string(std::string_view(value_bytes(i)));
    if (idx->insert(k, v)) ref.emplace(k, v);
  }
  idx->abandon();  // a crash between operations
  idx = open(opts(tp.path(), p));
  EXPECT_FALSE(idx->report().was_clean);
  compare(*idx, ref);
}

// A value longer than the slot chosen at creation is a typed error.
TEST(PmemidsBtreeLimits, ValueOverTheSlotIsValueTooLong) {
  test::temp_pool tp("pmemids-btree-limit");
  auto idx = open(opts(tp.path(), {"btree", pm::mode::persist, true}));
  try {
    idx->insert("k", std::string(101, 'x'));
    FAIL();
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::value_too_long) << e.what();
  }
  EXPECT_TRUE(idx->insert("k", std::string(100, 'x')));
}

// Persistence per insert without a split (the figures of btree.hpp): persist
// copies the leaf (2 fences), tx logs two ranges and commits (4 fences).
TEST(PmemidsBtreeCost, FencesPerInsert) {
  for (pm::mode m : {pm::mode::persist, pm::mode::tx}) {
    test::temp_pool tp("pmemids-btree-cost");
    auto idx = open(opts(tp.path(), {"btree", m, false}));
    idx->insert(uint64_t{100}, uint64_t{1});
    auto before = pm::thread_counters();
    idx->insert(uint64_t{50}, uint64_t{2});  // a leaf of 1 record: no split
    auto d = pm::thread_counters() - before;
    EXPECT_EQ(d.fences, m == pm::mode::tx ? 4u : 2u) << pm::to_string(m);
    before = pm::thread_counters();
    idx->update(uint64_t{50}, uint64_t{3});
    d = pm::thread_counters() - before;
    EXPECT_EQ(d.fences, 1u) << pm::to_string(m);
    EXPECT_EQ(d.lines_flushed, 1u) << pm::to_string(m);
    // A remove from a leaf that can spare a record: persist copies the
    // leaf (2 fences), tx saves it whole and commits (3 fences).
    idx->insert(uint64_t{60}, uint64_t{4});
    before = pm::thread_counters();
    idx->remove(uint64_t{50});
    d = pm::thread_counters() - before;
    EXPECT_EQ(d.fences, m == pm::mode::tx ? 3u : 2u) << pm::to_string(m);
  }
}

double stat(index& idx, const std::string& name) {
  for (auto& [n, v] : idx.stats().extra)
    if (n == name) return v;
  return -1;
}

// Removes are real (the btree's merge and rotate, not tombstones): 3000
// records emptied in random order keep the invariants at every step; the
// btree ends as one empty leaf; refilled, the index holds the new keys.
TEST_P(PmemidsOrdered, RemoveAllThenRefill) {
  const param p = GetParam();
  std::mt19937_64 rng(test::test_seed());
  test::temp_pool tp("pmemids-btree-shrink");
  auto idx = open(opts(tp.path(), p));
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < 3000; ++i) keys.push_back(key_of(i, false));
  for (auto& k : keys) ASSERT_TRUE(idx->insert(k, std::string(8, 'v')));
  if (std::string(p.index).starts_with("btree")) {
    EXPECT_GT(stat(*idx, "depth"), 2.0);
  }
  std::shuffle(keys.begin(), keys.end(), rng);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(idx->remove(std::string_view(keys[i]))) << i;
    ASSERT_FALSE(idx->remove(std::string_view(keys[i]))) << i;
    if (i % 97 == 0) {
      auto c = idx->check();
      ASSERT_TRUE(c.ok) << i << ": " << c.message;
    }
  }
  EXPECT_EQ(idx->stats().records, 0u);
  if (std::string(p.index).starts_with("btree")) {
    EXPECT_EQ(stat(*idx, "nodes"), 1.0);
  }
  compare(*idx, {});
  for (uint64_t i = 5000; i < 5500; ++i) ASSERT_TRUE(idx->insert(key_of(i, false), std::string(8, 'w')));
  EXPECT_EQ(idx->stats().records, 500u);
}

std::vector<param> params() {
  std::vector<param> v;
  for (const char* i : {"btree", "btree-ref", "skiplist", "bplustree", "rbtree"})
    for (bool bytes : {false, true})
      for (pm::mode m : {pm::mode::dram, pm::mode::persist, pm::mode::tx}) v.push_back({i, m, bytes});
  return v;
}

// The skiplist's persistence per operation (skiplist.hpp): an insert's
// node flushed and fenced, then the level-0 commit (2 fences; the upper
// levels flushed without a fence); tx: one snapshot per level, commit.
TEST(PmemidsSkiplistCost, FencesPerOperation) {
  for (pm::mode m : {pm::mode::persist, pm::mode::tx}) {
    test::temp_pool tp("pmemids-skiplist-cost");
    auto idx = open(opts(tp.path(), {"skiplist", m, false}));
    for (uint64_t k = 0; k < 64; ++k) {
      auto before = pm::thread_counters();
      idx->insert(k, k);
      auto d = pm::thread_counters() - before;
      if (m == pm::mode::persist) {
        EXPECT_EQ(d.fences, 2u) << k;
      }
      if (m == pm::mode::tx) {
        EXPECT_GE(d.fences, 3u) << k;  // height + 2
      }
    }
    auto before = pm::thread_counters();
    idx->update(uint64_t{5}, uint64_t{1});
    EXPECT_EQ((pm::thread_counters() - before).fences, 1u);
    before = pm::thread_counters();
    idx->remove(uint64_t{5});
    auto d = pm::thread_counters() - before;
    if (m == pm::mode::persist) {
      EXPECT_EQ(d.fences, 1u);
    }
    if (m == pm::mode::tx) {
      EXPECT_GE(d.fences, 3u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, PmemidsOrdered, testing::ValuesIn(params()),
                         [](const testing::TestParamInfo<param>& i) {
                           std::string s = std::string(i.param.index) + "_" +
                                           std::string(pm::to_string(i.param.mode)) + (i.param.bytes ? "_bytes" : "_u64");
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

}  // namespace
}  // namespace pmindex
