// PermART unit tests: a std::map oracle for every operation, node-kind
// transitions (leaf split, sparse -> indirect -> full, shrink of leaves),
// prefix splits, removes to empty, scans and ranges at boundaries, clean and
// dirty reopen (recovery) with check() after each phase, the snapshot
// checker (and its mutant), and the 2-log variant when registered.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "testing/snapshot_check.hpp"
#include "oracle.hpp"
#include "permart_params.hpp"
#include "substrate_util.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

using test::long_run;
using namespace test::permart;

class PermArt : public testing::TestWithParam<param> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/pmindex-permart-ut-" + std::to_string(getpid()) + "-" + pname({GetParam(), 0}) + ".pool";
    ::unlink(path_.c_str());
    seed_ = test::test_seed();
    rng_.seed(seed_);
  }
  void TearDown() override { ::unlink(path_.c_str()); }
  bool persistent() const { return GetParam().mode != pm::mode::dram; }

  std::unique_ptr<index> open_idx(std::string params = "") {
    options o;
    o.index = GetParam().index;
    o.mode = GetParam().mode;
    o.pool_path = path_;
    o.pool_size = 256 << 20;
    o.params = params;
    o.quiet = true;
    return open(o);
  }

  // Everything agrees: check(), every lookup, a full scan, a full range.
  void expect_same(index& idx, const char* phase) {
    SCOPED_TRACE(std::string(phase) + " seed=" + std::to_string(seed_));
    ASSERT_NO_FATAL_FAILURE(test::expect_matches(idx, ref_));
    std::vector<record> r;
    idx.range(0, UINT64_MAX, r);
    ASSERT_EQ(r.size(), ref_.size());
  }


  void do_ops(index& idx, size_t n, uint64_t (*gen)(std::mt19937_64&)) {
    for (size_t i = 0; i < n; ++i) {
      uint64_t k = gen(rng_), v = rng_();
      switch (rng_() % 8) {
        case 0:
        case 1:
        case 2: ASSERT_EQ(idx.insert(k, v), ref_.emplace(k, v).second) << k; break;
        case 3: {
          auto it = ref_.find(k);
          ASSERT_EQ(idx.update(k, v), it != ref_.end()) << k;
          if (it != ref_.end()) it->second = v;
          break;
        }
        case 4: {
          bool ins = !ref_.count(k);
          ASSERT_EQ(idx.upsert(k, v), ins) << k;
          ref_[k] = v;
          break;
        }
        case 5:
        case 6: ASSERT_EQ(idx.remove(k), ref_.erase(k) == 1) << k; break;
        default: {
          auto got = idx.lookup(k);
          auto it = ref_.find(k);
          ASSERT_EQ(got.has_value(), it != ref_.end()) << k;
          if (got) {
            ASSERT_EQ(*got, it->second);
          }
        }
      }
    }
  }

  void put(index& idx, uint64_t k, uint64_t v) {
    ASSERT_TRUE(idx.insert(k, v)) << k;
    ref_[k] = v;
  }
  void del(index& idx, uint64_t k) {
    ASSERT_TRUE(idx.remove(k)) << k;
    ref_.erase(k);
  }

  // Scans and ranges from the ends, from `tries` random keys and, unless
  // long scans (max_count > 64: slow under ASan), from a quarter of the keys.
  // Ranges are short but for the first 64 unbounded ones (each may cover
  // the whole map: thousands of them made the test quadratic).
  void check_scans(index& idx, size_t tries, size_t max_count = 64) {
    size_t unbounded = 0;
    std::vector<uint64_t> probes = {0, 1, UINT64_MAX, UINT64_MAX - 1};
    for (auto& [k, v] : ref_)
      if (max_count <= 64 && rng_() % 4 == 0) probes.push_back(k), probes.push_back(k + 1), probes.push_back(k - 1);
    for (size_t t = 0; t < tries; ++t) probes.push_back(rng_());
    std::vector<record> buf(max_count);
    for (uint64_t from : probes) {
      size_t cnt = rng_() % max_count;
      size_t n = idx.scan(from, cnt, buf.data());
      auto it = ref_.lower_bound(from);
      for (size_t i = 0; i < n; ++i, ++it) {
        ASSERT_NE(it, ref_.end()) << "scan from " << from << " seed " << seed_;
        ASSERT_EQ(buf[i].key, it->first) << "scan from " << from << " seed " << seed_;
        ASSERT_EQ(buf[i].value, it->second);
      }
      ASSERT_TRUE(n == cnt || it == ref_.end()) << "scan from " << from << " short, seed " << seed_;
      const bool wide = unbounded < 64 && rng_() % 3 == 0;
      unbounded += wide;
      uint64_t hi = from + (wide ? rng_() : rng_() % 100000);
      if (hi < from) hi = UINT64_MAX;
      std::vector<record> r;
      idx.range(from, hi, r);
      auto a = ref_.lower_bound(from);
      size_t i = 0;
      for (; a != ref_.end() && a->first <= hi; ++a, ++i) {
        ASSERT_LT(i, r.size()) << "range " << from << ".." << hi << " seed " << seed_;
        ASSERT_EQ(r[i].key, a->first);
      }
      ASSERT_EQ(i, r.size()) << "range " << from << ".." << hi << " seed " << seed_;
    }
    std::vector<record> r;
    ASSERT_EQ(idx.range(5, 4, r), 0u);
  }

  std::string path_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::map<uint64_t, uint64_t> ref_;
};
// Suites for the tests that apply to some parameters only.
class PermArtReopen : public PermArt {  // pools that reopen (not dram)
 protected:
  // A fresh pool (`keys`: its params) holding keys 1..99, damaged by
  // damage(pool) and closed cleanly.
  template <class Damage>
  void make_damaged(const char* keys, Damage&& damage) {
    ::unlink(path_.c_str());
    auto idx = open_idx(keys);
    for (uint64_t k = 1; k < 100; ++k) {
      if (*keys) ASSERT_TRUE(idx->insert(std::to_string(k), "v"));
      else ASSERT_TRUE(idx->insert(k, k));
    }
    damage(idx->pool());
    idx->close();
  }
};
class PermArtDram : public PermArt {};    // one mode is enough
class PermArtTwoLog : public PermArt {};  // 2-Log only

uint64_t dense_key(std::mt19937_64& r) { return r() % 5000; }
uint64_t sparse_key(std::mt19937_64& r) { return r(); }
uint64_t clustered_key(std::mt19937_64& r) {  // shared prefixes at varied depths
  uint64_t hi = (r() % 3) << 56 | (r() % 4) << 40;
  return hi | (r() % 2 ? r() % 300 : (r() % 50) << 20);
}

TEST_P(PermArt, RandomOpsAgainstMap) {
  auto idx = open_idx();
  for (auto gen : {dense_key, sparse_key, clustered_key}) {
    do_ops(*idx, scaled(20000), gen);
    expect_same(*idx, "random ops");
    check_scans(*idx, 200);
  }
}

TEST_P(PermArt, NodeKindTransitions) {
  auto idx = open_idx();
  // Keys that differ in byte 0 only: the top node grows sparse -> indirect -> full.
  auto k = [](unsigned b) { return uint64_t{b} << 56 | 7; };
  for (unsigned b = 0; b < 14; ++b) ASSERT_NO_FATAL_FAILURE(put(*idx, k(b), b));
  EXPECT_EQ(stat(*idx, "leaves"), 1);  // 14 pairs fit one big leaf; the 15th splits it
  EXPECT_EQ(stat(*idx, "sparse_nodes"), 0);
  ASSERT_NO_FATAL_FAILURE(put(*idx, k(14), 14));
  expect_same(*idx, "first split");
  EXPECT_EQ(stat(*idx, "sparse_nodes"), 1);
  for (unsigned b = 15; b < 17; ++b) ASSERT_NO_FATAL_FAILURE(put(*idx, k(b), b));
  EXPECT_EQ(stat(*idx, "sparse_nodes"), 1);
  ASSERT_NO_FATAL_FAILURE(put(*idx, k(17), 17));
  EXPECT_EQ(stat(*idx, "indirect_nodes"), 1);
  expect_same(*idx, "indirect");
  for (unsigned b = 18; b < 65; ++b) ASSERT_NO_FATAL_FAILURE(put(*idx, k(b), b));
  EXPECT_EQ(stat(*idx, "full_nodes"), 1);
  expect_same(*idx, "full");
  for (unsigned b = 65; b < 256; ++b) ASSERT_NO_FATAL_FAILURE(put(*idx, k(b), b));
  expect_same(*idx, "full 256");
  // Remove every second child, then reinsert into the empty slots.
  for (unsigned b = 0; b < 256; b += 2) ASSERT_NO_FATAL_FAILURE(del(*idx, k(b)));
  expect_same(*idx, "holes");
  for (unsigned b = 0; b < 256; b += 4) ASSERT_NO_FATAL_FAILURE(put(*idx, k(b), b + 1));
  expect_same(*idx, "refill");
  check_scans(*idx, 100);
  // Leaves: small (<= 2 pairs) <-> big, under one byte-0 child.
  for (uint64_t i = 1; i < 40; ++i) ASSERT_NO_FATAL_FAILURE(put(*idx, k(1) + (i << 8), i));
  expect_same(*idx, "leaf splits below a full node");
  for (uint64_t i = 1; i < 40; ++i) ASSERT_NO_FATAL_FAILURE(del(*idx, k(1) + (i << 8)));
  expect_same(*idx, "leaves shrink");
}

// A new key byte goes into a listed node in place while it has room: one
// block (the new leaf), no copy of the node; the node's bytes are then out
// of order, and scans, ranges from any byte, check() and recovery still see
// its children in key order. The 18th and 65th bytes copy the node into the
// next kind (sorted again), as before. (Before in-place growth every new
// byte copied the node: two blocks.)
TEST_P(PermArt, ChildrenAddedInPlaceStayInKeyOrder) {
  auto idx = open_idx();
  auto k = [](unsigned b) { return 0x1122334455660000ull | uint64_t{b} << 8 | 7; };
  for (unsigned b = 100; b < 115; ++b) ASSERT_NO_FATAL_FAILURE(put(*idx, k(b), b));  // the 15th splits the leaf
  ASSERT_EQ(stat(*idx, "sparse_nodes"), 1);
  // One block (the new leaf) per byte added in place.
  auto put_in_place = [&](unsigned b) {
    auto before = idx->pool().usage().used_blocks;
    ASSERT_NO_FATAL_FAILURE(put(*idx, k(b), b));
    if (persistent()) {
      EXPECT_EQ(idx->pool().usage().used_blocks, before + 1) << "byte " << b << ": the node was copied";
    }
  };
  // Bytes below the node's first: each appended out of order.
  for (unsigned b : {99u, 50u}) ASSERT_NO_FATAL_FAILURE(put_in_place(b));
  EXPECT_EQ(stat(*idx, "sparse_nodes"), 1);
  expect_same(*idx, "sparse, appended");
  check_scans(*idx, 20);
  ASSERT_NO_FATAL_FAILURE(put(*idx, k(200), 200));  // the 18th: copied into an indirect node
  EXPECT_EQ(stat(*idx, "sparse_nodes"), 0);
  EXPECT_EQ(stat(*idx, "indirect_nodes"), 1);
  for (unsigned b = 49; b > 3; --b) ASSERT_NO_FATAL_FAILURE(put_in_place(b));  // 46 more: 64 children, full
  EXPECT_EQ(stat(*idx, "indirect_nodes"), 1);
  expect_same(*idx, "indirect, appended");
  check_scans(*idx, 20);
  for (unsigned b = 3; b < 250; b += 7) {  // scans starting at every few bytes of the node
    std::vector<record> buf(8);
    size_t n = idx->scan(k(b) - 1, 8, buf.data());
    auto it = ref_.lower_bound(k(b) - 1);
    for (size_t i = 0; i < n; ++i, ++it) ASSERT_EQ(buf[i].key, it->first) << "scan from byte " << b;
  }
  if (persistent()) {
    idx->abandon();
    idx = open_idx();
    expect_same(*idx, "recovered");
  }
  ASSERT_NO_FATAL_FAILURE(put(*idx, k(2), 2));  // the 65th: a full node
  EXPECT_EQ(stat(*idx, "full_nodes"), 1);
  expect_same(*idx, "full");
}

TEST_P(PermArt, PrefixSplits) {
  auto idx = open_idx();
  // Long common prefix, then divergence at every depth from 7 down to 0.
  uint64_t base = 0x1122334455667700ull;
  for (unsigned i = 0; i < 20; ++i) ASSERT_NO_FATAL_FAILURE(put(*idx, base + i, i));
  expect_same(*idx, "deep node");
  for (int d = 6; d >= 0; --d) {
    uint64_t key = base ^ (uint64_t{0x80} << (56 - 8 * d));
    for (unsigned i = 0; i < 16; ++i) ASSERT_NO_FATAL_FAILURE(put(*idx, key + i, d));
    expect_same(*idx, "prefix split");
  }
  check_scans(*idx, 100);
  // Extremes.
  for (uint64_t key : {uint64_t{0}, UINT64_MAX, uint64_t{1} << 63, (uint64_t{1} << 63) - 1})
    ASSERT_NO_FATAL_FAILURE(put(*idx, key, 5));
  expect_same(*idx, "extremes");
  check_scans(*idx, 10);
}

// Scans list the slots below a node by a guess of what a sibling holds
// (half a listed sibling's children); here most subtrees were emptied but
// for one record (nodes keep their size: removed children leave null
// versions behind), so walks stop short of their count and walk again
// from the first key they left out, at the same stamp. Scans and ranges
// are longer than one walk (4096 records).
TEST_P(PermArt, ScansThatWalkAgain) {
  auto idx = open_idx();
  // Random keys (full nodes of full nodes at the top), and 24 keys under
  // each of 256 two-byte prefixes 0x5A.. (full nodes of listed nodes).
  std::vector<uint64_t> keys;
  for (size_t i = 0; i < 30000; ++i) keys.push_back(rng_() & ~(uint64_t{0xff} << 56)), keys.push_back(rng_());
  for (uint64_t a = 0; a < 256; ++a)
    for (int i = 0; i < 24; ++i) keys.push_back(uint64_t{0x5A} << 56 | a << 48 | (rng_() >> 16));
  for (auto k : keys)
    if (ref_.emplace(k, k ^ 7).second) {
      ASSERT_TRUE(idx->insert(k, k ^ 7));
    }
  uint64_t last_group = ~uint64_t{0};
  for (auto it = ref_.begin(); it != ref_.end();) {  // all but a group's first, in 3 of 4 groups
    const uint64_t k = it->first, group = k >> 56 == 0x5A ? k >> 48 : k >> 52;
    if (group == last_group && group % 4 != 0) {
      ASSERT_TRUE(idx->remove(it->first));
      it = ref_.erase(it);
    } else {
      last_group = group;
      ++it;
    }
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "thinned"));
  check_scans(*idx, 300, 10000);
}

TEST_P(PermArt, RemovesToEmpty) {
  auto idx = open_idx();
  for (int round = 0; round < 3; ++round) {
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < scaled(3000); ++i) keys.push_back(round == 1 ? i : rng_());
    for (auto k : keys)
      if (ref_.emplace(k, k).second) {
        ASSERT_TRUE(idx->insert(k, k));
      }
    expect_same(*idx, "filled");
    std::shuffle(keys.begin(), keys.end(), rng_);
    for (auto k : keys) ASSERT_EQ(idx->remove(k), ref_.erase(k) == 1);
    expect_same(*idx, "empty");
    record r;
    ASSERT_EQ(idx->scan(0, 1, &r), 0u);
    ASSERT_FALSE(idx->remove(keys[0]));
    ASSERT_FALSE(idx->update(keys[0], 1));
  }
}

TEST_P(PermArtReopen, ReopenCleanAndDirty) {
  {
    auto idx = open_idx();
    do_ops(*idx, scaled(20000), sparse_key);
    expect_same(*idx, "before close");
  }
  {
    auto idx = open_idx();
    EXPECT_TRUE(idx->report().was_clean);
    expect_same(*idx, "clean reopen");
    do_ops(*idx, scaled(20000), clustered_key);
    expect_same(*idx, "after clean reopen");
    idx->abandon();
  }
  {
    auto idx = open_idx();
    EXPECT_FALSE(idx->report().was_clean);
    expect_same(*idx, "dirty reopen");
    do_ops(*idx, scaled(5000), dense_key);
    expect_same(*idx, "after recovery");
    // Remove to empty leaves links behind; a crash right after must drop them.
    for (auto it = ref_.begin(); it != ref_.end();) {
      ASSERT_TRUE(idx->remove(it->first));
      it = ref_.erase(it);
      if (ref_.size() < 100) break;
    }
    idx->abandon();
  }
  {
    auto idx = open_idx();
    expect_same(*idx, "second recovery");
    // Recovery must have left nothing unreachable: tracing covers the heap.
    auto used = idx->pool().usage().used_bytes;
    idx->abandon();
    auto again = open_idx();
    EXPECT_EQ(again->pool().usage().used_bytes, used);
    expect_same(*again, "third recovery");
  }
}

// A clean pool whose damage left a slot tagged UNPERSISTED (a dirty open
// untags every slot, a clean one trusts them): readers waited for a writer
// that did not exist, forever (a lookup hung). Now errc::corrupt. In a
// child with a deadline, so that a hang fails the test instead of hanging it.
TEST_P(PermArtReopen, DamagedTagIsCorruptNotAHang) {
  for (const char* keys : {"", "keys=bytes"}) {
    SCOPED_TRACE(keys);
    ASSERT_NO_FATAL_FAILURE(make_damaged(keys, [](pm::pool& p) {
      *(p.ptr<uint64_t>(p.root()) + 6) |= 1;  // root: header, magic, run, then the slot (node.hpp)
    }));
    auto idx = open_idx(keys);
    auto corrupt = [](auto&& op) { test::exit_0_if_corrupt(op); };
    std::string v;
    record out[4];
    if (*keys) {
      EXPECT_EXIT(corrupt([&] { idx->lookup("5", &v); }), testing::ExitedWithCode(0), "") << "lookup";
    } else {
      EXPECT_EXIT(corrupt([&] { idx->lookup(5); }), testing::ExitedWithCode(0), "") << "lookup";
      EXPECT_EXIT(corrupt([&] { idx->scan(0, 4, out); }), testing::ExitedWithCode(0), "") << "scan";
    }
    EXPECT_FALSE(idx->check().ok);
  }
}

// The same for a node's version lock: a dirty open clears every lock, a
// clean one trusts them, so a damaged clean pool with a lock bit set made
// the first writer to reach that node spin forever, and one with the
// obsolete bit set made it restart forever (an obsolete node is always
// unlinked before it is marked). Both are now errc::corrupt.
TEST_P(PermArtReopen, DamagedLockIsCorruptNotAHang) {
  for (const char* keys : {"", "keys=bytes"})
    for (uint32_t bit : {1u, 2u}) {  // sync::version_lock: locked, obsolete
      SCOPED_TRACE(std::string(keys) + (bit == 1 ? " locked" : " obsolete"));
      ASSERT_NO_FATAL_FAILURE(make_damaged(keys, [&](pm::pool& p) {
        // The root's slot (node.hpp) names the top node, an inner node:
        // its header's lock word at byte 24, its kind (leaf = 2) at 28.
        char* top = p.ptr<char>(*(p.ptr<uint64_t>(p.root()) + 6));
        ASSERT_NE(top[28], 2);
        *reinterpret_cast<uint32_t*>(top + 24) |= bit;
      }));
      auto idx = open_idx(keys);
      auto corrupt = [](auto&& op) { test::exit_0_if_corrupt(op); };
      // A key the top node has no child for: its writer locks the top node.
      if (*keys)
        EXPECT_EXIT(corrupt([&] { idx->insert(std::string_view("a"), std::string_view("v")); }),
                    testing::ExitedWithCode(0), "");
      else
        EXPECT_EXIT(corrupt([&] { idx->insert(100, 100); }), testing::ExitedWithCode(0), "");
      // Two writers waiting on the one word: each waited inside its own
      // writer section, so each saw the other inside, forever.
      EXPECT_EXIT(corrupt([&] {
                    test::each_thread_corrupt(2, [&](unsigned i) {
                      if (*keys)
                        idx->insert(std::string(1, char('a' + i)), std::string_view("v"));
                      else
                        idx->insert(100 + i, 100);
                    });
                  }),
                  testing::ExitedWithCode(0), "")
          << "two writers";
      if (*keys) {
        std::string v;
        EXPECT_TRUE(idx->lookup("5", &v)) << "readers never take a lock";
      } else {
        EXPECT_EQ(idx->lookup(5), std::optional<uint64_t>(5)) << "readers never take a lock";
      }
      EXPECT_FALSE(idx->check().ok);
    }
}

// A pool of the layout before in-place growth (sorted sparse nodes, bitmap
// indirect nodes; its root's magic) gets errc::bad_version (exit code 5)
// and a line that says to recreate it, not "corrupt" or a wrong answer.
TEST_P(PermArtReopen, OldLayoutRefusedWithClearError) {
  for (const char* keys : {"", "keys=bytes"}) {
    SCOPED_TRACE(keys);
    ::unlink(path_.c_str());
    auto idx = open_idx(keys);
    if (*keys)
      ASSERT_TRUE(idx->insert(std::string_view("k"), std::string_view("v")));
    else
      ASSERT_TRUE(idx->insert(1, 1));
    auto& p = idx->pool();
    auto* magic = p.ptr<uint64_t>(p.root()) + 4;  // root: a 32-byte header, then the magic
    ASSERT_EQ(*magic, *keys ? 0x3354524d52455042ull : 0x335452414d524550ull);  // "BPERMRT3" / "PERMART3"
    *magic = *keys ? 0x4254524d52455042ull : 0x5452414d5245502dull;         // "BPERMRTB" / "-PERMART"
    p.persist(magic, 8);
    idx->close();
    idx.reset();
    try {
      idx = open_idx(keys);
      ADD_FAILURE() << "the pool reopened";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::bad_version);
      EXPECT_NE(std::string(e.what()).find("recreate"), std::string::npos) << e.what();
    }
  }
}

TEST_P(PermArt, ConcurrentWritersAndReaders) {
  auto idx = open_idx();
  const unsigned nthreads = 4;
  const uint64_t per = scaled(4000);
  std::vector<std::thread> ts;
  std::atomic<bool> fail{false};
  for (unsigned t = 0; t < nthreads; ++t)
    ts.emplace_back([&, t] {
      std::mt19937_64 r(seed_ + t);
      for (uint64_t i = 0; i < per; ++i) {
        uint64_t k = (r() & ~uint64_t{3}) | t;  // disjoint keys per thread
        if (!idx->insert(k, k)) continue;
        if (i % 3 == 0 && !idx->update(k, k + 1)) fail = true;
        if (i % 5 == 0 && !idx->remove(k)) fail = true;
        std::vector<record> out;
        if (i % 64 == 0) idx->range(k, k + (uint64_t{1} << 56), out);
      }
    });
  for (auto& t : ts) t.join();
  ASSERT_FALSE(fail.load());
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
}

TEST_P(PermArt, SnapshotRangesAreAtomic) {
  auto idx = open_idx();
  checks::snapshot_check_options o;
  o.seconds = long_run() ? 10 : 1;
  o.universe = 2048;
  o.writers = 2;
  o.readers = 2;
  o.seed = seed_;
  auto r = checks::run_snapshot_check(*idx, o);
  EXPECT_TRUE(r.ok()) << r.first << " seed " << seed_;
  EXPECT_GT(r.queries, 0u);
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
}

#ifdef PMINDEX_MUTANTS
// The checker must notice a scan that reads current versions, not its
// snapshot's.
TEST_P(PermArtDram, SnapshotCheckerCatchesNonAtomicScan) {
  auto idx = open_idx("mutant=scan_not_atomic");
  uint64_t violations = 0;
  for (int attempt = 0; attempt < 10 && !violations; ++attempt) {
    checks::snapshot_check_options o;
    o.seconds = 1;
    o.universe = 2048;
    o.seed = seed_ + attempt;
    violations += checks::run_snapshot_check(*idx, o).violations;
    // Start each attempt from an empty index (the checker requires it).
    std::vector<record> all;
    idx->range(0, UINT64_MAX, all);
    for (auto& x : all) idx->remove(x.key);
  }
  EXPECT_GT(violations, 0u);
}
#endif

// 2-Log: updates go to the two in-node log entries; the third reconciles.
// Every reconciliation case: insert/insert, delete/delete, mixed, the same
// key inserted then deleted (cancelled) or updated twice (replaced), and a
// reconciliation whose result no longer fits a leaf (split).
TEST_P(PermArtTwoLog, TwoLogFillAndReconcile) {
  auto idx = open_idx();
  auto logs = [&] { return stat(*idx, "log_entries"); };
  auto k = [](uint64_t i) { return 0x4242000000000000ull + i * 3; };  // one leaf
  // 3 pairs make a (logged) big leaf; pairs 4 and 5 are log entries, the
  // 6th reconciles: an empty log.
  for (uint64_t i = 0; i < 6; ++i) ASSERT_NO_FATAL_FAILURE(put(*idx, k(i), i));
  expect_same(*idx, "6 keys");
  ASSERT_EQ(logs(), 0);
  double base = 0;
  struct step {
    const char* what;
    std::vector<std::pair<char, uint64_t>> ops;  // i: insert, d: delete, u: update
  } steps[] = {
      {"insert/insert", {{'i', 20}, {'i', 21}, {'i', 22}}},
      {"delete/delete", {{'d', 20}, {'d', 21}, {'d', 22}}},
      {"mixed", {{'i', 30}, {'d', 0}, {'u', 1}}},
      {"cancelled", {{'i', 31}, {'d', 31}, {'u', 2}}},
      {"replaced", {{'u', 3}, {'u', 3}, {'u', 3}}},
      {"delete then reinsert", {{'d', 4}, {'i', 4}, {'i', 40}}},
      {"update then delete", {{'u', 5}, {'d', 5}, {'d', 40}}},
  };
  for (auto& st : steps) {
    for (size_t j = 0; j < st.ops.size(); ++j) {
      auto [c, i] = st.ops[j];
      uint64_t v = 1000 + j;
      if (c == 'i') {
        ASSERT_NO_FATAL_FAILURE(put(*idx, k(i), v));
      }
      if (c == 'd') {
        ASSERT_NO_FATAL_FAILURE(del(*idx, k(i)));
      }
      if (c == 'u') {
        ASSERT_TRUE(idx->update(k(i), v));
        ref_[k(i)] = v;
      }
      expect_same(*idx, st.what);
      // Two updates fill the log; the third copies the leaf and empties it.
      EXPECT_EQ(logs(), base + (j == 2 ? 0 : j + 1)) << st.what << " op " << j;
    }
  }
  // Fill to 14 (one logged insert on top of 13 base pairs), then a second
  // insert: the reconciled result of 15 pairs splits the leaf.
  for (uint64_t i = 50; ref_.size() < 13; ++i) ASSERT_NO_FATAL_FAILURE(put(*idx, k(i), i));
  while (logs() != base) ASSERT_NO_FATAL_FAILURE(put(*idx, k(60 + ref_.size()), 1));  // reach an empty log
  expect_same(*idx, "before split");
  double sparse_before = stat(*idx, "sparse_nodes");
  for (uint64_t i = 100; ref_.size() <= 14; ++i) ASSERT_NO_FATAL_FAILURE(put(*idx, k(i), i));
  expect_same(*idx, "reconcile + split");
  EXPECT_GT(stat(*idx, "sparse_nodes"), sparse_before);
  check_scans(*idx, 50);
  if (persistent()) {
    ASSERT_NO_FATAL_FAILURE(put(*idx, k(200), 200));  // leave a log entry behind
    idx->abandon();
    idx = open_idx();
    expect_same(*idx, "2-log recovery");
  }
}

TEST(PermArtErrors, UnknownMutantIsAUsageError) {
  options o;
  o.index = "permart";
  o.mode = pm::mode::dram;
  o.pool_size = 16 << 20;
  o.params = "mutant=nope";
  o.quiet = true;
  try {
    open(o);
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::usage);
  }
}

TEST(PermArtErrors, FullPoolFailsInsertAndKeepsData) {
  options o;
  o.index = "permart";
  o.mode = pm::mode::dram;
  o.pool_size = 8 << 20;
  o.quiet = true;
  auto idx = open(o);
  std::map<uint64_t, uint64_t> ref;
  std::mt19937_64 r(1);
  try {
    for (;;) {
      uint64_t k = r();
      ASSERT_TRUE(idx->insert(k, k));
      ref[k] = k;
    }
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::pool_full);
  }
  ASSERT_TRUE(idx->check().ok);
  for (auto& [k, v] : ref) ASSERT_EQ(idx->lookup(k), v);
}

INSTANTIATE_TEST_SUITE_P(All, PermArt, testing::ValuesIn(params()), pname);
INSTANTIATE_TEST_SUITE_P(All, PermArtReopen,
                         testing::ValuesIn(params([](const param& p) { return p.mode != pm::mode::dram; })),
                         pname);
#ifdef PMINDEX_MUTANTS
INSTANTIATE_TEST_SUITE_P(All, PermArtDram,
                         testing::ValuesIn(params([](const param& p) { return p.mode == pm::mode::dram; })),
                         pname);
#endif
INSTANTIATE_TEST_SUITE_P(All, PermArtTwoLog,
                         testing::ValuesIn(params([](const param& p) { return p.index == "permart-2log"; })),
                         pname);


}  // namespace
}  // namespace pmindex
