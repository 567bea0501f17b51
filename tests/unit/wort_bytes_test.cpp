// WORT, WOART, ART+CoW with keys=bytes (art/detail/bytes_tree.hpp), in
// dram and persist mode, against a std::map<std::string, std::string>
// oracle: random keys of 0..300 bytes sharing prefixes, with \0 and \xff
// bytes; prefix chains ("", "a", "a\0", "ab", ...); the longest key and one
// byte more; values of 0, 8, 100, 4096 bytes and 1 MiB; scans and ranges
// starting between keys and across prefix boundaries; a tree thousands of
// nodes deep; a full pool; clean and dirty reopen with a leak check by
// tracing; the half-done split repaired by recovery at deep positions and
// for keys ending inside a prefix. Sizes grow with PMINDEX_LONG=1; the seed
// is printed on failure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "art/detail/nodes.hpp"
#include "common/kv_block.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/counters.hpp"
#include "test_seed.hpp"
#include "wort_test_params.hpp"

namespace pmindex {
namespace {

using test::long_run;
size_t scaled(size_t n) { return long_run() ? n * 20 : n; }
// k_huge: the largest value written here (the conformance suite writes one of
// max_value bytes for every index).
constexpr size_t k_max_key = 4096, k_max_value = common::k_max_value, k_huge = 1 << 20;

class WortBytes : public test::wort_fixture {
 protected:
  WortBytes() : wort_fixture("wortb-ut") {}

  std::unique_ptr<index> open_idx(pm::open_mode om = pm::open_mode::create_if_missing,
                                  uint64_t size = 128 << 20) {
    options o;
    o.index = GetParam().index;
    o.mode = GetParam().mode;
    o.pool_path = path_;
    o.pool_size = size;
    o.open = om;
    o.params = "keys=bytes";
    o.quiet = true;
    return open(o);
  }

  std::string value_of_size(size_t n) {
    std::string v(n, '\0');
    for (auto& c : v) c = char(rng_());
    return v;
  }
  std::string random_value() {
    unsigned r = rng_() % 100;
    return value_of_size(r < 10 ? 0 : r < 60 ? 8 : r < 97 ? 100 : 4096);
  }

  // Lookups of every oracle key and of absent neighbours, one full scan,
  // check(), the record count.
  void expect_same(index& idx, const char* phase) {
    SCOPED_TRACE(std::string(phase) + " seed=" + std::to_string(seed_));
    auto c = idx.check();
    ASSERT_TRUE(c.ok) << c.message;
    std::string v;
    for (auto& [k, want] : ref_) {
      ASSERT_TRUE(idx.lookup(k, &v)) << "missing key of " << k.size() << " bytes";
      ASSERT_EQ(v, want) << "key of " << k.size() << " bytes";
      for (std::string n : {k + '\0', k + 'a', k.empty() ? std::string("\x01") : k.substr(0, k.size() - 1)})
        if (n.size() <= k_max_key && !ref_.count(n)) {
          ASSERT_FALSE(idx.lookup(n, nullptr)) << "absent neighbour";
        }
    }
    record_buffer all;
    ASSERT_EQ(idx.scan("", ref_.size() + 1, all), ref_.size());
    size_t i = 0;
    for (auto& [k, want] : ref_) {
      ASSERT_EQ(all.key(i), k) << "scan position " << i;
      ASSERT_EQ(all.value(i), want) << "scan position " << i;
      ++i;
    }
    ASSERT_EQ(idx.stats().records, ref_.size());
  }

  // A start key: at a key, just before or after one (its prefix, + "\0",
  // + "\xff", last byte changed), or random.
  std::string probe() {
    if (ref_.empty() || rng_() % 5 == 0) return random_key(rng_() % 12);
    auto it = ref_.begin();
    std::advance(it, rng_() % ref_.size());
    std::string k = it->first;
    switch (rng_() % 6) {
      case 0:
        return k;
      case 1:
        return k + '\0';
      case 2:
        return k + '\xff';
      case 3:
        return k.substr(0, rng_() % (k.size() + 1));
      case 4:
        if (!k.empty()) k.back() = char(k.back() + (rng_() % 2 ? 1 : -1));
        return k;
      default:
        return k + random_key(1 + rng_() % 3);
    }
  }
  void check_scans(index& idx, int n, size_t max_count) {
    SCOPED_TRACE("scans seed=" + std::to_string(seed_));
    record_buffer got;
    for (int i = 0; i < n; ++i) {
      std::string from = probe();
      size_t cnt = 1 + rng_() % max_count;
      got.clear();
      size_t m = idx.scan(from, cnt, got);
      ASSERT_EQ(m, got.size());
      auto it = ref_.lower_bound(from);
      size_t j = 0;
      for (; j < cnt && it != ref_.end(); ++j, ++it) {
        ASSERT_LT(j, m) << "scan ended early";
        ASSERT_EQ(got.key(j), it->first) << "record " << j;
        ASSERT_EQ(got.value(j), it->second);
      }
      ASSERT_EQ(m, j);
      std::string lo = probe(), hi = probe();
      if (rng_() % 4) std::swap(lo, hi);
      got.clear();
      size_t r = idx.range(lo, hi, got);
      size_t want = 0;
      for (auto jt = ref_.lower_bound(lo); lo <= hi && jt != ref_.end() && jt->first <= hi; ++jt, ++want) {
        ASSERT_LT(want, r) << "range ended early";
        ASSERT_EQ(got.key(want), jt->first);
        ASSERT_EQ(got.value(want), jt->second);
      }
      ASSERT_EQ(r, want) << "range";
    }
  }

  // Bytes from an alphabet that makes prefixes collide: \0, \xff, a, b and
  // now and then any byte.
  std::string random_key(size_t n) {
    static const char k_alpha[] = {'\0', '\xff', 'a', 'b'};
    std::string s(n, '\0');
    for (auto& c : s) c = rng_() % 8 ? k_alpha[rng_() % 4] : char(rng_());
    return s;
  }
  // Keys of 0..300 bytes: each a random cut of an earlier one plus a suffix.
  std::vector<std::string> shared_prefix_keys(size_t n) {
    std::vector<std::string> v = {""};
    while (v.size() < n) {
      const std::string& base = v[rng_() % v.size()];
      std::string k = base.substr(0, rng_() % (base.size() + 1));
      k += random_key(rng_() % 4 ? rng_() % 8 : rng_() % 120);
      if (k.size() > 300) k.resize(300);
      v.push_back(k);
    }
    return v;
  }

  void random_ops(index& idx, const std::vector<std::string>& keys, size_t n) {
    SCOPED_TRACE("seed=" + std::to_string(seed_));
    std::string got;
    for (size_t i = 0; i < n; ++i) {
      const std::string& k = keys[rng_() % keys.size()];
      std::string v = random_value();
      switch (rng_() % 7) {
        case 0:
        case 1:
        case 2:
          ASSERT_EQ(idx.insert(k, v), ref_.emplace(k, v).second) << "insert";
          break;
        case 3: {
          bool present = ref_.count(k);
          ASSERT_EQ(idx.update(k, v), present) << "update";
          if (present) ref_[k] = v;
          break;
        }
        case 4: {
          bool present = ref_.count(k);
          ASSERT_EQ(idx.upsert(k, v), !present) << "upsert";
          ref_[k] = v;
          break;
        }
        case 5:
          ASSERT_EQ(idx.remove(k), ref_.erase(k) == 1) << "remove";
          break;
        default: {
          auto it = ref_.find(k);
          ASSERT_EQ(idx.lookup(k, &got), it != ref_.end()) << "lookup";
          if (it != ref_.end()) {
            ASSERT_EQ(got, it->second);
          }
        }
      }
    }
  }

  // Clean reopen, then (persistent modes) a dirty one after which tracing
  // must find exactly the blocks in use before the crash.
  void reopen(std::unique_ptr<index>& idx) {
    if (!persistent()) return;
    idx.reset();
    idx = open_idx(pm::open_mode::must_exist);
    ASSERT_TRUE(idx->report().was_clean);
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "clean reopen"));
    idx->pool().quiesce();
    uint64_t used = idx->pool().usage().used_blocks;
    idx->abandon();
    idx.reset();
    idx = open_idx(pm::open_mode::must_exist);
    ASSERT_FALSE(idx->report().was_clean);
    EXPECT_EQ(idx->report().traced_blocks, used) << "blocks leaked or lost by recovery";
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "dirty reopen"));
  }

  std::map<std::string, std::string> ref_;
};

TEST_P(WortBytes, OracleSharedPrefixes) {
  auto idx = open_idx();
  size_t n = scaled(1500);
  auto keys = shared_prefix_keys(n);
  random_ops(*idx, keys, n * 3);
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "random"));
  check_scans(*idx, 300, 60);
  ASSERT_NO_FATAL_FAILURE(reopen(idx));
  random_ops(*idx, shared_prefix_keys(n / 2), n);
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "after reopen"));
  check_scans(*idx, 100, 30);
  // Everything removed, in random order.
  std::vector<std::string> all;
  for (auto& [k, v] : ref_) all.push_back(k);
  std::shuffle(all.begin(), all.end(), rng_);
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_TRUE(idx->remove(all[i]));
    ref_.erase(all[i]);
    if (i % 97 == 0) {
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "emptying"));
    }
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "empty"));
  ASSERT_NO_FATAL_FAILURE(reopen(idx));
}

// Every key a prefix of the next, in both insertion orders, then removed
// from the middle out: end-of-key entries, splits inside prefixes, collapses.
TEST_P(WortBytes, PrefixChains) {
  auto idx = open_idx();
  std::vector<std::string> chain = {"",
                                    "a",
                                    std::string("a\0", 2),
                                    std::string("a\0\0", 3),
                                    "ab",
                                    "ab\xff",
                                    "ab\xff\xff",
                                    "abc",
                                    std::string(40, 'a'),
                                    std::string(41, 'a'),
                                    std::string(300, 'a'),
                                    std::string(300, 'a') + '\0',
                                    "b",
                                    "\xff"};
  for (int order = 0; order < 2; ++order) {
    ref_.clear();
    idx.reset();
    ::unlink(path_.c_str());
    idx = open_idx();
    auto ks = chain;
    if (order) std::reverse(ks.begin(), ks.end());
    for (auto& k : ks) {
      ASSERT_TRUE(idx->insert(k, "v" + k));
      ASSERT_FALSE(idx->insert(k, "other"));
      ref_[k] = "v" + k;
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "chain"));
    }
    check_scans(*idx, 200, 20);
    ASSERT_NO_FATAL_FAILURE(reopen(idx));
    for (size_t i = 0; i < ks.size(); i += 2) {
      ASSERT_TRUE(idx->remove(ks[i]));
      ASSERT_FALSE(idx->remove(ks[i]));
      ref_.erase(ks[i]);
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "chain remove"));
    }
    check_scans(*idx, 100, 20);
    ASSERT_NO_FATAL_FAILURE(reopen(idx));
  }
}

// Walks that find fewer records than they guessed (nodes.hpp,
// fewest_records: nodes never shrink, so after the removes a node grown
// for 7 entries holds 3, one an end-of-key leaf) and scans and ranges
// longer than one walk (bytes_tree.hpp, k_batch: 4096 records), which walk
// again from right after their last key.
TEST_P(WortBytes, ScansThatWalkAgain) {
  auto idx = open_idx();
  const std::vector<std::string> tails = {"", "\x03", "\x06", std::string("\x06\x01", 2), "\x09", "\x0c",
                                          std::string("\x0f\x00", 2)};
  auto key = [&](uint64_t g, size_t t) {
    const uint32_t p = uint32_t(g * 0x10001u);
    return std::string{char(p >> 24), char(p >> 16), char(p >> 8), char(p)} + tails[t];
  };
  for (uint64_t g = 0; g < 3000; ++g)
    for (size_t t = 0; t < tails.size(); ++t) {
      const std::string k = key(g, t), v = random_value();
      ASSERT_TRUE(idx->insert(k, v));
      ref_[k] = v;
    }
  for (uint64_t g = 0; g < 3000; ++g)
    for (size_t t = 1; t < 5; ++t) {
      ASSERT_TRUE(idx->remove(key(g, t)));
      ref_.erase(key(g, t));
    }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "after removes"));
  check_scans(*idx, 40, 10000);
}

TEST_P(WortBytes, LimitsAndValueSizes) {
  auto idx = open_idx();
  EXPECT_EQ(idx->keys(), key_kind::bytes);
  EXPECT_EQ(idx->max_key(), k_max_key);
  EXPECT_EQ(idx->max_value(), k_max_value);
  std::string longest = random_key(k_max_key), over = longest + 'x';
  for (size_t n : {size_t{0}, size_t{8}, size_t{100}, size_t{4096}, k_huge}) {
    std::string k = "value-" + std::to_string(n), v = value_of_size(n);
    ASSERT_TRUE(idx->insert(k, v));
    ref_[k] = v;
  }
  ASSERT_TRUE(idx->insert(longest, "longest"));
  ref_[longest] = "longest";
  ASSERT_TRUE(idx->insert(longest.substr(0, k_max_key - 1), "one shorter"));
  ref_[longest.substr(0, k_max_key - 1)] = "one shorter";
  auto code = [](auto&& f) {
    try {
      f();
    } catch (const error& e) {
      return e.code();
    }
    return errc::failure;
  };
  EXPECT_EQ(code([&] { idx->insert(over, "x"); }), errc::key_too_long);
  EXPECT_EQ(code([&] { idx->upsert(over, "x"); }), errc::key_too_long);
  EXPECT_EQ(code([&] { idx->update(over, "x"); }), errc::key_too_long);
  EXPECT_EQ(code([&] { idx->remove(over); }), errc::key_too_long);
  EXPECT_EQ(code([&] { idx->lookup(over, nullptr); }), errc::key_too_long);
  EXPECT_EQ(code([&] { idx->insert("big", std::string(k_max_value + 1, 'v')); }), errc::value_too_long);
  EXPECT_EQ(code([&] { idx->update(longest, std::string(k_max_value + 1, 'v')); }), errc::value_too_long);
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "limits: nothing changed"));
  // Values change size both ways on update.
  for (size_t n : {k_huge, size_t{0}, size_t{4096}, size_t{8}}) {
    std::string v = value_of_size(n);
    ASSERT_TRUE(idx->update(longest, v));
    ref_[longest] = v;
  }
  check_scans(*idx, 50, 10);
  ASSERT_NO_FATAL_FAILURE(reopen(idx));
}

// Keys of up to 4096 bytes that leave a common one at every byte (and in
// both nibbles): a path of thousands of nodes, positions far past 255.
TEST_P(WortBytes, DeepTree) {
  auto idx = open_idx();
  std::string base = random_key(k_max_key);
  size_t step = long_run() ? 1 : 7;
  for (size_t i = 0; i < k_max_key; i += step) {
    std::string k = base.substr(0, i);
    ASSERT_TRUE(idx->insert(k + char(base[i] ^ 0x01), "lo" + std::to_string(i)));  // low nibble differs
    ref_[k + char(base[i] ^ 0x01)] = "lo" + std::to_string(i);
    if (i % 3 == 0) {
      ASSERT_TRUE(idx->insert(k + char(base[i] ^ 0x10), "hi"));  // high nibble differs
      ref_[k + char(base[i] ^ 0x10)] = "hi";
    }
    if (i % 5 == 0) {
      ASSERT_TRUE(idx->insert(k, "prefix"));  // a prefix of the rest: end-of-key entries
      ref_[k] = "prefix";
    }
  }
  ASSERT_TRUE(idx->insert(base, "base"));
  ref_[base] = "base";
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "deep"));
  for (auto& [name, v] : idx->stats().extra)
    if (name == "leaf_depth_avg") {
      EXPECT_GT(v, 100) << "the tree is not deep";
    }
  check_scans(*idx, 100, 50);
  ASSERT_NO_FATAL_FAILURE(reopen(idx));
  for (auto it = ref_.begin(); it != ref_.end();) {
    ASSERT_TRUE(idx->remove(it->first));
    it = ref_.erase(it);
    if (it != ref_.end()) ++it;
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "deep, half removed"));
  ASSERT_NO_FATAL_FAILURE(reopen(idx));
}

// Tests that reopen a pool file or count flushes: persist mode only.
class WortBytesPersist : public WortBytes {};

TEST_P(WortBytesPersist, FullPoolFailsCleanly) {
  std::unique_ptr<index> idx = open_idx(pm::open_mode::create_if_missing, 4 << 20);
  bool full = false;
  for (size_t i = 0; i < 100000 && !full; ++i) {
    std::string k = random_key(1 + rng_() % 40), v = value_of_size(rng_() % 3 ? 100 : 3000);
    try {
      if (rng_() % 4 == 0 && !ref_.empty()) {
        auto it = ref_.lower_bound(k);
        if (it == ref_.end()) --it;
        ASSERT_TRUE(idx->update(it->first, v));
        it->second = v;
      } else if (idx->insert(k, v)) {
        ref_[k] = v;
      }
    } catch (const error& e) {
      ASSERT_EQ(e.code(), errc::pool_full) << e.what();
      full = true;
    }
  }
  ASSERT_TRUE(full) << "a 4 MiB pool never filled";
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "full pool"));
  auto victim = ref_.begin()->first;  // removing makes room again
  ASSERT_TRUE(idx->remove(victim));
  ref_.erase(victim);
  ASSERT_NO_FATAL_FAILURE(reopen(idx));
}

// Flushes and fences per byte-key operation (the header comment of
// bytes_tree.hpp): printed, and the fences, which do not depend on where
// blocks land, checked.
TEST_P(WortBytesPersist, PersistenceCostPerOperation) {
  auto idx = open_idx();
  const size_t n = scaled(4000);
  std::vector<std::string> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = std::string(std::string_view(key_bytes(rng_())));
  std::string v8(8, 'v');
  auto measure = [&](const char* what, auto&& op) {
    auto c0 = pm::thread_counters();
    for (auto& k : keys) op(k);
    auto d = pm::thread_counters() - c0;
    std::printf("[ cost ] %s %s: %.2f flushes, %.2f fences per op (8-byte keys and values)\n",
                GetParam().index, what, double(d.lines_flushed) / n, double(d.fences) / n);
    return d;
  };
  auto ins = measure("insert", [&](const std::string& k) { ASSERT_TRUE(idx->insert(k, v8)); });
  auto upd = measure("update", [&](const std::string& k) { ASSERT_TRUE(idx->update(k, v8)); });
  auto rem = measure("remove", [&](const std::string& k) { ASSERT_TRUE(idx->remove(k)); });
  EXPECT_LE(ins.fences, 3 * n);
  EXPECT_EQ(upd.fences, 2 * n);
  EXPECT_LE(upd.lines_flushed, 3 * n);  // the new block (1-2 lines) + the word
  EXPECT_LE(rem.fences, 2 * n);
}

// Recovery validates every word it follows: a damaged pool is errc::corrupt,
// never a crash (the damage is written into the mapped pool file, then the
// index is dropped without a clean close and reopened).
TEST_P(WortBytesPersist, DamagedPoolIsCorrupt) {
  using namespace art::detail;
  struct damage {
    const char* what;
    std::vector<std::string> keys;
    void (*hurt)(pm::pool& p, uint64_t* root_word);
  };
  std::vector<damage> cases = {
      {"leaf lengths",
       {"k"},
       [](pm::pool& p, uint64_t* r) { p.ptr<pmindex::common::kv_block>(off_of(*r))->klen = ~0u; }},
      {"leaf offset", {"k"}, [](pm::pool& p, uint64_t* r) { *r = tag(p.size() + 4096, k_leaf); }},
      {"node kind", {"k1", "k2"}, [](pm::pool&, uint64_t* r) { *r = off_of(*r) | 7; }},
      {"node offset", {"k1", "k2"}, [](pm::pool&, uint64_t* r) { *r = tag(off_of(*r) + 16, kind_of(*r)); }},
      {"prefix length",
       {"k1", "k2"},
       [](pm::pool& p, uint64_t* r) { *p.ptr<uint64_t>(off_of(*r)) = 0xffffull << 16; }},
      // (depth 5: below the branch position the leaves agree on; a depth that
      // keeps depth + plen is a half-done split and is repaired, not corrupt)
      {"header depth", {"k1", "k2"}, [](pm::pool& p, uint64_t* r) { *p.ptr<uint64_t>(off_of(*r)) = 5; }},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.what);
    ::unlink(path_.c_str());
    {
      auto idx = open_idx();
      for (auto& k : c.keys) ASSERT_TRUE(idx->insert(k, "v"));
      pm::pool& p = idx->pool();
      c.hurt(p, &p.ptr<root_block>(p.root())->child);
      idx->abandon();
    }
    try {
      open_idx(pm::open_mode::must_exist);
      ADD_FAILURE() << "a damaged pool opened";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::corrupt) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, WortBytes, test::wort_all_modes(), test::wort_param_name);
INSTANTIATE_TEST_SUITE_P(All, WortBytesPersist, test::wort_persist_only(), test::wort_param_name);

#ifdef PMINDEX_MUTANTS
// A WORT/WOART prefix split interrupted between the header store and the
// parent swing (test hook), with byte keys: check() sees it, recovery
// repairs it (twice: idempotent), the interrupted insert is absent.
class WortBytesSplitRepair : public testing::TestWithParam<const char*> {};

TEST_P(WortBytesSplitRepair, HalfDoneSplitIsRepairedByRecovery) {
  std::string path = "/dev/shm/e-wortbrep-" + std::to_string(getpid()) + "-" + GetParam() + ".pool";
  options o;
  o.index = GetParam();
  o.pool_path = path;
  o.pool_size = 32 << 20;
  o.params = "keys=bytes";
  o.quiet = true;
  std::string deep(1000, 'q');  // positions past 255 digits
  struct split_case {
    std::vector<std::string> before;
    std::string splitter;
  };
  std::vector<split_case> cases = {
      {{"abcdefghij1", "abcdefghij2"}, "abX"},               // a long prefix at the root
      {{"abcdefghij1", "abcdefghij2"}, "abcdefgh"},          // the key ends inside the prefix
      {{"k", "kxyzw1", "kxyzw2"}, "kxQ"},                    // a node below the root
      {{deep + "tail1", deep + "tail2", "z"}, deep + "ta"},  // deep, ending inside
      {{deep + "tail1", deep + "tail2", "z"}, deep.substr(0, 600) + "r"},
  };
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    SCOPED_TRACE("case " + std::to_string(ci));
    ASSERT_NO_FATAL_FAILURE(test::expect_split_repaired(o, cases[ci].before, cases[ci].splitter));
  }
}

INSTANTIATE_TEST_SUITE_P(All, WortBytesSplitRepair, testing::Values("wort", "woart"));
#endif

}  // namespace
}  // namespace pmindex
