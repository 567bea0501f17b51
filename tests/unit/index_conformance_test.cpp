// One suite over every registered index: the same operations on the index
// and on a std::map oracle, check() after every phase, clean and dirty
// reopen (recovery), a full pool, and a leak check by tracing. An index is
// covered as soon as it is registered; sizes grow with PMINDEX_LONG=1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "index_tests.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "oracle.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

using test::long_run;
size_t scaled(size_t n) { return long_run() ? n * 50 : n; }

// The statement throws error(`want`).
#define ASSERT_THROW_CODE(stmt, want)                                   \
  do {                                                                  \
    try {                                                               \
      stmt;                                                             \
      FAIL() << #stmt " did not throw";                                 \
    } catch (const error& e) {                                          \
      ASSERT_EQ(e.code(), want) << e.what();                            \
    }                                                                   \
  } while (0)

struct param {
  std::string index;
  pm::mode mode;
  bool concurrent;
};

std::string param_name(const testing::TestParamInfo<param>& p) {
  std::string s = p.param.index + "_" + std::string(pm::to_string(p.param.mode));
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Every index in dram and persist mode; `persist_only` for the tests that
// reopen a pool file; `concurrent_only` for indexes that take threads;
// `limited_only` for indexes with a key limit.
std::vector<param> all_params(bool persist_only = false, bool concurrent_only = false, bool limited_only = false) {
  std::vector<param> v;
  for (auto& e : registered_indexes()) {
    if (e->name == "null") continue;  // stores nothing by design
    if (concurrent_only && !e->concurrent) continue;
    if (limited_only && !e->key_limit) continue;
    for (auto m : e->modes)
      if ((m == pm::mode::dram && !persist_only) || m == pm::mode::persist) v.push_back({e->name, m, e->concurrent});
  }
  return v;
}

class Conformance : public testing::TestWithParam<param> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/pmindex-conf-" + std::to_string(getpid()) + "-" + param_name({GetParam(), 0}) + ".pool";
    ::unlink(path_.c_str());
    seed_ = test::test_seed();
    // An index with a key limit (a fixed array) is made with its test
    // profile's params and given keys below the limit.
    auto e = find_index(GetParam().index);
    const auto tests = find_index_tests(e->name).tests;
    params_ = tests ? tests->params : "";
    limit_ = key_limit(*e, params_);
  }
  uint64_t below(uint64_t k) const { return limit_ ? k % limit_ : k; }
  void TearDown() override { ::unlink(path_.c_str()); }

  options opts(uint64_t size = 64 << 20) const {
    options o;
    o.index = GetParam().index;
    o.mode = GetParam().mode;
    o.pool_path = path_;
    o.pool_size = size;
    o.params = params_;
    o.quiet = true;
    return o;
  }

  // Full comparison: lookups of every oracle key, one scan over everything.
  void expect_same(index& idx, const std::map<uint64_t, uint64_t>& ref, const char* phase) {
    SCOPED_TRACE(std::string(phase) + " seed=" + std::to_string(seed_));
    ASSERT_NO_FATAL_FAILURE(test::expect_matches(idx, ref));
  }


  // Random operations on both; keys from a small dense space or sparse.
  void random_ops(index& idx, std::map<uint64_t, uint64_t>& ref, size_t ops, bool dense) {
    std::mt19937_64 rng(seed_);
    std::vector<uint64_t> pool_keys;
    for (size_t i = 0; i < ops / 4 + 16; ++i) pool_keys.push_back(below(dense ? i * 3 : rng()));
    record buf[64];
    for (size_t i = 0; i < ops; ++i) {
      uint64_t k = pool_keys[rng() % pool_keys.size()], v = rng();
      bool present = ref.count(k);
      switch (rng() % 8) {
        case 0: case 1: case 2:
          ASSERT_EQ(idx.insert(k, v), !present) << "insert " << k << " seed=" << seed_;
          if (!present) ref[k] = v;
          break;
        case 3:
          ASSERT_EQ(idx.update(k, v), present) << "update " << k << " seed=" << seed_;
          if (present) ref[k] = v;
          break;
        case 4: case 5:
          ASSERT_EQ(idx.remove(k), present) << "remove " << k << " seed=" << seed_;
          ref.erase(k);
          break;
        case 6: {
          auto got = idx.lookup(k);
          ASSERT_EQ(got.has_value(), present) << "lookup " << k << " seed=" << seed_;
          if (present) {
            ASSERT_EQ(*got, ref[k]);
          }
          break;
        }
        default: {
          size_t count = rng() % 64;
          if (!test::ordered(idx)) {  // a typed error, nothing changed
            ASSERT_THROW_CODE(idx.scan(k, count, buf), errc::unsupported);
            break;
          }
          size_t n = idx.scan(k, count, buf);
          auto it = ref.lower_bound(k);
          size_t expect = 0;
          for (auto j = it; j != ref.end() && expect < count; ++j) ++expect;
          ASSERT_EQ(n, expect) << "scan from " << k << " seed=" << seed_;
          for (size_t j = 0; j < n; ++j, ++it) {
            ASSERT_EQ(buf[j].key, it->first) << "scan from " << k << " seed=" << seed_;
            ASSERT_EQ(buf[j].value, it->second);
          }
        }
      }
    }
  }

  std::string path_;
  uint64_t seed_ = 0;
  std::string params_;  // test_profile::params
  uint64_t limit_ = 0;  // index_entry::key_limit (0: any key)
};
class PersistentConformance : public Conformance {};
class ConcurrentConformance : public Conformance {};
class LimitedConformance : public Conformance {};

TEST_P(Conformance, RandomOpsDenseKeys) {
  auto idx = open(opts());
  std::map<uint64_t, uint64_t> ref;
  random_ops(*idx, ref, scaled(20000), true);
  expect_same(*idx, ref, "after dense ops");
}

TEST_P(Conformance, RandomOpsSparseKeys) {
  auto idx = open(opts());
  std::map<uint64_t, uint64_t> ref;
  random_ops(*idx, ref, scaled(20000), false);
  expect_same(*idx, ref, "after sparse ops");
}

TEST_P(Conformance, EdgeKeysAndRanges) {
  auto idx = open(opts());
  std::map<uint64_t, uint64_t> ref;
  // With a key limit L, the top keys are L - 1, L - 2 and L / 2.
  const uint64_t top = limit_ ? limit_ - 1 : ~uint64_t{0};
  for (uint64_t k : {uint64_t{0}, uint64_t{1}, uint64_t{255}, uint64_t{256}, limit_ ? limit_ / 2 : uint64_t{1} << 63,
                     top, top - 1, below(0x0102030405060708)}) {
    ASSERT_TRUE(idx->insert(k, k ^ 7));
    ref[k] = k ^ 7;
  }
  expect_same(*idx, ref, "edge keys");
  record r[4];
  std::vector<record> out;
  if (!test::ordered(*idx)) {  // scan and range: one typed error
    ASSERT_THROW_CODE(idx->scan(top, 4, r), errc::unsupported);
    ASSERT_THROW_CODE(idx->range(0, top, out), errc::unsupported);
    for (auto& [k, v] : ref) ASSERT_TRUE(idx->remove(k));
    expect_same(*idx, {}, "all removed");
    return;
  }
  EXPECT_EQ(idx->scan(top, 4, r), 1u);
  EXPECT_EQ(idx->scan(5, 0, r), 0u);
  EXPECT_EQ(idx->range(2, 255, out), 1u);
  out.clear();
  EXPECT_EQ(idx->range(300, 200, out), 0u);
  out.clear();
  EXPECT_EQ(idx->range(0, ~uint64_t{0}, out), ref.size());
  for (auto& [k, v] : ref) ASSERT_TRUE(idx->remove(k));
  ref.clear();
  expect_same(*idx, ref, "all removed");
  EXPECT_EQ(idx->scan(0, 4, r), 0u);
}

// An index with a key limit: a key at or past it is error(key_too_long)
// for every point operation, and changes nothing; scans from it find none.
TEST_P(LimitedConformance, KeyPastTheLimitIsATypedError) {
  ASSERT_NE(limit_, 0u);
  auto idx = open(opts());
  std::map<uint64_t, uint64_t> ref{{limit_ - 1, 1}};
  ASSERT_TRUE(idx->insert(limit_ - 1, 1));
  for (uint64_t k : {limit_, limit_ + 1, ~uint64_t{0}}) {
    ASSERT_THROW_CODE(idx->insert(k, 2), errc::key_too_long);
    ASSERT_THROW_CODE(idx->update(k, 2), errc::key_too_long);
    ASSERT_THROW_CODE(idx->upsert(k, 2), errc::key_too_long);
    ASSERT_THROW_CODE(idx->remove(k), errc::key_too_long);
    ASSERT_THROW_CODE(idx->lookup(k), errc::key_too_long);
    ASSERT_THROW_CODE(idx->insert(std::string_view(key_bytes(k)), std::string_view(value_bytes(2))),
                      errc::key_too_long);
    record r[2];
    if (test::ordered(*idx)) {
      ASSERT_EQ(idx->scan(k, 2, r), 0u);
    }
  }
  expect_same(*idx, ref, "after keys past the limit");
  ASSERT_TRUE(idx->check().ok);
}

TEST_P(PersistentConformance, CleanReopen) {
  std::map<uint64_t, uint64_t> ref;
  {
    auto idx = open(opts());
    random_ops(*idx, ref, scaled(10000), false);
    idx->close();
  }
  auto o = opts();
  o.open = pm::open_mode::must_exist;
  auto idx = open(o);
  EXPECT_TRUE(idx->report().was_clean);
  expect_same(*idx, ref, "clean reopen");
  random_ops(*idx, ref, scaled(2000), false);
  expect_same(*idx, ref, "ops after clean reopen");
}

TEST_P(PersistentConformance, DirtyReopenRecoversAndLeaksNothing) {
  std::map<uint64_t, uint64_t> ref;
  uint64_t used_blocks = 0;
  {
    auto idx = open(opts());
    random_ops(*idx, ref, scaled(10000), true);
    // stats() first: it waits for background work (PACTree's SMO thread,
    // whose merges retire nodes and whose splits move spares between traced
    // and unlinked); then retired blocks go back to the allocator. Version
    // links (PermART) stand for null slots: recovery drops them; unlinked
    // blocks (PACTree's split spares) are reclaimed by tracing.
    const auto st = idx->stats();
    idx->pool().quiesce();
    used_blocks = idx->pool().usage().used_blocks;
    for (auto& [k, v] : st.extra)
      if (k == "version_links" || k == "unlinked_blocks") used_blocks -= static_cast<uint64_t>(v);
    idx->abandon();  // what a crash after the last operation leaves
  }
  auto o = opts();
  o.open = pm::open_mode::must_exist;
  auto idx = open(o);
  EXPECT_FALSE(idx->report().was_clean);
  // Every block in use before the crash is reachable (but dropped links):
  // no leak, none lost.
  EXPECT_EQ(idx->report().traced_blocks, used_blocks);
  expect_same(*idx, ref, "dirty reopen");
  random_ops(*idx, ref, scaled(4000), true);  // allocation after tracing is sound
  expect_same(*idx, ref, "ops after recovery");
}

// The allocator's DRAM is reported apart from the index's own: it is part
// of dram_bytes, it is what the pool reports, and what is left is the
// index's (an index that does not set it reports 0 and fails here).
TEST_P(PersistentConformance, AllocatorDramApartFromTheIndexs) {
  auto idx = open(opts());
  std::map<uint64_t, uint64_t> ref;
  random_ops(*idx, ref, scaled(2000), false);
  const auto st = idx->stats();
  EXPECT_GT(st.alloc_dram_bytes, 0u);
  EXPECT_LE(st.alloc_dram_bytes, idx->pool().usage().dram_bytes);  // a thread cache may come meanwhile
  EXPECT_GE(st.dram_bytes, st.alloc_dram_bytes);  // the pmemids structures hold no DRAM of their own
}

TEST_P(PersistentConformance, FullPoolFailsCleanly) {
  if (limit_) GTEST_SKIP() << "a fixed array: its memory is taken at creation, inserts never fill the pool";
  auto o = opts(2 << 20);
  std::map<uint64_t, uint64_t> ref;
  {
    auto idx = open(o);
    std::mt19937_64 rng(seed_);
    bool full = false;
    for (size_t i = 0; i < 10'000'000 && !full; ++i) {
      uint64_t k = rng();
      try {
        if (idx->insert(k, i)) ref[k] = i;
      } catch (const error& e) {
        ASSERT_EQ(e.code(), errc::pool_full) << e.what();
        full = true;
      }
    }
    ASSERT_TRUE(full) << "a 2 MiB pool never filled";
    expect_same(*idx, ref, "full pool");
    // Removing makes room again.
    auto victim = ref.begin()->first;
    ASSERT_TRUE(idx->remove(victim));
    ref.erase(victim);
    idx->close();
  }
  o.open = pm::open_mode::must_exist;
  auto idx = open(o);
  expect_same(*idx, ref, "full pool reopened");
}

TEST_P(ConcurrentConformance, ConcurrentDisjointWriters) {
  auto idx = open(opts());
  const size_t per = scaled(5000);
  std::vector<std::map<uint64_t, uint64_t>> refs(2);
  std::vector<std::thread> ts;
  std::atomic<bool> failed{false};
  for (int t = 0; t < 2; ++t)
    ts.emplace_back([&, t] {
      std::mt19937_64 rng(seed_ + t);
      auto& ref = refs[t];
      for (size_t i = 0; i < per * 2; ++i) {
        uint64_t k = (rng() % per) * 2 + t;  // even keys thread 0, odd thread 1
        bool present = ref.count(k);
        if (rng() % 3) {
          if (idx->insert(k, i) != !present) failed = true;
          if (!present) ref[k] = i;
        } else {
          if (idx->remove(k) != present) failed = true;
          ref.erase(k);
        }
        auto got = idx->lookup(k);
        if (got.has_value() != ref.count(k) || (got && *got != ref[k])) failed = true;
      }
    });
  for (auto& t : ts) t.join();
  ASSERT_FALSE(failed) << "seed=" << seed_;
  std::map<uint64_t, uint64_t> ref = refs[0];
  ref.insert(refs[1].begin(), refs[1].end());
  expect_same(*idx, ref, "after concurrent writers");
}

INSTANTIATE_TEST_SUITE_P(Indexes, Conformance, testing::ValuesIn(all_params()), param_name);
INSTANTIATE_TEST_SUITE_P(Indexes, PersistentConformance, testing::ValuesIn(all_params(true)), param_name);
INSTANTIATE_TEST_SUITE_P(Indexes, ConcurrentConformance, testing::ValuesIn(all_params(false, true)), param_name);
INSTANTIATE_TEST_SUITE_P(Indexes, LimitedConformance, testing::ValuesIn(all_params(false, false, true)), param_name);

}  // namespace
}  // namespace pmindex
