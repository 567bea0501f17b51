// ROART (src/art/roart): the bugs of the original (madsys-dev/ROART), each a
// regression test named after it, and the structural cases the generic
// suites do not reach: a std::map oracle over byte keys with small leaf
// arrays (so every node kind, end-of-key records and prefix splits appear),
// lock words and volatile fields left stale in the pool, scans that stop
// inside a leaf array. Sizes grow with PMINDEX_LONG=1; the seed is printed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <random>
#include <string>

#include "art/roart/roart.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "substrate_util.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

using art::roart::inner;
using art::roart::leaf_array;

class Roart : public testing::Test {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/pmindex-roart-ut-" + std::to_string(getpid()) + ".pool";
    ::unlink(path_.c_str());
    seed_ = test::test_seed();
    rng_.seed(seed_);
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  std::unique_ptr<index> open_idx(const std::string& params, pm::mode m = pm::mode::persist) {
    options o;
    o.index = "roart";
    o.mode = m;
    o.pool_path = path_;
    o.pool_size = 256 << 20;
    o.params = params;
    o.quiet = true;
    return open(o);
  }

  // Every oracle key found with its value, absent neighbours absent, a full
  // scan equal to the oracle, check() true.
  void expect_same(index& idx, const std::map<std::string, std::string>& ref, const char* phase) {
    SCOPED_TRACE(std::string(phase) + " seed=" + std::to_string(seed_));
    auto c = idx.check();
    ASSERT_TRUE(c.ok) << c.message;
    std::string v;
    for (auto& [k, want] : ref) {
      ASSERT_TRUE(idx.lookup(k, &v)) << "missing key of " << k.size() << " bytes";
      ASSERT_EQ(v, want);
      if (idx.keys() == key_kind::u64) continue;  // 8-byte keys only
      for (std::string n : {k + '\0', k + '\xff', k.empty() ? std::string("\x01") : k.substr(0, k.size() - 1)})
        if (!ref.count(n)) {
          ASSERT_FALSE(idx.lookup(n, nullptr)) << "absent neighbour";
        }
    }
    record_buffer all;
    ASSERT_EQ(idx.scan("", ref.size() + 1, all), ref.size());
    size_t i = 0;
    for (auto& [k, want] : ref) {
      ASSERT_EQ(all.key(i), k) << "scan position " << i;
      ASSERT_EQ(all.value(i), want);
      ++i;
    }
    ASSERT_EQ(idx.stats().records, ref.size());
  }

  // Random keys sharing prefixes, with \0 and \xff bytes.
  std::string random_key() {
    static const std::string alphabet("\0\x01" "ab\x7f\x80\xfe\xff", 8);
    std::string k = bases_[rng_() % bases_.size()];
    k.resize(rng_() % (k.size() + 1));
    for (unsigned n = unsigned(rng_() % 6); n; --n) k.push_back(alphabet[rng_() % alphabet.size()]);
    if (rng_() % 8 == 0) k.append(rng_() % 200, char(rng_()));
    return k;
  }

  std::string path_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::vector<std::string> bases_ = {"", "http://www.example.com/a/b/c/", std::string("\0\0\0\0\0\0\0\x01", 8),
                                     "\xff\xff\xff\xff\xff", "abcabcabcabcabcabcabcabc"};
};

// madsys-dev/ROART#1: a key that is a proper prefix of another asserted.
// Prefix chains in both orders, with leaf arrays of 2 so every chain splits
// into end-of-key records, and prefix splits above existing nodes.
TEST_F(Roart, PrefixKeys_madsys_ROART_1) {
  for (const char* leaf : {"2", "64"}) {
    ::unlink(path_.c_str());
    auto idx = open_idx(std::string("keys=bytes,leaf=") + leaf);
    std::map<std::string, std::string> ref;
    std::vector<std::string> chain = {"", "a", std::string("a\0", 2), "ab", "abc", "abcd", "abcdefghijkl",
                                      "abcdefghijklmnopqrstuvwxyz", "b", "ba"};
    for (auto& k : chain) {
      ASSERT_TRUE(idx->insert(k, "v" + k));
      ref[k] = "v" + k;
    }
    // Longest first: each shorter key ends inside a prefix already stored.
    std::string l(300, 'x');
    for (size_t n = l.size(); n > 250; n -= 7) {
      ASSERT_TRUE(idx->insert(l.substr(0, n), std::to_string(n)));
      ref[l.substr(0, n)] = std::to_string(n);
    }
    expect_same(*idx, ref, leaf);
    for (auto& k : chain) ASSERT_FALSE(idx->insert(k, "again"));
    ASSERT_TRUE(idx->remove("ab"));
    ref.erase("ab");
    ASSERT_TRUE(idx->update("", "empty"));
    ref[""] = "empty";
    expect_same(*idx, ref, "after remove/update");
  }
}

// A std::map oracle over random byte keys with small leaf arrays, values of
// 0..4096 bytes, then a clean and a dirty reopen.
TEST_F(Roart, RandomBytesAgainstOracle) {
  auto idx = open_idx("keys=bytes,leaf=3");
  std::map<std::string, std::string> ref;
  const size_t ops = test::long_run() ? 200000 : 20000;
  for (size_t i = 0; i < ops; ++i) {
    std::string k = random_key();
    std::string v(std::vector<size_t>{0, 8, 100, 4096}[rng_() % 4], char('a' + i % 26));
    unsigned op = unsigned(rng_() % 10);
    if (op < 5) {
      ASSERT_EQ(idx->insert(k, v), ref.emplace(k, v).second);
    } else if (op < 7) {
      bool had = ref.count(k);
      ASSERT_EQ(idx->update(k, v), had);
      if (had) ref[k] = v;
    } else if (op < 8) {
      bool had = ref.count(k);
      ASSERT_EQ(idx->upsert(k, v), !had);
      ref[k] = v;
    } else {
      ASSERT_EQ(idx->remove(k), ref.erase(k) == 1);
    }
  }
  expect_same(*idx, ref, "random");
  auto st = idx->stats();
  for (auto& [name, x] : st.extra)
    if (name == "node48" || name == "node256") {
      EXPECT_GT(x, 0) << name;
    }
  idx->close();
  idx = open_idx("");
  expect_same(*idx, ref, "clean reopen");
  idx->abandon();
  idx = open_idx("");
  expect_same(*idx, ref, "dirty reopen");
  ASSERT_TRUE(idx->insert("after", "x"));
  ref["after"] = "x";
  expect_same(*idx, ref, "insert after reopen");
}

// The original kept DRAM lock pointers in PM nodes: reopening a pool and
// looking up crashed. Here every node's lock word and volatile fields are
// overwritten with garbage a crash could leave (locked, a pointer-like
// value, a wrong bitmap, a zeroed N48 index), then the pool is reopened
// (clean and dirty): lookups, scans, inserts and check() must work.
// With the mutant stale_volatile (bitmaps trusted across a restart) the
// same pool loses records: the test can fail.
void scribble_volatile_fields(index& idx, unsigned& nodes) {
  pm::pool& p = idx.pool();
  auto* root = p.ptr<art::roart::root_block>(p.root());
  std::vector<uint64_t> stack = {root->root};
  while (!stack.empty()) {
    uint64_t w = stack.back();
    stack.pop_back();
    ++nodes;
    if (art::roart::is_array(w)) {
      auto* a = p.ptr<leaf_array>(art::roart::off_of(w));
      a->lock = 0x00007f1234567801ull;  // a DRAM pointer with the lock bit
      a->bitmap = ~uint64_t{1};  // slot 0 hidden, empty slots shown
      continue;
    }
    auto* n = p.ptr<inner>(art::roart::off_of(w));
    n->lock = (uint64_t(root->gen) << 32) | 1;  // the last generation's lock, held
    auto k = static_cast<art::roart::kind>(n->kind);
    if (k == art::roart::kind::n48) std::memset(&n->child[48], 0, 256);
    for (unsigned j = 0; j < art::roart::capacity(k); ++j)
      if (n->child[j]) stack.push_back(n->child[j]);
  }
}

TEST_F(Roart, ReopenLookupWithStaleLockWords) {
#ifdef PMINDEX_MUTANTS
  {
    auto idx = open_idx("leaf=4,mutant=stale_volatile");
    for (uint64_t i = 0; i < 3000; ++i) idx->insert(i * 7919 % 4096 + (i % 3 ? 0 : i << 40), i);
    unsigned nodes = 0;
    scribble_volatile_fields(*idx, nodes);
    idx->close();
    idx = open_idx("");
    unsigned missing = 0;
    for (uint64_t i = 0; i < 3000; ++i) missing += !idx->lookup(i * 7919 % 4096 + (i % 3 ? 0 : i << 40));
    EXPECT_GT(missing, 0u) << "the mutant must lose records";
    idx->close();
    ::unlink(path_.c_str());
  }
#endif
  for (bool clean : {true, false}) {
    ::unlink(path_.c_str());
    auto idx = open_idx("leaf=4");
    std::map<std::string, std::string> ref;
    for (uint64_t i = 0; i < 3000; ++i) {
      uint64_t k = i * 7919 % 4096 + (i % 3 ? 0 : i << 40);
      if (idx->insert(k, i)) ref[std::string(key_bytes(k))] = std::string(value_bytes(i));
    }
    unsigned nodes = 0;
    scribble_volatile_fields(*idx, nodes);
    ASSERT_GT(nodes, 100u);
    if (clean)
      idx->close();
    else
      idx->abandon();
    idx = open_idx("");
    expect_same(*idx, ref, clean ? "clean" : "dirty");
    for (uint64_t i = 5000; i < 5100; ++i) ASSERT_TRUE(idx->insert(i << 20, i));
    ASSERT_TRUE(idx->check().ok);
  }
}

// A clean open trusts the lock words of its own generation, so a damaged
// pool whose top node's word carries the next open's generation with the
// lock bit made every reader and writer wait for a writer that did not
// exist, and `pmindex verify` too (check() rebuilds volatile fields under
// the word); with the obsolete bit, lookups and writers restarted forever.
// Now errc::corrupt (a held word while no writer is inside; an obsolete
// node met twice under one pin), also for two writers at once, and check()
// fails.
TEST_F(Roart, DamagedLockIsCorruptNotAHang) {
  for (const char* params : {"", "keys=bytes"})
    for (uint64_t bit : {1u, 2u}) {  // locked, obsolete
      SCOPED_TRACE(std::string(params) + (bit == 1 ? " locked" : " obsolete"));
      ::unlink(path_.c_str());
      auto idx = open_idx(params);
      for (uint64_t k = 1; k < 100; ++k) {
        if (*params) ASSERT_TRUE(idx->insert(std::to_string(k), "v"));
        else ASSERT_TRUE(idx->insert(k, k));
      }
      pm::pool& p = idx->pool();
      auto* root = p.ptr<art::roart::root_block>(p.root());
      ASSERT_TRUE(art::roart::is_inner(root->root));
      p.ptr<inner>(art::roart::off_of(root->root))->lock = ((root->gen + 1) << 32) | bit;
      idx->close();
      idx = open_idx("");
      auto corrupt = [](auto&& op) { test::exit_0_if_corrupt(op); };
      std::string v;
      if (*params)
        EXPECT_EXIT(corrupt([&] { idx->lookup("5", &v); }), testing::ExitedWithCode(0), "") << "lookup";
      else
        EXPECT_EXIT(corrupt([&] { idx->lookup(5); }), testing::ExitedWithCode(0), "") << "lookup";
      EXPECT_EXIT(corrupt([&] {
                    test::each_thread_corrupt(2, [&](unsigned i) {
                      if (*params)
                        idx->insert(std::string(1, char('a' + i)), std::string_view("v"));
                      else
                        idx->insert(100 + i, 100);
                    });
                  }),
                  testing::ExitedWithCode(0), "")
          << "two writers";
      EXPECT_EXIT(corrupt([&] {
                    if (!idx->check().ok) throw error(errc::corrupt, "check() failed");
                  }),
                  testing::ExitedWithCode(0), "")
          << "check";
    }
}

// The original's leaf arrays are unsorted and its scan emitted them in slot
// order: a scan stopping inside an array returned the wrong subset. Keys
// inserted in descending order into one array (no split): every scan of
// every length from every start returns exactly the smallest keys >= start.
// The deepest tree: keys "a", "aa", ... up to the longest key, each a proper
// prefix of the next, so one inner node per length (the shorter key its
// end-of-key record): scans, check, stats and a dirty reopen recurse ~4096
// levels down and must not run out of stack (under ASan, whose frames are
// larger, too: check() overflowed an 8 MB stack before its per-node checks
// went out of line).
TEST_F(Roart, LongestPrefixChain) {
  std::map<std::string, std::string> ref;
  {
    auto idx = open_idx("keys=bytes,leaf=2");
    // (up to one byte short of the longest: expect_same looks up each key
    // with a byte more)
    for (size_t n = 1; n < art::roart::tree::k_max_key; ++n) {
      std::string k(n, 'a');
      ASSERT_TRUE(idx->insert(k, std::to_string(n)));
      ref[k] = std::to_string(n);
    }
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, ref, "chain"));
    record_buffer rb;
    ASSERT_EQ(idx->scan(std::string(2000, 'a') + '\0', 3, rb), 3u);
    EXPECT_EQ(rb.key(0), std::string(2001, 'a'));
    idx->abandon();
  }
  auto idx = open_idx("");
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, ref, "chain after a dirty reopen"));
}

TEST_F(Roart, ScanStoppingMidArrayReturnsTheSmallest) {
  for (auto params : {"keys=u64", "keys=bytes", "keys=u64,leaf=8"}) {
    ::unlink(path_.c_str());
    auto idx = open_idx(params);
    std::vector<uint64_t> keys;
    for (uint64_t i = 60; i-- > 0;) {
      ASSERT_TRUE(idx->insert(i * 3 + 1000, i));
      keys.insert(keys.begin(), i * 3 + 1000);
    }
    for (uint64_t from = 995; from < 1185; from += 1)
      for (size_t count : {size_t(1), size_t(2), size_t(5), size_t(17)}) {
        record out[17];
        size_t n = idx->scan(from, count, out);
        auto it = std::lower_bound(keys.begin(), keys.end(), from);
        size_t want = std::min<size_t>(count, size_t(keys.end() - it));
        ASSERT_EQ(n, want) << params << " from " << from;
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i].key, it[i]) << params << " from " << from;
      }
  }
}

// Scans list the leaf arrays beside the path by a guess of what a sibling
// holds (half the path's array); here 3 of 4 arrays were thinned to one
// record by removes, so walks stop short of their count and walk again from
// the key after their last. Scans longer than one walk (4096 records) and
// ranges, against the oracle.
TEST_F(Roart, ScansThatWalkAgain) {
  for (auto params : {"keys=u64", "keys=bytes"}) {
    ::unlink(path_.c_str());
    auto idx = open_idx(params);
    std::map<uint64_t, uint64_t> ref;
    for (uint64_t a = 0; a < 600; ++a)  // 40 keys per array (one per key byte 6 value)
      for (uint64_t x = 0; x < 40; ++x) {
        const uint64_t k = a << 8 | (x * 5 + a % 5);
        ASSERT_TRUE(idx->insert(k, ~k));
        ref[k] = ~k;
      }
    for (uint64_t a = 0; a < 600; ++a)
      if (a % 4)
        for (uint64_t x = 1; x < 40; ++x) {
          const uint64_t k = a << 8 | (x * 5 + a % 5);
          ASSERT_TRUE(idx->remove(k));
          ref.erase(k);
        }
    std::vector<record> out(6000);
    for (int t = 0; t < 300; ++t) {
      const uint64_t from = rng_() % (601 << 8);
      const size_t count = t % 3 ? rng_() % 200 + 1 : rng_() % 6000 + 1;
      const size_t n = idx->scan(from, count, out.data());
      auto it = ref.lower_bound(from);
      for (size_t i = 0; i < n; ++i, ++it) {
        ASSERT_NE(it, ref.end()) << params << " scan from " << from << " seed " << seed_;
        ASSERT_EQ(out[i].key, it->first) << params << " scan from " << from << " seed " << seed_;
        ASSERT_EQ(out[i].value, it->second);
      }
      ASSERT_TRUE(n == count || it == ref.end()) << params << " short scan from " << from << " seed " << seed_;
      const uint64_t hi = from + rng_() % (t % 3 ? 4000 : 200000);
      std::vector<record> r;
      idx->range(from, hi, r);
      auto a = ref.lower_bound(from);
      size_t i = 0;
      for (; a != ref.end() && a->first <= hi; ++a, ++i) {
        ASSERT_LT(i, r.size()) << params << " range " << from << ".." << hi << " seed " << seed_;
        ASSERT_EQ(r[i].key, a->first);
      }
      ASSERT_EQ(i, r.size()) << params << " range " << from << ".." << hi << " seed " << seed_;
    }
  }
}

// The original computed fingerprints from a signed char, so keys with bytes
// >= 0x80 could hash differently on the way in and out. Every byte value in
// every position of short keys (one leaf array holds many; with leaf=64 the
// fingerprint is the only filter before the key compare), found again, in
// unsigned order; check() recomputes every stored fingerprint.
TEST_F(Roart, FingerprintFromUnsignedBytes) {
  auto idx = open_idx("keys=bytes");
  std::map<std::string, std::string> ref;
  for (unsigned b = 0; b < 256; ++b)
    for (const std::string& pre : {std::string(), std::string("\x80"), std::string("\xff\x7f")}) {
      std::string k = pre + char(b);
      ASSERT_TRUE(idx->insert(k, std::to_string(b)));
      ref[k] = std::to_string(b);
    }
  expect_same(*idx, ref, "all bytes");
  // The fingerprint reads bytes as unsigned: the same bytes through a
  // signed and an unsigned buffer hash alike.
  signed char s[3] = {-128, -1, 5};
  unsigned char u[3] = {0x80, 0xff, 5};
  EXPECT_EQ(art::roart::fingerprint({reinterpret_cast<char*>(s), 3}),
            art::roart::fingerprint({reinterpret_cast<char*>(u), 3}));
}

// Over-long keys and values are typed errors that change nothing.
TEST_F(Roart, LimitsAreTypedErrors) {
  auto idx = open_idx("keys=bytes");
  std::string longest(art::roart::tree::k_max_key, 'k');
  ASSERT_TRUE(idx->insert(longest, "v"));
  try {
    idx->insert(longest + "k", "v");
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::key_too_long);
  }
  std::string big(size_t{1} << 20, 'v');  // the conformance suite writes one of k_max_value
  ASSERT_TRUE(idx->insert("big", big));
  std::string got;
  ASSERT_TRUE(idx->lookup("big", &got));
  EXPECT_EQ(got, big);
  EXPECT_THROW(idx->insert("bigger", std::string(art::roart::tree::k_max_value + 1, 'v')), error);
  EXPECT_FALSE(idx->lookup("bigger", nullptr));
  EXPECT_TRUE(idx->check().ok);
}

}  // namespace
}  // namespace pmindex
