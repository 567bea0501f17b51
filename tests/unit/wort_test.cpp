// WORT, WOART, ART+CoW: one suite over the three (and dram/persist modes).
// A std::map oracle over dense, sparse and clustered keys; node growth
// 4 -> 16 -> 48 -> 256; prefix splits at every digit; removes to empty;
// scans at boundaries; clean and dirty reopen with check() after each
// phase; and the half-done WORT/WOART split (header rewritten, grandparent
// not yet swung) injected through a test hook and repaired by recovery.
// Sizes grow with PMINDEX_LONG=1; the seed is printed on failure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "art/detail/tree.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "oracle.hpp"
#include "substrate_util.hpp"
#include "test_seed.hpp"
#include "wort_test_params.hpp"

namespace pmindex {
namespace {

using test::long_run;
size_t scaled(size_t n) { return long_run() ? n * 20 : n; }

class Wort : public test::wort_fixture {
 protected:
  Wort() : wort_fixture("wort-ut") {}

  std::unique_ptr<index> open_idx(pm::open_mode om = pm::open_mode::create_if_missing) {
    options o;
    o.index = GetParam().index;
    o.mode = GetParam().mode;
    o.pool_path = path_;
    o.pool_size = 128 << 20;
    o.open = om;
    o.quiet = true;
    return open(o);
  }

  // Lookups of every oracle key, absent neighbours, a full scan, check().
  void expect_same(index& idx, const char* phase) {
    SCOPED_TRACE(std::string(phase) + " seed=" + std::to_string(seed_));
    ASSERT_NO_FATAL_FAILURE(test::expect_matches(idx, ref_));
    for (auto& [k, v] : ref_)  // absent neighbours stay absent
      if (!ref_.count(k + 1)) {
        ASSERT_FALSE(idx.lookup(k + 1).has_value()) << k + 1;
      }
  }


  // Random scans compared with the oracle.
  void check_scans(index& idx, int n, size_t max_count) {
    SCOPED_TRACE("scans seed=" + std::to_string(seed_));
    std::vector<record> got(max_count);
    for (int i = 0; i < n; ++i) {
      uint64_t from;
      if (!ref_.empty() && rng_() % 2) {
        auto it = ref_.begin();
        std::advance(it, rng_() % ref_.size());
        from = it->first + (rng_() % 3) - 1;  // at, just below, just above a key
      } else {
        from = rng_();
      }
      size_t cnt = 1 + rng_() % max_count;
      size_t m = idx.scan(from, cnt, got.data());
      auto it = ref_.lower_bound(from);
      size_t j = 0;
      for (; j < cnt && it != ref_.end(); ++j, ++it) {
        ASSERT_LT(j, m) << "scan from " << from << " ended early";
        ASSERT_EQ(got[j].key, it->first) << "scan from " << from << " record " << j;
        ASSERT_EQ(got[j].value, it->second);
      }
      ASSERT_EQ(m, j) << "scan from " << from;
    }
  }

  // Random ranges compared with the oracle, each after a record already in
  // `out` (range appends).
  void check_ranges(index& idx, int n, uint64_t max_span) {
    SCOPED_TRACE("ranges seed=" + std::to_string(seed_));
    for (int i = 0; i < n; ++i) {
      auto it = ref_.begin();
      std::advance(it, rng_() % ref_.size());
      uint64_t lo = it->first - rng_() % 2;
      auto end = it;
      for (uint64_t s = rng_() % max_span; s && std::next(end) != ref_.end(); --s) ++end;
      uint64_t hi = end->first + (rng_() % 3) - 1;
      std::vector<record> got{{7, 7}};
      idx.range(lo, hi, got);
      auto want = ref_.lower_bound(lo);
      size_t j = 1;
      for (; want != ref_.end() && want->first <= hi; ++j, ++want) {
        ASSERT_LT(j, got.size()) << "range " << lo << ".." << hi << " ended early";
        ASSERT_EQ(got[j].key, want->first) << "range " << lo << ".." << hi << " record " << j;
        ASSERT_EQ(got[j].value, want->second);
      }
      ASSERT_EQ(got.size(), j) << "range " << lo << ".." << hi;
      ASSERT_EQ(got[0].key, 7u);
    }
  }

  void random_ops(index& idx, const std::vector<uint64_t>& keys, size_t n) {
    SCOPED_TRACE("seed=" + std::to_string(seed_));
    for (size_t i = 0; i < n; ++i) {
      uint64_t k = keys[rng_() % keys.size()], v = rng_();
      switch (rng_() % 6) {
        case 0:
        case 1:
        case 2: ASSERT_EQ(idx.insert(k, v), ref_.emplace(k, v).second) << "insert " << k; break;
        case 3: {
          bool present = ref_.count(k);
          ASSERT_EQ(idx.update(k, v), present) << "update " << k;
          if (present) ref_[k] = v;
          break;
        }
        case 4: ASSERT_EQ(idx.remove(k), ref_.erase(k) == 1) << "remove " << k; break;
        default: {
          auto got = idx.lookup(k);
          auto it = ref_.find(k);
          ASSERT_EQ(got.has_value(), it != ref_.end()) << "lookup " << k;
          if (got) {
            ASSERT_EQ(*got, it->second);
          }
        }
      }
    }
  }

  // Clean reopen, then (persistent modes) a dirty one: abandon = crash.
  void reopen(std::unique_ptr<index>& idx) {
    if (!persistent()) return;
    idx.reset();
    idx = open_idx(pm::open_mode::must_exist);
    ASSERT_TRUE(idx->report().was_clean);
    expect_same(*idx, "clean reopen");
    idx->abandon();
    idx.reset();
    idx = open_idx(pm::open_mode::must_exist);
    ASSERT_FALSE(idx->report().was_clean);
    expect_same(*idx, "dirty reopen");
  }

  std::map<uint64_t, uint64_t> ref_;
};

std::vector<uint64_t> dense_keys(size_t n) {
  std::vector<uint64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i + 1;
  return v;
}
std::vector<uint64_t> sparse_keys(size_t n, std::mt19937_64& rng) {
  std::vector<uint64_t> v(n);
  for (auto& k : v) k = rng();
  v.push_back(0);
  v.push_back(UINT64_MAX);
  return v;
}
std::vector<uint64_t> clustered_keys(size_t n, std::mt19937_64& rng) {
  std::vector<uint64_t> v;
  while (v.size() < n) {
    uint64_t base = rng() & ~uint64_t{63};
    for (uint64_t i = 0; i < 64; ++i) v.push_back(base + i);
  }
  return v;
}

TEST_P(Wort, OracleDenseSparseClustered) {
  auto idx = open_idx();
  size_t n = scaled(3000);
  random_ops(*idx, dense_keys(n / 2), n * 2);
  expect_same(*idx, "dense");
  random_ops(*idx, sparse_keys(n, rng_), n * 2);
  expect_same(*idx, "sparse");
  random_ops(*idx, clustered_keys(n, rng_), n * 2);
  expect_same(*idx, "clustered");
  check_scans(*idx, 300, 100);
  reopen(idx);
  random_ops(*idx, clustered_keys(n / 4, rng_), n);
  expect_same(*idx, "after reopen");
  check_scans(*idx, 100, 40);
}

// Scans and ranges of up to several hundred records: a scan lists the words
// of one level after another (tree.hpp, seed and expand), so these end,
// or pass `hi`, in the middle of nodes at every level.
TEST_P(Wort, LongScansAndRanges) {
  auto idx = open_idx();
  size_t n = scaled(4000);
  random_ops(*idx, sparse_keys(n, rng_), n);
  random_ops(*idx, clustered_keys(n / 2, rng_), n / 2);
  ASSERT_GT(ref_.size(), 500u);
  check_scans(*idx, 200, 500);
  check_ranges(*idx, 200, 500);
}

// Walks that find fewer records than they guessed (tree.hpp, guess: a
// Node16 counts as 5 records; these hold 2 after removes, as nodes never
// shrink, so a walk's list stops short and the scan walks again from its
// last key) and scans and ranges longer than one walk (k_batch, 4096).
TEST_P(Wort, ScansThatWalkAgain) {
  auto idx = open_idx();
  for (uint64_t g = 0; g < 4000; ++g)
    for (uint64_t d = 0; d < 6; ++d) {
      const uint64_t k = (g * 0x10001ull) << 8 | d * 3;
      ASSERT_TRUE(idx->insert(k, ~k));
      ref_[k] = ~k;
    }
  for (uint64_t g = 0; g < 4000; ++g)
    for (uint64_t d = 1; d < 5; ++d) {
      const uint64_t k = (g * 0x10001ull) << 8 | d * 3;
      ASSERT_TRUE(idx->remove(k));
      ref_.erase(k);
    }
  check_scans(*idx, 60, 10000);
  check_ranges(*idx, 60, 10000);
}

// Fill one node digit by digit so it passes through every kind, then empty it.
TEST_P(Wort, NodeGrowthAndShrinkToEmpty) {
  auto idx = open_idx();
  const uint64_t base = 0xABCD000000000000ull;
  std::vector<uint64_t> digits(256);
  for (unsigned i = 0; i < 256; ++i) digits[i] = i;
  std::shuffle(digits.begin(), digits.end(), rng_);
  for (unsigned i = 0; i < 256; ++i) {
    uint64_t k = base | digits[i];
    ASSERT_TRUE(idx->insert(k, i));
    ref_[k] = i;
    if (i == 1 || i == 4 || i == 5 || i == 16 || i == 17 || i == 48 || i == 49 || i == 255) {
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "growth"));
      check_scans(*idx, 20, 300);
    }
  }
  auto st = idx->stats();
  for (auto& [name, v] : st.extra)
    if (name == "node256" && std::string(GetParam().index) != "wort") {
      EXPECT_EQ(v, 1) << "a full Node256";
    }
  reopen(idx);
  std::shuffle(digits.begin(), digits.end(), rng_);
  for (unsigned i = 0; i < 256; ++i) {
    uint64_t k = base | digits[i];
    ASSERT_TRUE(idx->remove(k));
    ASSERT_FALSE(idx->remove(k));
    ref_.erase(k);
    if (i % 37 == 0 || i >= 253) {
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "shrink"));
    }
  }
  EXPECT_EQ(idx->stats().records, 0u);
  std::vector<record> out(4);
  EXPECT_EQ(idx->scan(0, 4, out.data()), 0u);
  reopen(idx);
}

// Keys that share ever longer prefixes: a split at every digit position,
// in both insertion orders.
TEST_P(Wort, PrefixSplitsAtEveryDigit) {
  auto idx = open_idx();
  const uint64_t a = 0x0123456789ABCDEFull;
  for (int order = 0; order < 2; ++order) {
    std::vector<uint64_t> ks;
    for (unsigned bit = 0; bit < 64; ++bit) ks.push_back(a ^ (uint64_t{1} << bit) ^ (order ? 0x10 : 0));
    if (order) std::reverse(ks.begin(), ks.end());
    for (auto k : ks) {
      bool fresh = ref_.emplace(k, k * 3).second;
      ASSERT_EQ(idx->insert(k, k * 3), fresh) << k;
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "split"));
    }
  }
  check_scans(*idx, 200, 50);
  reopen(idx);
  // Remove in random order: collapses of nodes left with one leaf.
  std::vector<uint64_t> all;
  for (auto& [k, v] : ref_) all.push_back(k);
  std::shuffle(all.begin(), all.end(), rng_);
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_TRUE(idx->remove(all[i]));
    ref_.erase(all[i]);
    if (i % 8 == 0) {
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "remove"));
    }
  }
  expect_same(*idx, "empty");
}

TEST_P(Wort, ScanBoundaries) {
  auto idx = open_idx();
  std::vector<record> out(10);
  EXPECT_EQ(idx->scan(0, 10, out.data()), 0u);
  for (uint64_t k : {uint64_t{0}, uint64_t{1}, uint64_t{255}, uint64_t{256}, uint64_t{1} << 32, UINT64_MAX - 1,
                     UINT64_MAX}) {
    ASSERT_TRUE(idx->insert(k, ~k));
    ref_[k] = ~k;
  }
  EXPECT_EQ(idx->scan(UINT64_MAX, 10, out.data()), 1u);
  EXPECT_EQ(out[0].key, UINT64_MAX);
  EXPECT_EQ(idx->scan(0, 0, out.data()), 0u);
  EXPECT_EQ(idx->scan(2, 1, out.data()), 1u);
  EXPECT_EQ(out[0].key, 255u);
  EXPECT_EQ(idx->scan(257, 10, out.data()), 3u);
  std::vector<record> r;
  idx->range(1, 256, r);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].key, 256u);
  check_scans(*idx, 100, 10);
  expect_same(*idx, "boundaries");
  ASSERT_TRUE(idx->update(0, 7));
  ref_[0] = 7;
  ASSERT_TRUE(idx->remove(UINT64_MAX));
  ref_.erase(UINT64_MAX);
  reopen(idx);
}

TEST_P(Wort, TwoThreads) {
  auto idx = open_idx();
  // One writer over its own keys, one reader checking what it can see.
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    std::vector<record> out(16);
    while (!stop.load()) {
      for (uint64_t k = 1; k < 2000; k += 97)
        if (auto v = idx->lookup(k * 0x9E3779B97F4A7C15ull)) {
          ASSERT_EQ(*v, k);
        }
      size_t m = idx->scan(0, 16, out.data());
      for (size_t i = 1; i < m; ++i) ASSERT_LT(out[i - 1].key, out[i].key);
    }
  });
  for (uint64_t k = 1; k < 2000; ++k) ASSERT_TRUE(idx->insert(k * 0x9E3779B97F4A7C15ull, k));
  for (uint64_t k = 1; k < 2000; k += 2) ASSERT_TRUE(idx->remove(k * 0x9E3779B97F4A7C15ull));
  stop = true;
  reader.join();
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
  EXPECT_EQ(idx->stats().records, 999u);
}

INSTANTIATE_TEST_SUITE_P(All, Wort, test::wort_all_modes(), test::wort_param_name);

// A WORT node learns a prefix its header does not hold (u64: past 12
// digits; bytes: any) from a leaf below it: check() and writers walk to its
// smallest leaf. In a damaged clean pool that walk met a node with no child
// left: check() (pmindex verify) dereferenced a null leaf (u64), and a
// writer restarted forever (both). Now errc::corrupt.
TEST(WortDamage, LongPrefixWithNoLeafBelowIsCorrupt) {
  const std::string path = "/dev/shm/e-wortdmg-" + std::to_string(getpid()) + ".pool";
  for (bool bytes : {false, true}) {
    SCOPED_TRACE(bytes ? "keys=bytes" : "keys=u64");
    ::unlink(path.c_str());
    options o;
    o.index = "wort";
    o.pool_path = path;
    o.pool_size = 32 << 20;
    o.quiet = true;
    if (bytes) o.params = "keys=bytes";
    {
      auto idx = open(o);
      // The top node has 13 prefix digits, more than its header stores
      // (u64: 12, bytes: 8), and branches on digit 13. u64: 1111111111111;
      // bytes: "prefix" and the high half of '1'. Below its digit 1: a
      // node of two leaves.
      if (bytes) {
        for (const char* k : {"prefix1a", "prefix1b", "prefix2"}) ASSERT_TRUE(idx->insert(std::string_view(k), "v"));
      } else {
        for (uint64_t k : {0x1111111111111100ull, 0x1111111111111101ull, 0x1111111111111200ull})
          ASSERT_TRUE(idx->insert(k, k));
      }
      auto& p = idx->pool();
      using art::detail::node_direct, art::detail::off_of;
      auto* top = p.ptr<node_direct<16>>(off_of(p.ptr<art::detail::root_block>(p.root())->child));
      // The header's prefix length: bits 8..15 (u64), 16..31 (bytes; layout.hpp, bytes_layout.hpp).
      ASSERT_EQ(bytes ? (top->header >> 16) & 0xffff : art::detail::decode(top->header).plen, 13u);
      uint64_t low = top->child[1];
      ASSERT_EQ(art::detail::kind_of(low), art::detail::k_direct);
      auto* n = p.ptr<node_direct<16>>(off_of(low));
      for (auto& c : n->child) c = 0;  // the damage: its leaves are gone
      idx->close();
    }
    auto idx = open(o);
    auto corrupt = [](auto&& op) { test::exit_0_if_corrupt(op); };
    EXPECT_EXIT(corrupt([&] {
                  if (!idx->check().ok) throw error(errc::corrupt, "check failed");
                }),
                testing::ExitedWithCode(0), "")
        << "check";
    if (bytes)
      EXPECT_EXIT(corrupt([&] { idx->insert(std::string_view("prefix3"), std::string_view("v")); }),
                  testing::ExitedWithCode(0), "")
          << "insert";
    else
      EXPECT_EXIT(corrupt([&] { idx->insert(0x1111111111111102ull, 1); }), testing::ExitedWithCode(0), "")
          << "insert";
  }
  ::unlink(path.c_str());
}

#ifdef PMINDEX_MUTANTS
// The state a crash leaves in a WORT/WOART prefix split between the header
// store and the grandparent swing: check() must see it (depth disagrees with
// position), recovery must repair it, and the interrupted insert is absent.
class WortSplitRepair : public testing::TestWithParam<const char*> {};

TEST_P(WortSplitRepair, HalfDoneSplitIsRepairedByRecovery) {
  std::string path = "/dev/shm/e-wortrep-" + std::to_string(getpid()) + "-" + GetParam() + ".pool";
  ::unlink(path.c_str());
  options o;
  o.index = GetParam();
  o.pool_path = path;
  o.pool_size = 32 << 20;
  o.quiet = true;
  // Cases: split of the root node, and of a node deeper down; a short and a
  // long prefix (longer than the header stores for WORT: 12 digits).
  struct split_case {
    std::vector<uint64_t> before;
    uint64_t splitter;
  };
  std::vector<split_case> cases = {
      {{0x1111111111111100ull, 0x1111111111111101ull}, 0x1111000000000000ull},  // long prefix at the root
      {{0x1111111111111100ull, 0x1111111111111101ull}, 0x1111111111110000ull},
      {{0x2000000000000000ull, 0x3000000000000000ull, 0x3000000000AB0001ull, 0x3000000000AB0002ull},
       0x3000CD0000000000ull},  // a node below the root
      {{0x5500000000000001ull, 0x5500000000000002ull, 0x5500000000000003ull}, 0x5500010000000000ull},
  };
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    SCOPED_TRACE("case " + std::to_string(ci));
    std::vector<std::string> before;
    for (auto k : cases[ci].before) before.emplace_back(std::string_view(key_bytes(k)));
    ASSERT_NO_FATAL_FAILURE(
        test::expect_split_repaired(o, before, std::string(std::string_view(key_bytes(cases[ci].splitter)))));
  }
}

INSTANTIATE_TEST_SUITE_P(All, WortSplitRepair, testing::Values("wort", "woart"));
#endif

}  // namespace
}  // namespace pmindex
