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
      // Empty it completely, then refill: emptied leaves are reused.
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
