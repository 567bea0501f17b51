// Shared body of the FPTree and LB+-Tree unit tests (fptree_test.cpp,
// lbtree_test.cpp): std::map oracle over sequential and random keys, splits,
// removes, updates, scans at leaf boundaries, clean and dirty reopen with
// check() after each phase, no leaks after recovery, 2-thread concurrency.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "oracle.hpp"
#include "test_seed.hpp"

namespace pmindex::btree_test {

using pmindex::test::long_run;
inline int scaled(int n) { return long_run() ? n * 20 : n; }

class pool_file {
 public:
  explicit pool_file(const std::string& tag) {
    path_ = "/dev/shm/f-" + tag + "-" + std::to_string(::getpid()) + ".pool";
    ::unlink(path_.c_str());
  }
  ~pool_file() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline options opts(const std::string& name, const std::string& path, pm::mode m = pm::mode::persist,
                    const std::string& params = "") {
  options o;
  o.index = name;
  o.pool_path = path;
  o.pool_size = 256 << 20;
  o.mode = m;
  o.params = params;
  o.quiet = true;
  return o;
}

using oracle = std::map<uint64_t, uint64_t>;

// The shared oracle comparison, plus range() over everything.
inline void expect_equal(index& idx, const oracle& ref) {
  ASSERT_NO_FATAL_FAILURE(pmindex::test::expect_matches(idx, ref));
  std::vector<record> all;
  idx.range(0, UINT64_MAX, all);
  ASSERT_EQ(all.size(), ref.size());
}

// scan(from, count) against the oracle.
inline void expect_scan(index& idx, const oracle& ref, uint64_t from, size_t count) {
  std::vector<record> out(count + 1);
  size_t n = idx.scan(from, count, out.data());
  auto it = ref.lower_bound(from);
  size_t i = 0;
  for (; i < count && it != ref.end(); ++i, ++it) {
    ASSERT_LT(i, n) << "scan(" << from << ", " << count << ") stopped early";
    ASSERT_EQ(out[i].key, it->first) << "scan(" << from << ", " << count << ") at " << i;
    ASSERT_EQ(out[i].value, it->second);
  }
  ASSERT_EQ(n, i) << "scan(" << from << ", " << count << ")";
}

inline void random_ops(index& idx, oracle& ref, std::mt19937_64& rng, int n, uint64_t universe) {
  for (int i = 0; i < n; ++i) {
    uint64_t k = rng() % universe, v = rng();
    switch (rng() % 8) {
      case 0: case 1: case 2: ASSERT_EQ(idx.insert(k, v), ref.emplace(k, v).second) << "insert " << k; break;
      case 3: {
        bool present = ref.count(k);
        ASSERT_EQ(idx.update(k, v), present) << "update " << k;
        if (present) ref[k] = v;
        break;
      }
      case 4: case 5: ASSERT_EQ(idx.remove(k), ref.erase(k) == 1) << "remove " << k; break;
      case 6: expect_scan(idx, ref, k, 1 + rng() % 40); break;
      default: {
        auto it = ref.find(k);
        auto got = idx.lookup(k);
        ASSERT_EQ(got.has_value(), it != ref.end()) << "lookup " << k;
        if (got) {
          ASSERT_EQ(*got, it->second);
        }
      }
    }
  }
}

inline uint64_t seed() { return pmindex::test::test_seed(); }

// Sequential keys (every split at the right edge), lookups, scans at and
// around every leaf boundary, then updates and removes of every other key.
inline void sequential(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-seq");
  auto idx = open(opts(name, pf.path(), pm::mode::persist, params));
  oracle ref;
  const uint64_t n = scaled(5000);
  for (uint64_t k = 0; k < n; ++k) {
    ASSERT_TRUE(idx->insert(k * 3, k));
    ref[k * 3] = k;
  }
  ASSERT_FALSE(idx->insert(3, 7));
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
  for (uint64_t k = 0; k < n * 3 + 3; ++k) {
    auto v = idx->lookup(k);
    ASSERT_EQ(v.has_value(), k % 3 == 0 && k < n * 3);
  }
  for (uint64_t from : {uint64_t{0}, uint64_t{1}, uint64_t{40}, uint64_t{41}, uint64_t{42}, n * 3 - 3, n * 3 - 1,
                        n * 3, UINT64_MAX})
    for (size_t c : {1, 13, 14, 15, 31, 32, 33, 63, 64, 65, 100, 1000})
      ASSERT_NO_FATAL_FAILURE(expect_scan(*idx, ref, from, c));
  for (uint64_t k = 0; k + 1 < n; k += 2) {
    ASSERT_TRUE(idx->update(k * 3, k + 1));
    ref[k * 3] = k + 1;
    if (k % 4 == 0) {
      ASSERT_TRUE(idx->remove(k * 3 + 3));
      ref.erase(k * 3 + 3);
    }
  }
  ASSERT_FALSE(idx->update(1, 1));
  ASSERT_FALSE(idx->remove(1));
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
  // Random keys descending into the same range (splits in the middle).
  for (uint64_t k = n * 3; k-- > 0;)
    if (k % 3 != 0) {
      ASSERT_TRUE(idx->insert(k, ~k));
      ref[k] = ~k;
    }
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
}

// Random operations in every mode over a small and a sparse universe.
inline void random_all_modes(const std::string& name, const std::string& params = "") {
  for (auto m : {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr})
    for (uint64_t universe : {uint64_t{2000}, uint64_t{1} << 62}) {
      SCOPED_TRACE(std::string(pm::to_string(m)) + " universe " + std::to_string(universe));
      pool_file pf(name + "-rand");
      auto idx = open(opts(name, pf.path(), m, params));
      std::mt19937_64 rng(seed());
      oracle ref;
      for (int round = 0; round < 4; ++round) {
        ASSERT_NO_FATAL_FAILURE(random_ops(*idx, ref, rng, scaled(6000), universe));
        ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
      }
      // Empty it completely (emptied leaves are unlinked), then refill.
      for (auto& [k, v] : ref) ASSERT_TRUE(idx->remove(k));
      ref.clear();
      ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
      record r;
      ASSERT_EQ(idx->scan(0, 1, &r), 0u);
      ASSERT_NO_FATAL_FAILURE(random_ops(*idx, ref, rng, scaled(3000), universe));
      ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
    }
}

// Clean and dirty reopen: contents, check(), and after a dirty open the
// traced blocks are exactly the allocated ones (nothing leaked).
inline void reopen(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-reopen");
  std::mt19937_64 rng(seed());
  oracle ref;
  {
    auto idx = open(opts(name, pf.path(), pm::mode::persist, params));
    ASSERT_TRUE(idx->report().created);
    ASSERT_NO_FATAL_FAILURE(random_ops(*idx, ref, rng, scaled(8000), 1 << 20));
    ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
  }  // clean close
  for (int round = 0; round < 3; ++round) {
    auto idx = open(opts(name, pf.path(), pm::mode::persist, params));
    bool dirty = round > 0;
    ASSERT_EQ(idx->report().was_clean, !dirty);
    ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
    if (dirty) {
      auto u = idx->pool().usage();
      ASSERT_EQ(idx->report().traced_blocks, u.used_blocks) << "leak or double count after recovery";
    }
    double rebuild = -1;
    for (auto& [k, v] : idx->stats().extra)
      if (k == "rebuild_seconds") rebuild = v;
    ASSERT_GE(rebuild, 0.0);
    ASSERT_NO_FATAL_FAILURE(random_ops(*idx, ref, rng, scaled(8000), 1 << 20));
    ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
    if (round < 2)
      idx->abandon();  // next open recovers
  }
  auto idx = open(opts(name, pf.path(), pm::mode::persist, params));
  ASSERT_TRUE(idx->report().was_clean);
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
}

// Two writers on interleaved keys plus a reader; then oracle and check().
inline void concurrent(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-conc");
  auto idx = open(opts(name, pf.path(), pm::mode::persist, params));
  const uint64_t n = scaled(20000);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  auto writer = [&](uint64_t t) {
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t k = (i * 2 + t) * 0x9E3779B97F4A7C15ull;
      if (!idx->insert(k, k + 1)) ++bad;
      if (i % 3 == 0 && !idx->update(k, k + 2)) ++bad;
      if (i % 5 == 0 && !idx->remove(k)) ++bad;
    }
  };
  auto reader = [&] {
    std::vector<record> out(50);
    while (!stop.load()) {
      size_t m = idx->scan(0, 50, out.data());
      for (size_t i = 1; i < m; ++i)
        if (out[i - 1].key >= out[i].key) ++bad;
      for (size_t i = 0; i < m; ++i) {
        auto v = idx->lookup(out[i].key);
        if (v && *v != out[i].key + 1 && *v != out[i].key + 2) ++bad;
      }
    }
  };
  std::thread r(reader);
  std::thread w0(writer, 0), w1(writer, 1);
  w0.join();
  w1.join();
  stop = true;
  r.join();
  ASSERT_EQ(bad.load(), 0);
  oracle ref;
  for (uint64_t t = 0; t < 2; ++t)
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t k = (i * 2 + t) * 0x9E3779B97F4A7C15ull;
      if (i % 5 != 0) ref[k] = i % 3 == 0 ? k + 2 : k + 1;
    }
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
}

// Removes that empty leaves unlink them (hybrid_core.hpp, "Empty leaves"):
// after every record is removed the chain is the head leaf alone, and a
// dirty reopen traces the anchor and that leaf only (an emptied leaf left
// in the chain is traced, and keeps its pool space). Then the index fills
// again to the same shape.
inline void remove_all_unlinks_leaves(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-unlink");
  auto o = opts(name, pf.path(), pm::mode::persist, params);
  auto idx = open(o);
  auto stat = [&](const char* what) {
    for (auto& [k, v] : idx->stats().extra)
      if (k == what) return v;
    ADD_FAILURE() << "no stat " << what;
    return -1.0;
  };
  std::mt19937_64 rng(seed());
  oracle ref;
  for (int i = 0; i < scaled(20000); ++i) {
    uint64_t k = rng();
    if (idx->insert(k, ~k)) ref[k] = ~k;
  }
  const double leaves = stat("leaves");
  ASSERT_GT(leaves, 100.0);
  for (auto& [k, v] : ref) ASSERT_TRUE(idx->remove(k));
  ref.clear();
  EXPECT_EQ(stat("leaves"), 1.0);
  EXPECT_EQ(stat("leaves_unlinked"), leaves - 1);
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
  idx->abandon();
  idx = open(o);
  EXPECT_EQ(idx->report().traced_blocks, 2u) << "anchor and head leaf";
  EXPECT_EQ(idx->report().traced_blocks, idx->pool().usage().used_blocks);
  ASSERT_NO_FATAL_FAILURE(random_ops(*idx, ref, rng, scaled(8000), 1 << 16));
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
  c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
}

// The persistence cost of removes (fptree.hpp, lbtree.hpp): 1 line and 1
// fence, and a remove that empties a leaf 1 line and 1 fence more (the
// unlink). Two leaves (the second made by the first split), emptied from
// the right.
inline void remove_costs(const std::string& name, const std::string& params = "") {
  pool_file pf(name + "-rcost");
  auto idx = open(opts(name, pf.path(), pm::mode::persist, params));
  auto leaves = [&] {
    for (auto& [k, v] : idx->stats().extra)
      if (k == "leaves") return v;
    return -1.0;
  };
  uint64_t n = 0;
  while (leaves() < 2) {
    ++n;
    ASSERT_TRUE(idx->insert(n, n));
  }
  for (uint64_t k = n;; --k) {
    ASSERT_GT(k, 0u);
    auto before = pm::thread_counters();
    ASSERT_TRUE(idx->remove(k));
    auto d = pm::thread_counters() - before;
    const bool unlinked = leaves() == 1;
    EXPECT_EQ(d.lines_flushed, unlinked ? 2u : 1u) << "remove " << k;
    EXPECT_EQ(d.fences, unlinked ? 2u : 1u) << "remove " << k;
    if (unlinked) break;
  }
}

// Leaves emptied and unlinked while others read: stable keys (one per band,
// never removed) sit between bands of keys that writers insert and remove
// again and again, so leaves of a band empty, are unlinked and retired,
// and their ranges move to the left neighbour while readers and scans may
// stand on them. Every lookup of a stable key finds it, every scan is
// sorted and returns each stable key in the range it covered.
inline void concurrent_unlinks(const std::string& name, const std::string& params) {
  pool_file pf(name + "-cunlink");
  auto idx = open(opts(name, pf.path(), pm::mode::persist, params));
  constexpr uint64_t k_bands = 64, k_width = 1000, k_churn = 60;
  for (uint64_t b = 0; b < k_bands; ++b) ASSERT_TRUE(idx->insert(b * k_width, b));
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  const int rounds = scaled(60);
  auto writer = [&](uint64_t t) {
    std::mt19937_64 rng(seed() + t);
    for (int r = 0; r < rounds; ++r)
      for (uint64_t b = t; b < k_bands; b += 2) {
        const uint64_t base = b * k_width + 1 + rng() % (k_width - k_churn - 1);
        for (uint64_t i = 0; i < k_churn; ++i)
          if (!idx->insert(base + i, i)) ++bad;
        for (uint64_t i = 0; i < k_churn; ++i)
          if (!idx->remove(base + i)) ++bad;
      }
  };
  auto reader = [&](uint64_t t) {
    std::mt19937_64 rng(seed() + 10 + t);
    std::vector<record> out(40);
    while (!stop.load()) {
      const uint64_t b = rng() % k_bands;
      auto v = idx->lookup(b * k_width);
      if (!v || *v != b) ++bad;
      const uint64_t from = rng() % (k_bands * k_width);
      size_t m = idx->scan(from, out.size(), out.data());
      for (size_t i = 1; i < m; ++i)
        if (out[i - 1].key >= out[i].key) ++bad;
      if (m == 0) continue;
      // Every stable key in [from, last returned] was returned.
      size_t j = 0;
      for (uint64_t s = (from + k_width - 1) / k_width * k_width; s <= out[m - 1].key; s += k_width) {
        while (j < m && out[j].key < s) ++j;
        if (j == m || out[j].key != s) ++bad;
      }
    }
  };
  std::thread r0(reader, 0), w0(writer, 0), w1(writer, 1);
  w0.join();
  w1.join();
  stop = true;
  r0.join();
  ASSERT_EQ(bad.load(), 0);
  oracle ref;
  for (uint64_t b = 0; b < k_bands; ++b) ref[b * k_width] = b;
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
  double unlinked = 0;
  for (auto& [k, v] : idx->stats().extra)
    if (k == "leaves_unlinked") unlinked = v;
  EXPECT_GT(unlinked, 0.0);
}

inline void bad_params(const std::string& name, const std::string& params) {
  pool_file pf(name + "-bad");
  try {
    open(opts(name, pf.path(), pm::mode::persist, params));
    FAIL() << "params '" << params << "' accepted";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::usage) << e.what();
  }
}

}  // namespace pmindex::btree_test
