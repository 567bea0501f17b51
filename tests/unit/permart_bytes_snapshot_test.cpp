// PermART keys=bytes: range queries are atomic snapshots. (`pmindex stress
// --check snapshot` drives u64 keys; this is its byte-key counterpart.)
//
// One writer toggles the keys of a fixed universe of byte strings (prefix
// chains, \0 and \xff bytes, keys long enough for key blocks, values long
// enough for value blocks) one at a time, appending each change to a log
// before making it. Readers meanwhile call scan(from, n) and range(lo, hi):
// a result taken while log entries (s, e] were pending or done must equal the
// universe's records within its bounds after some prefix k of the log,
// s <= k <= e. The scan_not_atomic mutant must fail this.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pmindex/index.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

struct universe {
  std::vector<std::string> keys;  // sorted, distinct
  explicit universe(uint64_t seed) {
    std::mt19937_64 r(seed);
    std::string chain;
    for (int i = 0; i < 40; ++i) keys.push_back(chain), chain.push_back(i % 3 ? 'a' : '\0');
    for (int i = 0; i < 60; ++i) keys.push_back(std::string(20, 'L') + std::to_string(i));  // key blocks
    for (int i = 0; i < 300; ++i) {
      std::string k(1 + r() % 3, char(r() % 4 == 0 ? 0xff : 'a' + r() % 3));
      for (size_t n = r() % 24; n; --n) k.push_back(char("\0ab\xff"[r() % 4]));
      keys.push_back(k);
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  // Values of 0..29 bytes: inline and in value blocks.
  static std::string value_of(std::string_view k) {
    std::string v(k.size() % 30, 'v');
    for (size_t i = 0; i < v.size() && i < k.size(); ++i) v[i] = char(k[i] + 1);
    return v;
  }
  size_t find(std::string_view k) const { return std::lower_bound(keys.begin(), keys.end(), k) - keys.begin(); }
};

struct shared_log {
  explicit shared_log(size_t cap) : ops(cap) {}
  std::vector<uint32_t> ops;  // key index << 1 | inserted
  std::atomic<uint64_t> started{0}, completed{0};
  std::atomic<bool> stop{false};
};

void write_loop(index& idx, const universe& u, shared_log& log, uint64_t seed, std::atomic<uint64_t>& failures) {
  std::mt19937_64 r(seed);
  std::vector<bool> present(u.keys.size());
  for (uint64_t j = 0; j < log.ops.size() && !log.stop.load(std::memory_order_relaxed); ++j) {
    uint32_t i = uint32_t(r() % u.keys.size());
    bool ins = !present[i];
    log.ops[j] = i << 1 | uint32_t(ins);
    log.started.store(j + 1, std::memory_order_release);
    const std::string& k = u.keys[i];
    if (!(ins ? idx.insert(k, universe::value_of(k)) : idx.remove(k))) ++failures;
    present[i] = ins;
    log.completed.store(j + 1, std::memory_order_release);
  }
}

// Checks one reader's results against the log, replaying it as it goes.
class result_checker {
 public:
  result_checker(const universe& u, const shared_log& log) : u_(u), log_(log), state_(u.keys.size()) {}

  // The result (in `out`) of a query over universe positions [a, b) taken
  // between log positions s and e; empty if it matches a state.
  std::string verify(const record_buffer& out, size_t a, size_t b, uint64_t s, uint64_t e) {
    std::vector<bool> got(u_.keys.size());
    for (size_t i = 0; i < out.size(); ++i) {
      size_t x = u_.find(out.key(i));
      if (x == u_.keys.size() || u_.keys[x] != out.key(i)) return "a key that was never written";
      if (x < a || x >= b) return "a key outside the bounds";
      if (i && out.key(i) <= out.key(i - 1)) return "keys not ascending";
      if (out.value(i) != universe::value_of(out.key(i))) return "a wrong value";
      got[x] = true;
    }
    for (; replayed_ < s; ++replayed_) state_[log_.ops[replayed_] >> 1] = log_.ops[replayed_] & 1;
    int64_t differ = 0;
    for (size_t x = a; x < b; ++x) differ += got[x] != state_[x];
    for (uint64_t j = s; differ != 0 && j < e; ++j) {
      uint32_t x = log_.ops[j] >> 1;
      if (x < a || x >= b) continue;
      differ += got[x] == bool(log_.ops[j] & 1) ? -1 : 1;  // the op moves state toward or away from got
    }
    if (differ == 0) return {};
    return std::to_string(out.size()) + " records match no state between log positions " + std::to_string(s) +
           " and " + std::to_string(e);
  }

 private:
  const universe& u_;
  const shared_log& log_;
  std::vector<bool> state_;  // the universe after log[0, replayed_)
  uint64_t replayed_ = 0;
};

void read_loop(index& idx, const universe& u, shared_log& log, uint64_t seed, std::atomic<uint64_t>& queries,
               std::atomic<uint64_t>& violations, std::string& first) {
  std::mt19937_64 r(seed);
  result_checker rc(u, log);
  record_buffer out;
  auto bound = [&] {  // a universe key, a cut of one, or one extended
    std::string k = u.keys[r() % u.keys.size()];
    if (r() % 3 == 0) k.resize(k.size() / 2);
    if (r() % 3 == 0) k.push_back(char(r()));
    return k;
  };
  while (!log.stop.load(std::memory_order_relaxed)) {
    std::string lo = bound(), hi = bound();
    bool scan = r() % 2;
    if (!scan && hi < lo) std::swap(lo, hi);
    size_t limit = 1 + r() % 80;
    out.clear();
    uint64_t s = log.completed.load(std::memory_order_acquire);
    if (scan)
      idx.scan(lo, limit, out);
    else
      idx.range(lo, hi, out);
    uint64_t e = log.started.load(std::memory_order_acquire);
    // A full scan covers up to its last key; a short one, everything after lo.
    size_t a = u.find(lo);
    size_t b = !scan ? std::upper_bound(u.keys.begin(), u.keys.end(), hi) - u.keys.begin()
               : out.size() == limit ? u.find(out.key(out.size() - 1)) + 1
                                     : u.keys.size();
    std::string err = rc.verify(out, a, b, s, e);
    ++queries;
    if (!err.empty() && violations++ == 0) first = (scan ? "scan: " : "range: ") + err;
  }
}

struct outcome {
  uint64_t writes, queries, violations, failures;
  std::string first;
};

outcome run_check(index& idx, uint64_t seed, double seconds) {
  universe u(seed);
  shared_log log(size_t{8} << 20);
  std::atomic<uint64_t> queries{0}, violations{0}, failures{0};
  std::string first[2];
  std::vector<std::thread> ts;
  ts.emplace_back([&] { write_loop(idx, u, log, seed + 1, failures); });
  for (int t = 0; t < 2; ++t)
    ts.emplace_back([&, t] { read_loop(idx, u, log, seed + 2 + t, queries, violations, first[t]); });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  log.stop = true;
  for (auto& t : ts) t.join();
  return {log.completed.load(), queries.load(), violations.load(), failures.load(),
          first[0].empty() ? first[1] : first[0]};
}

std::unique_ptr<index> open_bytes(const std::string& name, pm::mode mode, const std::string& path,
                                  const std::string& extra = "") {
  options o;
  o.index = name;
  o.mode = mode;
  o.pool_path = path;
  o.pool_size = 256 << 20;
  o.params = "keys=bytes" + extra;
  o.quiet = true;
  return open(o);
}

class PermArtBytesSnapshot : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/pmindex-permart-bsnap-ut-" + std::to_string(getpid()) + ".pool";
    ::unlink(path_.c_str());
    seed_ = test::test_seed();
  }
  void TearDown() override { ::unlink(path_.c_str()); }
  std::string path_;
  uint64_t seed_ = 0;
};

TEST_P(PermArtBytesSnapshot, RangesAndScansAreAtomic) {
  auto idx = open_bytes(GetParam(), pm::mode::persist, path_);
  outcome r = run_check(*idx, seed_, test::long_run() ? 10 : 1);
  EXPECT_EQ(r.violations, 0u) << r.first << " seed " << seed_;
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GT(r.queries, 0u);
  EXPECT_GT(r.writes, 0u);
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
}

#ifdef PMINDEX_MUTANTS
// The check must notice scans that read current versions, not their
// snapshot's.
TEST_P(PermArtBytesSnapshot, CatchesNonAtomicScan) {
  uint64_t violations = 0;
  for (int attempt = 0; attempt < 10 && !violations; ++attempt) {
    auto idx = open_bytes(GetParam(), pm::mode::dram, path_, ",mutant=scan_not_atomic");
    violations += run_check(*idx, seed_ + attempt, 1).violations;
  }
  EXPECT_GT(violations, 0u);
}
#endif

INSTANTIATE_TEST_SUITE_P(All, PermArtBytesSnapshot, testing::Values("permart", "permart-2log"),
                         [](const testing::TestParamInfo<std::string>& p) {
                           return p.param == "permart" ? std::string("permart") : std::string("permart_2log");
                         });

}  // namespace
}  // namespace pmindex
