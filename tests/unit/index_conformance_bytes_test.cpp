// The conformance suite for byte keys and values (their contract:
// include/pmindex/index.hpp): every
// registered index whose entry takes key_kind::bytes, created keys=bytes,
// against a std::map<std::string, std::string> oracle. Keys of 0..300 bytes
// sharing prefixes, prefix chains, \0 and \xff bytes, the empty key, the
// longest key and value and one byte more; values of 0, 8, 100 and 4096
// bytes; scans starting between keys and across prefix boundaries; range();
// clean and dirty reopen with the block-count leak check; a full pool;
// concurrent writers. An index is covered as soon as its entry lists bytes;
// sizes grow with PMINDEX_LONG=1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "oracle.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "test_seed.hpp"

namespace pmindex::index_conformance_bytes_test {
namespace {

using bytes_map = std::map<std::string, std::string>;
size_t scaled(size_t n) { return test::long_run() ? n * 50 : n; }

struct param {
  std::string index;
  pm::mode mode;
  size_t max_key, max_value;
};

std::string param_name(const testing::TestParamInfo<param>& p) {
  std::string s = p.param.index + "_" + std::string(pm::to_string(p.param.mode));
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Indexes that take keys=bytes, in dram and persist mode (`persist_only`:
// the tests that reopen a pool file; `concurrent_only`: threads).
std::vector<param> byte_params(bool persist_only = false, bool concurrent_only = false) {
  std::vector<param> v;
  for (auto& e : registered_indexes()) {
    if (!e->supports(key_kind::bytes) || e->name == "null") continue;
    // This suite's keys run to 300 bytes and its values to 4096: an index
    // with smaller limits (the pmemids structures: 16-byte keys, values of
    // the slot chosen at creation) is tested by its own suite.
    if (e->max_key < 300 || e->max_value < 4096) continue;
    if (concurrent_only && !e->concurrent) continue;
    for (auto m : e->modes)
      if ((m == pm::mode::dram && !persist_only) || m == pm::mode::persist)
        v.push_back({e->name, m, e->max_key, e->max_value});
  }
  return v;
}

// Bytes that stress orderings: the extremes, bytes next to them, letters.
constexpr char k_alphabet[] = {'\0', '\x01', 'a', 'b', 'c', '/', '\x7f', '\x80', '\xfe', '\xff'};

// Random keys of 0..300 bytes built on a few shared prefixes, and random
// values whose sizes favour 0, 8, 100 and 4096 bytes.
class byte_gen {
 public:
  explicit byte_gen(uint64_t seed) : rng_(seed) {
    for (int i = 0; i < 8; ++i) prefixes_.push_back(bytes(rng_() % 41));
    prefixes_.push_back("");
  }
  std::string bytes(size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = rng_() % 4 ? k_alphabet[rng_() % sizeof k_alphabet] : static_cast<char>(rng_());
    return s;
  }
  std::string key() {
    const std::string& p = prefixes_[rng_() % prefixes_.size()];
    size_t room = 300 - p.size();
    unsigned r = rng_() % 10;
    size_t n = r < 5 ? rng_() % 9 : r < 8 ? rng_() % 41 : rng_() % (room + 1);
    return p + bytes(std::min(n, room));
  }
  std::string value() {
    unsigned r = rng_() % 20;
    size_t n = r < 3 ? 0 : r < 9 ? 8 : r < 14 ? 100 : r < 15 ? 4096 : rng_() % 301;
    return bytes(n);
  }
  // A key pool: random keys plus proper prefixes of some of them (chains).
  std::vector<std::string> key_pool(size_t n) {
    std::vector<std::string> v;
    while (v.size() < n) {
      v.push_back(key());
      if (rng_() % 4 == 0 && !v.back().empty()) v.push_back(v.back().substr(0, rng_() % v.back().size()));
    }
    return v;
  }
  // A scan start near `k`: itself, its successor (k + "\0"), a proper
  // prefix, the key with its last byte raised, or anything.
  std::string near(const std::string& k) {
    switch (rng_() % 5) {
      case 0: return k;
      case 1: return k + '\0';
      case 2: return k.empty() ? k : k.substr(0, rng_() % k.size());
      case 3: {
        std::string s = k;
        if (!s.empty() && s.back() != '\xff') ++s.back();
        return s;
      }
      default: return bytes(rng_() % 12);
    }
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  std::vector<std::string> prefixes_;
};

class BytesConformance : public testing::TestWithParam<param> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/pmindex-confb-" + std::to_string(getpid()) + "-" + param_name({GetParam(), 0}) + ".pool";
    ::unlink(path_.c_str());
    seed_ = test::test_seed();
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  // Long runs hold more 4 KiB values; each (key included) takes a whole
  // 64 KiB chunk of the pool (blocks over 4 KiB are chunk runs).
  options opts(uint64_t size = test::long_run() ? uint64_t{1} << 30 : 64 << 20) const {
    options o;
    o.index = GetParam().index;
    o.mode = GetParam().mode;
    o.pool_path = path_;
    o.pool_size = size;
    o.params = "keys=bytes";
    o.quiet = true;
    return o;
  }

  void expect_same(index& idx, const bytes_map& ref, const char* phase) {
    SCOPED_TRACE(std::string(phase) + " seed=" + std::to_string(seed_));
    ASSERT_NO_FATAL_FAILURE(test::expect_matches(idx, ref));
  }

  // scan(from, count) against the oracle.
  void expect_scan(index& idx, const bytes_map& ref, const std::string& from, size_t count) {
    record_buffer out;
    size_t n = idx.scan(from, count, out);
    auto it = ref.lower_bound(from);
    size_t want = 0;
    for (auto j = it; j != ref.end() && want < count; ++j) ++want;
    ASSERT_EQ(n, want) << "scan from a key of " << from.size() << " bytes, seed=" << seed_;
    ASSERT_EQ(out.size(), n);
    for (size_t j = 0; j < n; ++j, ++it) {
      ASSERT_TRUE(out.key(j) == it->first) << "scan position " << j << " seed=" << seed_;
      ASSERT_TRUE(out.value(j) == it->second) << "scan position " << j << " seed=" << seed_;
    }
  }

  // range(lo, hi) against the oracle (hi < lo gives nothing).
  void expect_range(index& idx, const bytes_map& ref, const std::string& lo, const std::string& hi) {
    record_buffer out;
    size_t n = idx.range(lo, hi, out);
    size_t want = 0;
    if (!(hi < lo))
      for (auto it = ref.lower_bound(lo); it != ref.end() && it->first <= hi; ++it) {
        ASSERT_LT(want, n) << "range misses records, seed=" << seed_;
        ASSERT_TRUE(out.key(want) == it->first && out.value(want) == it->second)
            << "range position " << want << " seed=" << seed_;
        ++want;
      }
    ASSERT_EQ(n, want) << "range size, seed=" << seed_;
  }

  void random_ops(index& idx, bytes_map& ref, size_t ops, uint64_t salt = 0) {
    byte_gen g(seed_ + salt);
    auto& rng = g.rng();
    auto keys = g.key_pool(ops / 4 + 16);
    std::string got;
    for (size_t i = 0; i < ops; ++i) {
      const std::string& k = keys[rng() % keys.size()];
      auto it = ref.find(k);
      bool present = it != ref.end();
      switch (rng() % 12) {
        case 0: case 1: case 2: {
          std::string v = g.value();
          ASSERT_EQ(idx.insert(k, v), !present) << "insert, seed=" << seed_;
          if (!present) ref[k] = v;
          break;
        }
        case 3: {
          std::string v = g.value();
          ASSERT_EQ(idx.update(k, v), present) << "update, seed=" << seed_;
          if (present) it->second = v;
          break;
        }
        case 4: {
          std::string v = g.value();
          ASSERT_EQ(idx.upsert(k, v), !present) << "upsert, seed=" << seed_;
          ref[k] = v;
          break;
        }
        case 5: case 6:
          ASSERT_EQ(idx.remove(k), present) << "remove, seed=" << seed_;
          ref.erase(k);
          break;
        case 7: case 8:
          ASSERT_EQ(idx.lookup(k, &got), present) << "lookup, seed=" << seed_;
          if (present) {
            ASSERT_TRUE(got == it->second) << "lookup value, seed=" << seed_;
          }
          break;
        case 9: case 10:
          ASSERT_NO_FATAL_FAILURE(expect_scan(idx, ref, g.near(k), rng() % 64));
          break;
        default: {  // mostly narrow: [lo, lo + a few bytes] (a wide range costs its size)
          std::string lo = g.near(k);
          std::string hi = rng() % 32 ? lo + g.bytes(rng() % 3) : g.near(keys[rng() % keys.size()]);
          ASSERT_NO_FATAL_FAILURE(expect_range(idx, ref, lo, hi));
        }
      }
    }
  }

  std::string path_;
  uint64_t seed_ = 0;
};
class PersistentBytesConformance : public BytesConformance {};
class ConcurrentBytesConformance : public BytesConformance {};

TEST_P(BytesConformance, RandomOps) {
  auto idx = open(opts());
  ASSERT_EQ(idx->keys(), key_kind::bytes);
  bytes_map ref;
  random_ops(*idx, ref, scaled(6000));
  expect_same(*idx, ref, "after random ops");
}

// Keys that are prefixes of each other, \0 and \xff at every position, the
// empty key; every scan start between and on them.
TEST_P(BytesConformance, PrefixChainsAndEdgeBytes) {
  auto idx = open(opts());
  std::vector<std::string> keys = {"",      std::string("\0", 1), std::string("\0\0", 2), "a",  std::string("a\0", 2),
                                   std::string("a\0\0", 3), std::string("a\0\xff", 3), "a\x01", "ab", "ab\xff", "abc",
                                   "\xff", "\xff\xff", "\xff\xff\xff", "b", std::string("b\0", 2), "\x7f", "\x80"};
  std::mt19937_64 rng(seed_);
  std::shuffle(keys.begin(), keys.end(), rng);
  bytes_map ref;
  byte_gen g(seed_);
  for (auto& k : keys) {
    std::string v = g.value();
    ASSERT_TRUE(idx->insert(k, v));
    ASSERT_FALSE(idx->insert(k, "other"));  // present: unchanged
    ref[k] = v;
  }
  expect_same(*idx, ref, "prefix chains");
  for (auto& k : keys) {
    for (auto& from : {k, k + '\0', k + '\xff', k.empty() ? k : k.substr(0, k.size() - 1)})
      for (size_t count : {size_t{0}, size_t{1}, size_t{3}, keys.size() + 1})
        ASSERT_NO_FATAL_FAILURE(expect_scan(*idx, ref, from, count));
    for (auto& hi : keys) ASSERT_NO_FATAL_FAILURE(expect_range(*idx, ref, k, hi));
  }
  // Remove every other key: the chains lose links in the middle.
  for (size_t i = 0; i < keys.size(); i += 2) {
    ASSERT_TRUE(idx->remove(keys[i]));
    ASSERT_FALSE(idx->remove(keys[i]));
    ref.erase(keys[i]);
  }
  expect_same(*idx, ref, "half removed");
  for (auto& k : keys) ASSERT_NO_FATAL_FAILURE(expect_scan(*idx, ref, k, 4));
  for (auto& [k, v] : bytes_map(ref)) ASSERT_TRUE(idx->remove(k));
  ref.clear();
  expect_same(*idx, ref, "all removed");
  record_buffer out;
  EXPECT_EQ(idx->scan(std::string_view(), 4, out), 0u);
}

// The longest key and value are taken; one byte more is an error of its own
// kind that changes nothing.
TEST_P(BytesConformance, KeyAndValueLimits) {
  const size_t mk = GetParam().max_key, mv = GetParam().max_value;
  auto idx = open(opts((uint64_t{64} << 20) + 2 * mv));  // mv: 128 MiB (common::k_max_value)
  EXPECT_EQ(idx->max_key(), mk);
  EXPECT_EQ(idx->max_value(), mv);
  bytes_map ref;
  std::string longest(mk, '\xff'), too_long(mk + 1, '\xff');
  longest[mk / 2] = '\0';
  too_long[mk / 2] = '\0';
  ASSERT_TRUE(idx->insert(longest, "v"));
  ref[longest] = "v";
  ASSERT_TRUE(idx->insert("k", "v"));
  ref["k"] = "v";
  auto expect_code = [&](auto&& call, errc code, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": no error";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), code) << what << ": " << e.what();
    }
  };
  std::string got;
  expect_code([&] { idx->insert(too_long, "v"); }, errc::key_too_long, "insert");
  expect_code([&] { idx->update(too_long, "v"); }, errc::key_too_long, "update");
  expect_code([&] { idx->upsert(too_long, "v"); }, errc::key_too_long, "upsert");
  expect_code([&] { idx->remove(too_long); }, errc::key_too_long, "remove");
  expect_code([&] { idx->lookup(too_long, &got); }, errc::key_too_long, "lookup");
  expect_same(*idx, ref, "after too-long keys");
  // A too-long key sorts after the longest one: a scan from it finds nothing.
  ASSERT_NO_FATAL_FAILURE(expect_scan(*idx, ref, too_long, 4));

  {  // the longest value (the copies of one are large: moved, dropped early)
    std::string big(mv, 'x');
    big[0] = '\0';
    big[mv - 1] = 'y';
    ASSERT_TRUE(idx->update("k", big));
    ref["k"] = std::move(big);
  }
  {
    std::string too_big(mv + 1, 'x');
    expect_code([&] { idx->insert("new", too_big); }, errc::value_too_long, "insert");
    expect_code([&] { idx->update("k", too_big); }, errc::value_too_long, "update");
    expect_code([&] { idx->upsert("k", too_big); }, errc::value_too_long, "upsert");
  }
  expect_same(*idx, ref, "after too-long values");
  // Values shrink and grow through the sizes that matter.
  for (size_t n : {size_t{0}, size_t{8}, size_t{100}, size_t{4096}, size_t{7}, size_t{0}, size_t{100}}) {
    std::string v(n, static_cast<char>('a' + n % 26));
    ASSERT_TRUE(idx->update("k", v));
    ref["k"] = v;
    ASSERT_TRUE(idx->lookup("k", &got));
    ASSERT_TRUE(got == v) << n;
  }
  ASSERT_TRUE(idx->insert(std::string_view(), std::string_view()));  // empty key, empty value
  ref[""] = "";
  expect_same(*idx, ref, "value sizes");
}

// Dense small keys over a 4-letter alphabet (every string up to 4 bytes):
// each scan and range start, on a key or between two, crosses prefix
// boundaries.
TEST_P(BytesConformance, ScansAcrossPrefixBoundaries) {
  auto idx = open(opts());
  const std::string alpha = std::string("\0a\x7f\xff", 4);
  std::vector<std::string> all = {""};
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].size() < 4)
      for (char c : alpha) all.push_back(all[i] + c);
  bytes_map ref;
  std::mt19937_64 rng(seed_);
  for (auto& k : all)
    if (rng() % 3) {
      std::string v(rng() % 3 ? 8 : 100, static_cast<char>(k.size()));
      ASSERT_TRUE(idx->insert(k, v));
      ref[k] = v;
    }
  expect_same(*idx, ref, "dense small keys");
  for (auto& from : all) ASSERT_NO_FATAL_FAILURE(expect_scan(*idx, ref, from, 1 + rng() % 9));
  for (int i = 0; i < 400; ++i)
    ASSERT_NO_FATAL_FAILURE(expect_range(*idx, ref, all[rng() % all.size()], all[rng() % all.size()]));
}

TEST_P(PersistentBytesConformance, CleanReopen) {
  bytes_map ref;
  {
    auto idx = open(opts());
    random_ops(*idx, ref, scaled(3000));
    idx->close();
  }
  auto o = opts();
  o.open = pm::open_mode::must_exist;
  o.params = "";  // the pool keeps keys=bytes
  auto idx = open(o);
  EXPECT_TRUE(idx->report().was_clean);
  EXPECT_EQ(idx->keys(), key_kind::bytes);
  expect_same(*idx, ref, "clean reopen");
  random_ops(*idx, ref, scaled(1000), 1);
  expect_same(*idx, ref, "ops after clean reopen");
}

TEST_P(PersistentBytesConformance, DirtyReopenRecoversAndLeaksNothing) {
  bytes_map ref;
  uint64_t used_blocks = 0;
  {
    auto idx = open(opts());
    random_ops(*idx, ref, scaled(3000));
    const auto st = idx->stats();  // first: it waits for background work
    idx->pool().quiesce();         // retired blocks back to the allocator
    used_blocks = idx->pool().usage().used_blocks;
    for (auto& [k, v] : st.extra)
      if (k == "version_links" || k == "unlinked_blocks") used_blocks -= static_cast<uint64_t>(v);
    idx->abandon();  // what a crash after the last operation leaves
  }
  auto o = opts();
  o.open = pm::open_mode::must_exist;
  auto idx = open(o);
  EXPECT_FALSE(idx->report().was_clean);
  // Every key and value block in use before the crash is reachable.
  EXPECT_EQ(idx->report().traced_blocks, used_blocks);
  expect_same(*idx, ref, "dirty reopen");
  random_ops(*idx, ref, scaled(1500), 2);  // allocation after tracing is sound
  expect_same(*idx, ref, "ops after recovery");
}

// A full pool fails the write with pool_full and changes nothing: the
// failed insert's key is absent, the failed update's old value stays, no
// block leaks (a dirty reopen traces exactly what was in use).
TEST_P(PersistentBytesConformance, FullPoolFailsCleanly) {
  auto o = opts(2 << 20);
  bytes_map ref;
  std::pair<std::string, std::string> removed;
  uint64_t used_blocks = 0;
  {
    auto idx = open(o);
    byte_gen g(seed_);
    // Past the first failure, keep trying keys and values of other sizes:
    // an index that allocates twice per insert then also fails between its
    // two allocations (and must give the first block back).
    size_t failures = 0;
    std::string got;
    for (size_t i = 0; i < 10'000'000 && failures < 1000; ++i) {
      size_t vsize = !failures ? 100 + g.rng()() % 300 : g.rng()() % 2 ? g.rng()() % 64 : g.rng()() % 2000;
      std::string k = g.key() + std::to_string(i), v = g.bytes(vsize);
      try {
        if (idx->insert(k, v)) ref[k] = v;
      } catch (const error& e) {
        ASSERT_EQ(e.code(), errc::pool_full) << e.what();
        ASSERT_FALSE(idx->lookup(k, &got)) << "a failed insert left its key";
        ++failures;
      }
    }
    ASSERT_GT(failures, 0u) << "a 2 MiB pool never filled";
    // Updates to bigger values fail or succeed whole.
    for (int i = 0; i < 20 && !ref.empty(); ++i) {
      auto it = std::next(ref.begin(), static_cast<long>(g.rng()() % ref.size()));
      std::string v = g.bytes(4096);
      try {
        ASSERT_TRUE(idx->update(it->first, v));
        it->second = v;
      } catch (const error& e) {
        ASSERT_EQ(e.code(), errc::pool_full) << e.what();
      }
    }
    expect_same(*idx, ref, "full pool");
    // Removing makes room again (for records like the removed ones: the
    // pool's size classes do not lend to each other).
    for (int i = 0; i < 32 && !ref.empty(); ++i) {
      if (i == 0) removed = *ref.begin();
      ASSERT_TRUE(idx->remove(ref.begin()->first));
      ref.erase(ref.begin());
    }
    const auto st = idx->stats();  // first: it waits for background work
    idx->pool().quiesce();
    used_blocks = idx->pool().usage().used_blocks;
    for (auto& [k, v] : st.extra)
      if (k == "version_links" || k == "unlinked_blocks") used_blocks -= static_cast<uint64_t>(v);
    idx->abandon();
  }
  o.open = pm::open_mode::must_exist;
  auto idx = open(o);
  EXPECT_EQ(idx->report().traced_blocks, used_blocks) << "blocks leaked or lost around the full pool";
  expect_same(*idx, ref, "full pool recovered");
  ASSERT_TRUE(idx->insert(removed.first, removed.second)) << "the pool has no room again";
}

// Two threads write disjoint keys that share prefixes (one key space, the
// last byte names the thread); lookups of their own keys are exact, scans
// in order.
TEST_P(ConcurrentBytesConformance, ConcurrentDisjointWriters) {
  auto idx = open(opts());
  const size_t per = scaled(3000);
  byte_gen shared(seed_);
  auto bases = shared.key_pool(per / 2 + 8);
  std::vector<bytes_map> refs(2);
  std::atomic<bool> failed{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t)
    ts.emplace_back([&, t] {
      byte_gen g(seed_ + 1 + t);
      auto& ref = refs[t];
      std::string got;
      record_buffer out;
      for (size_t i = 0; i < per * 2 && !failed; ++i) {
        std::string k = bases[g.rng()() % bases.size()];
        k.push_back(static_cast<char>(t));
        bool present = ref.count(k);
        switch (g.rng()() % 4) {
          case 0:
          case 1: {
            std::string v = g.value();
            if (idx->insert(k, v) != !present) failed = true;
            if (!present) ref[k] = v;
            break;
          }
          case 2: {
            std::string v = g.value();
            if (idx->update(k, v) != present) failed = true;
            if (present) ref[k] = v;
            break;
          }
          default:
            if (idx->remove(k) != present) failed = true;
            ref.erase(k);
        }
        bool found = idx->lookup(k, &got);
        if (found != ref.count(k) || (found && got != ref[k])) failed = true;
        out.clear();
        size_t n = idx->scan(k, 8, out);
        for (size_t j = 1; j < n; ++j)
          if (!(out.key(j - 1) < out.key(j))) failed = true;
        if (n && out.key(0) < k) failed = true;
      }
    });
  for (auto& t : ts) t.join();
  ASSERT_FALSE(failed) << "seed=" << seed_;
  bytes_map ref = refs[0];
  ref.insert(refs[1].begin(), refs[1].end());
  expect_same(*idx, ref, "after concurrent writers");
}

INSTANTIATE_TEST_SUITE_P(Indexes, BytesConformance, testing::ValuesIn(byte_params()), param_name);
INSTANTIATE_TEST_SUITE_P(Indexes, PersistentBytesConformance, testing::ValuesIn(byte_params(true)), param_name);
INSTANTIATE_TEST_SUITE_P(Indexes, ConcurrentBytesConformance, testing::ValuesIn(byte_params(false, true)),
                         param_name);

}  // namespace
}  // namespace pmindex::index_conformance_bytes_test
