// PermART keys=bytes unit tests: a std::map<string, string> oracle for every
// operation over keys of 0..300 bytes that share prefixes (with \0 and \xff
// bytes), prefix chains (keys that are proper prefixes of others: a bug
// the ROART original's tracker reports), the longest key and one byte more, values of 0 to 1 MiB, scans
// and ranges from between keys and across prefix boundaries, deep nodes
// (prefixes past 2048 bytes), clean and dirty reopen with a block-count leak
// check, a full pool, 2-Log reconciliation with kv blocks. Atomic byte-key
// snapshots are in permart_bytes_snapshot_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <random>
#include <string>
#include <thread>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "permart_params.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

using test::long_run;
using namespace test::permart;
constexpr size_t k_longest = 4096;  // the entry's max_key

// A printable form of a key for failure messages.
std::string show(std::string_view s) {
  std::string o;
  for (unsigned char c : s.substr(0, 80))
    if (std::isprint(c) && c != '\\') o += char(c);
    else o += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
  if (s.size() > 80) o += "...(" + std::to_string(s.size()) + " bytes)";
  return o;
}

class PermArtBytes : public testing::TestWithParam<param> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/pmindex-permart-bytes-ut-" + std::to_string(getpid()) + "-" + pname({GetParam(), 0}) + ".pool";
    ::unlink(path_.c_str());
    seed_ = test::test_seed();
    rng_.seed(seed_);
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  std::unique_ptr<index> open_idx(uint64_t pool_size = 256 << 20, const std::string& extra = "") {
    options o;
    o.index = GetParam().index;
    o.mode = GetParam().mode;
    o.pool_path = path_;
    o.pool_size = pool_size;
    o.params = "keys=bytes" + extra;
    o.quiet = true;
    return open(o);
  }

  // Keys of 0..300 bytes over a few shared stems, with \0 and \xff bytes.
  std::string random_key() {
    static const std::string stems[] = {"", "a", "ab", std::string("a\0", 2), "\xff\xff", "http://www.example.com/",
                                        std::string(40, 'x'), std::string(17, '\0')};
    std::string k = stems[rng_() % std::size(stems)];
    size_t len = rng_() % 4 == 0 ? rng_() % 300 : rng_() % 6;
    static const char alphabet[] = {'\0', 'a', 'b', 'c', '/', '\x7f', '\x80', '\xff'};
    while (k.size() < len) k.push_back(rng_() % 3 ? alphabet[rng_() % 8] : char(rng_()));
    return k.substr(0, 300);
  }
  std::string random_value() {
    static const size_t sizes[] = {0, 1, 7, 8, 9, 16, 100};
    std::string v(sizes[rng_() % std::size(sizes)], '\0');
    for (auto& c : v) c = char(rng_());
    return v;
  }

  // Everything agrees: check(), every lookup, a full scan, a full range, stats.
  void expect_same(index& idx, const char* phase) {
    SCOPED_TRACE(std::string(phase) + " seed=" + std::to_string(seed_));
    auto c = idx.check();
    ASSERT_TRUE(c.ok) << c.message;
    std::string v;
    for (auto& [k, val] : ref_) {
      ASSERT_TRUE(idx.lookup(k, &v)) << "missing " << show(k);
      ASSERT_EQ(v, val) << show(k);
    }
    record_buffer all;
    ASSERT_EQ(idx.scan("", ref_.size() + 1, all), ref_.size());
    size_t i = 0;
    for (auto& [k, val] : ref_) {
      ASSERT_EQ(all.key(i), k) << "scan position " << i;
      ASSERT_EQ(all.value(i), val) << "scan position " << i;
      ++i;
    }
    record_buffer r;
    ASSERT_EQ(idx.range("", std::string(k_longest, '\xff'), r), ref_.size());
    ASSERT_EQ(idx.stats().records, ref_.size());
  }

  void do_ops(index& idx, size_t n) {
    std::string got;
    for (size_t i = 0; i < n; ++i) {
      std::string k = random_key(), v = random_value();
      switch (rng_() % 8) {
        case 0:
        case 1:
        case 2: ASSERT_EQ(idx.insert(k, v), ref_.emplace(k, v).second) << show(k); break;
        case 3: {
          auto it = ref_.find(k);
          ASSERT_EQ(idx.update(k, v), it != ref_.end()) << show(k);
          if (it != ref_.end()) it->second = v;
          break;
        }
        case 4: {
          ASSERT_EQ(idx.upsert(k, v), !ref_.count(k)) << show(k);
          ref_[k] = v;
          break;
        }
        case 5:
        case 6: ASSERT_EQ(idx.remove(k), ref_.erase(k) == 1) << show(k); break;
        default: {
          auto it = ref_.find(k);
          ASSERT_EQ(idx.lookup(k, &got), it != ref_.end()) << show(k);
          if (it != ref_.end()) {
            ASSERT_EQ(got, it->second);
          }
        }
      }
    }
  }

  void put(index& idx, const std::string& k, const std::string& v) {
    ASSERT_TRUE(idx.insert(k, v)) << show(k);
    ref_[k] = v;
  }

  // Scans and ranges from every key, just before and after it, its prefixes,
  // and random strings; compared with the map.
  // Scans and ranges from `tries` random keys and from around one in
  // `every` stored keys, of up to max_count records.
  void check_scans(index& idx, size_t tries, size_t max_count = 40, unsigned every = 3) {
    std::vector<std::string> probes = {"", std::string(1, '\0'), "\xff", std::string(300, '\xff')};
    for (auto& [k, v] : ref_) {
      if (rng_() % every) continue;
      probes.push_back(k);
      probes.push_back(k + '\0');
      if (!k.empty()) {
        probes.push_back(k.substr(0, k.size() - 1));
        std::string up = k;
        up.back() = char(uint8_t(up.back()) + 1);
        probes.push_back(up);
      }
    }
    for (size_t t = 0; t < tries; ++t) probes.push_back(random_key());
    for (auto& p : probes) p.resize(std::min(p.size(), k_longest));
    record_buffer buf;
    for (auto& from : probes) {
      size_t cnt = rng_() % max_count;
      buf.clear();
      size_t n = idx.scan(from, cnt, buf);
      ASSERT_EQ(n, buf.size());
      auto it = ref_.lower_bound(from);
      for (size_t i = 0; i < n; ++i, ++it) {
        ASSERT_NE(it, ref_.end()) << "scan from " << show(from);
        ASSERT_EQ(buf.key(i), it->first) << "scan from " << show(from);
        ASSERT_EQ(buf.value(i), it->second);
      }
      ASSERT_TRUE(n == cnt || it == ref_.end()) << "scan from " << show(from) << " short";
      std::string hi = rng_() % 2 ? probes[rng_() % probes.size()] : (from + random_key()).substr(0, k_longest);
      buf.clear();
      idx.range(from, hi, buf);
      size_t i = 0;
      for (auto a = ref_.lower_bound(from); from <= hi && a != ref_.end() && a->first <= hi; ++a, ++i) {
        ASSERT_LT(i, buf.size()) << "range " << show(from) << " .. " << show(hi);
        ASSERT_EQ(buf.key(i), a->first);
      }
      ASSERT_EQ(i, buf.size()) << "range " << show(from) << " .. " << show(hi);
    }
  }

  // Blocks in use (after reclaiming retired ones), minus the version links
  // a recovery drops.
  static uint64_t live_blocks(index& idx) {
    idx.pool().quiesce();
    return idx.pool().usage().used_blocks - uint64_t(stat(idx, "version_links"));
  }

  std::string path_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::map<std::string, std::string> ref_;
};
class PermArtBytesReopen : public PermArtBytes {};  // pools that reopen (not dram)
class PermArtBytesTwoLog : public PermArtBytes {};  // 2-Log only

TEST_P(PermArtBytes, RandomOpsAgainstMap) {
  auto idx = open_idx();
  for (int round = 0; round < 3; ++round) {
    ASSERT_NO_FATAL_FAILURE(do_ops(*idx, scaled(6000)));
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "random ops"));
    ASSERT_NO_FATAL_FAILURE(check_scans(*idx, 100));
  }
  for (auto it = ref_.begin(); it != ref_.end();) {  // and back to empty
    ASSERT_TRUE(idx->remove(it->first)) << show(it->first);
    it = ref_.erase(it);
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "emptied"));
}

// Scans list the slots below a node by a guess of what a sibling holds;
// here most subtrees were emptied but for one record (nodes keep their
// size), so walks stop short of their count and walk again from right after
// their last key, at the same stamp; end keys (a node's prefix) among them.
// Scans are longer than one walk (4096 records).
TEST_P(PermArtBytes, ScansThatWalkAgain) {
  auto idx = open_idx();
  auto be64 = [](uint64_t x) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = char(x >> (56 - 8 * i));
    return s;
  };
  std::vector<std::string> keys;
  for (size_t i = 0; i < 20000; ++i) keys.push_back(be64(rng_()));
  for (unsigned a = 0; a < 256; ++a) {  // 256 two-byte stems, each a key too, 24 keys below each
    const std::string stem{'\x5A', char(a)};
    keys.push_back(stem);
    for (int i = 0; i < 24; ++i) keys.push_back(stem + be64(rng_()).substr(0, 1 + rng_() % 7));
  }
  for (auto& k : keys)
    if (ref_.emplace(k, k + "v").second) {
      ASSERT_TRUE(idx->insert(k, k + "v"));
    }
  std::string last_group;
  size_t g = 0;
  for (auto it = ref_.begin(); it != ref_.end();) {  // all but a group's first, in 3 of 4 groups
    const std::string group = it->first.substr(0, it->first[0] == '\x5A' ? 2 : 1);  // (a stem: 2 bytes)
    if (group == last_group && g % 4 != 0) {
      ASSERT_TRUE(idx->remove(it->first));
      it = ref_.erase(it);
    } else {
      if (group != last_group) ++g;
      last_group = group;
      ++it;
    }
  }
  ASSERT_GT(ref_.size(), 5000u);
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "thinned"));
  ASSERT_NO_FATAL_FAILURE(check_scans(*idx, 30, 10000, 300));
}

// madsys-dev/ROART#1: ROART asserts when a key is a proper prefix of
// another. Here such keys live together, in every insertion order, through
// splits (a node's end slot holds the key equal to its prefix), removals
// and scans that start on, before and after each of them.
TEST_P(PermArtBytes, ProperPrefixKeyChains) {
  std::vector<std::string> chain = {"", "a", std::string("a\0", 2), std::string("a\0\0", 3), "ab", "abc",
                                    "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh", "abcdefghijklmnopq",
                                    "abcdefghijklmnopqr", "b", "\xff", "\xff\xff"};
  for (int order = 0; order < 3; ++order) {
    auto idx = open_idx();
    ref_.clear();
    std::vector<std::string> keys = chain;
    if (order == 1) std::reverse(keys.begin(), keys.end());
    if (order == 2) std::shuffle(keys.begin(), keys.end(), rng_);
    for (auto& k : keys) {
      ASSERT_NO_FATAL_FAILURE(put(*idx, k, "v" + k));
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "chain insert"));
    }
    ASSERT_FALSE(idx->insert("ab", "again"));
    ASSERT_TRUE(idx->update("", "empty"));
    ref_[""] = "empty";
    ASSERT_NO_FATAL_FAILURE(check_scans(*idx, 20));
    // 'a' followed by 0..299 zero bytes: one node per length, each holding
    // the shorter key in its end slot.
    for (size_t n = 0; n < 300; n += (n < 20 ? 1 : 37)) ASSERT_NO_FATAL_FAILURE(put(*idx, "z" + std::string(n, '\0'), "z"));
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "zero chain"));
    ASSERT_NO_FATAL_FAILURE(check_scans(*idx, 20));
    std::shuffle(keys.begin(), keys.end(), rng_);
    for (auto& k : keys) {
      ASSERT_TRUE(idx->remove(k)) << show(k);
      ref_.erase(k);
      ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "chain remove"));
    }
    idx->close();
    ::unlink(path_.c_str());
  }
}

TEST_P(PermArtBytes, ValueSizesAndLimits) {
  auto idx = open_idx();
  std::string mib(size_t{1} << 20, 'm');
  for (size_t i = 0; i < mib.size(); i += 4096) mib[i] = char(i >> 12);
  const std::string values[] = {"", "12345678", std::string(100, 'h'), std::string(4096, '\xff'), mib};
  for (size_t i = 0; i < std::size(values); ++i)
    ASSERT_NO_FATAL_FAILURE(put(*idx, "key" + std::to_string(i), values[i]));
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "every size"));
  // Updates across the inline/block boundary, both ways.
  for (size_t i = 0; i < std::size(values); ++i) {
    std::string k = "key" + std::to_string(i);
    const std::string& v = values[std::size(values) - 1 - i];
    ASSERT_TRUE(idx->update(k, v));
    ref_[k] = v;
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "updated"));
  // The longest key and value work; one byte more is an error that changes nothing.
  std::string longest(k_longest, 'L');
  ASSERT_NO_FATAL_FAILURE(put(*idx, longest, mib));
  auto expect_err = [&](errc code, auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
    }
  };
  std::string too_long = longest + "L";
  record_buffer rb;
  expect_err(errc::key_too_long, [&] { idx->insert(too_long, "x"); });
  expect_err(errc::key_too_long, [&] { idx->upsert(too_long, "x"); });
  expect_err(errc::key_too_long, [&] { idx->update(too_long, "x"); });
  expect_err(errc::key_too_long, [&] { idx->remove(too_long); });
  expect_err(errc::key_too_long, [&] { idx->lookup(too_long, nullptr); });
  {  // one byte over max_value (128 MiB; the conformance suite writes one of it)
    const std::string over(idx->max_value() + 1, 'x');
    expect_err(errc::value_too_long, [&] { idx->insert("new", over); });
    expect_err(errc::value_too_long, [&] { idx->update("key0", over); });
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "after the errors"));
  // A bound is not a key: a scan from one byte past the longest key starts
  // after it (at "M..."), a range up to it ends with it.
  ASSERT_EQ(idx->scan(too_long, 1, rb), 1u);
  EXPECT_EQ(rb.key(0), ref_.upper_bound(too_long)->first);
  rb.clear();
  ASSERT_EQ(idx->range(longest, too_long, rb), 1u);
  EXPECT_EQ(rb.key(0), longest);
  // The u64 calls see 8-byte keys and values.
  ASSERT_TRUE(idx->insert(uint64_t{0x4142434445464748}, 7));
  ref_["ABCDEFGH"] = std::string(value_bytes(7));
  EXPECT_EQ(idx->lookup(uint64_t{0x4142434445464748}), 7u);
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "u64 call"));
}

// Inner nodes deeper than 2048 bytes: keys that share 3000 bytes, a chain of
// keys differing only past byte 2040, and keys of the longest length.
TEST_P(PermArtBytes, DeepPrefixes) {
  auto idx = open_idx();
  std::string stem(3000, 's');
  stem[1000] = '\0';
  for (int i = 0; i < 40; ++i) ASSERT_NO_FATAL_FAILURE(put(*idx, stem + char('a' + i % 26) + std::to_string(i), "d"));
  ASSERT_NO_FATAL_FAILURE(put(*idx, stem, "stem"));  // the prefix itself: an end slot past 3000
  for (size_t n = 2040; n < 2060; ++n) ASSERT_NO_FATAL_FAILURE(put(*idx, std::string(n, 'c'), std::to_string(n)));
  for (int i = 0; i < 20; ++i) {
    std::string k(k_longest, 'q');
    k[k_longest - 1 - i % 3] = char(i);
    idx->insert(k, "longest");
    ref_[k] = "longest";
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "deep"));
  ASSERT_NO_FATAL_FAILURE(check_scans(*idx, 20));
  stem[2999] = 'r';  // a prefix split at byte 2999
  ASSERT_NO_FATAL_FAILURE(put(*idx, stem, "split"));
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "split deep"));
}

// The deepest tree: keys "", "a", "aa", ... up to the longest key, each a
// proper prefix of the next: one inner node per length (the shorter key in
// its end slot). Walks, scans and recovery go 4096 levels down.
TEST_P(PermArtBytesReopen, LongestPrefixChain) {
  {
    auto idx = open_idx(512 << 20);
    for (size_t n = 0; n <= k_longest; ++n) ASSERT_NO_FATAL_FAILURE(put(*idx, std::string(n, 'a'), std::to_string(n)));
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "chain"));
    EXPECT_GE(stat(*idx, "sparse_nodes"), double(k_longest - 8));
    record_buffer rb;
    ASSERT_EQ(idx->scan(std::string(2000, 'a') + '\0', 3, rb), 3u);
    EXPECT_EQ(rb.key(0), std::string(2001, 'a'));
    for (size_t n = 0; n <= k_longest; n += 97) {
      ASSERT_TRUE(idx->remove(std::string(n, 'a')));
      ref_.erase(std::string(n, 'a'));
    }
    idx->abandon();
  }
  auto idx = open_idx(512 << 20);
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "chain recovered"));
}

TEST_P(PermArtBytesReopen, ReopenCleanAndDirtyLeaksNothing) {
  {
    auto idx = open_idx();
    ASSERT_NO_FATAL_FAILURE(do_ops(*idx, scaled(8000)));
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "before close"));
  }
  uint64_t used = 0;
  {
    auto idx = open_idx();
    EXPECT_TRUE(idx->report().was_clean);
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "clean reopen"));
    ASSERT_NO_FATAL_FAILURE(do_ops(*idx, scaled(8000)));
    // Leave emptied slots (version links) behind for the recovery to drop.
    for (int i = 0; i < 50 && !ref_.empty(); ++i) {
      ASSERT_TRUE(idx->remove(ref_.begin()->first));
      ref_.erase(ref_.begin());
    }
    used = live_blocks(*idx);
    idx->abandon();
  }
  {
    auto idx = open_idx();
    EXPECT_FALSE(idx->report().was_clean);
    EXPECT_EQ(idx->report().traced_blocks, used);  // nothing leaked, nothing lost
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "dirty reopen"));
    ASSERT_NO_FATAL_FAILURE(do_ops(*idx, scaled(4000)));
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "after recovery"));
    used = live_blocks(*idx);
    idx->abandon();
  }
  auto idx = open_idx();
  EXPECT_EQ(idx->report().traced_blocks, used);
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "second recovery"));
}

TEST_P(PermArtBytes, FullPoolFailsWritesAndRemovesStillWork) {
  auto idx = open_idx(8 << 20);
  std::string v(200, 'v');
  try {
    for (uint64_t i = 0;; ++i) {
      std::string k = "full/" + std::to_string(i * 7919 % 100003) + std::string(20, 'k');
      if (idx->insert(k, v)) ref_[k] = v;
    }
  } catch (const error& e) {
    ASSERT_EQ(e.code(), errc::pool_full);
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "full"));
  try {
    idx->update(ref_.begin()->first, std::string(5000, 'u'));
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::pool_full);  // or it fit: either way the map must agree
  }
  ASSERT_TRUE(idx->lookup(ref_.begin()->first, &v));
  ref_.begin()->second = v;
  for (auto it = ref_.begin(); it != ref_.end();) {
    ASSERT_TRUE(idx->remove(it->first)) << show(it->first);
    it = ref_.erase(it);
  }
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "emptied a full pool"));
}

TEST_P(PermArtBytes, ConcurrentWriters) {
  auto idx = open_idx();
  const unsigned nthreads = 4;
  std::vector<std::thread> ts;
  std::vector<std::map<std::string, std::string>> mine(nthreads);
  std::atomic<bool> fail{false};
  for (unsigned t = 0; t < nthreads; ++t)
    ts.emplace_back([&, t] {
      std::mt19937_64 r(seed_ + t);
      std::string v;
      for (size_t i = 0; i < scaled(3000); ++i) {
        // Disjoint keys per thread, on shared stems (contended nodes).
        std::string k = std::string(r() % 3, 'p') + std::to_string(r() % 500) + char('0' + t);
        if (r() % 4 == 0) k += std::string(30, char(t));
        std::string val(r() % 20, char(i));
        bool had = mine[t].count(k);
        switch (r() % 3) {
          case 0: fail = fail || idx->insert(k, val) == had; if (!had) mine[t][k] = val; break;
          case 1: fail = fail || idx->remove(k) != had; mine[t].erase(k); break;
          default: fail = fail || idx->lookup(k, &v) != had || (had && v != mine[t][k]);
        }
        record_buffer out;
        if (i % 64 == 0) idx->scan(k, 20, out);
      }
    });
  for (auto& t : ts) t.join();
  ASSERT_FALSE(fail.load());
  for (auto& m : mine) ref_.insert(m.begin(), m.end());
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "after threads"));
}

// 2-Log with kv blocks: logged inserts, updates and removes name blocks that
// stay the leaf's until reconciliation; a crash in between leaks nothing.
TEST_P(PermArtBytesTwoLog, TwoLogWithBlocks) {
  auto idx = open_idx();
  auto k = [](int i) { return "two-log/" + std::string(20, 'k') + char('a' + i); };  // one leaf, key blocks
  for (int i = 0; i < 4; ++i) ASSERT_NO_FATAL_FAILURE(put(*idx, k(i), std::string(50, char('0' + i))));
  for (int round = 0; round < 6; ++round) {
    ASSERT_TRUE(idx->update(k(0), std::string(60 + round, 'u')));
    ref_[k(0)] = std::string(60 + round, 'u');
    ASSERT_TRUE(idx->remove(k(1 + round % 3)));
    ref_.erase(k(1 + round % 3));
    ASSERT_NO_FATAL_FAILURE(put(*idx, k(1 + round % 3), std::string(round, 'n')));
    ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "logged round"));
  }
  EXPECT_GE(stat(*idx, "log_entries"), 0);
  if (GetParam().mode == pm::mode::dram) return;
  ASSERT_TRUE(idx->update(k(0), std::string(70, 'w')));  // leave an entry naming blocks
  ref_[k(0)] = std::string(70, 'w');
  uint64_t used = live_blocks(*idx);
  idx->abandon();
  idx = open_idx();
  EXPECT_EQ(idx->report().traced_blocks, used);
  ASSERT_NO_FATAL_FAILURE(expect_same(*idx, "2-log recovery"));
}

INSTANTIATE_TEST_SUITE_P(All, PermArtBytes, testing::ValuesIn(params()), pname);
INSTANTIATE_TEST_SUITE_P(All, PermArtBytesReopen,
                         testing::ValuesIn(params([](const param& p) { return p.mode != pm::mode::dram; })), pname);
INSTANTIATE_TEST_SUITE_P(All, PermArtBytesTwoLog,
                         testing::ValuesIn(params([](const param& p) { return p.index == "permart-2log"; })), pname);

}  // namespace
}  // namespace pmindex
