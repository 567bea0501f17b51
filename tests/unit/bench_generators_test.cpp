// The harness's generators: key universes, distributions, exact mixes,
// fresh insert keys, the histogram. No timing assertions (performance is
// measured with the harness, never asserted).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>
#include <vector>

#include "distributions.hpp"
#include "histogram.hpp"
#include "keys.hpp"
#include "workload.hpp"

namespace pmindex::bench {
namespace {

TEST(BenchKeys, EveryUniverseIsInjective) {
  for (auto u : {key_universe::dense, key_universe::sparse, key_universe::clustered, key_universe::hashed}) {
    key_map m(u, 42);
    std::unordered_set<uint64_t> seen;
    for (uint64_t id = 0; id < 200000; ++id) ASSERT_TRUE(seen.insert(m(id)).second) << to_string(u) << " id " << id;
    // Far ids too (the run's inserts and a 2^63 key space).
    for (uint64_t id = (uint64_t{1} << 62); id < (uint64_t{1} << 62) + 1000; ++id)
      ASSERT_TRUE(seen.insert(m(id)).second) << to_string(u);
  }
}

TEST(BenchKeys, ClusteredKeysComeInRunsOf64) {
  key_map m(key_universe::clustered, 7);
  for (uint64_t run = 0; run < 100; ++run)
    for (uint64_t i = 1; i < 64; ++i) EXPECT_EQ(m(run * 64 + i), m(run * 64) + i);
}

TEST(BenchKeys, DenseAndHashedAreFixed) {
  EXPECT_EQ(key_map(key_universe::dense)(0), 1u);
  EXPECT_EQ(key_map(key_universe::hashed)(0), 11400714819323198393ull);
}

TEST(BenchZipfian, ApproximateZetaMatchesExactSum) {
  for (double theta : {0.5, 0.99, 1.2}) {
    for (uint64_t n : {10ull, 1023ull, 1024ull, 5000ull, 1000000ull}) {
      double exact = 0;
      for (uint64_t i = n; i >= 1; --i) exact += std::pow(static_cast<double>(i), -theta);
      EXPECT_NEAR(zeta(static_cast<double>(n), theta) / exact, 1.0, 1e-9) << "n " << n << " theta " << theta;
    }
  }
}

TEST(BenchZipfian, SkewIsRoughlyRight) {
  // P(rank 0) = 1 / zeta(n, theta); with theta 0.99 over 1000 ranks ~ 13.4%.
  const uint64_t n = 1000;
  zipfian z(n, 0.99);
  rng r(3);
  std::vector<uint64_t> hist(n);
  const int draws = 400000;
  for (int i = 0; i < draws; ++i) {
    uint64_t k = z(r);
    ASSERT_LT(k, n);
    ++hist[k];
  }
  double p0 = 1 / zeta(n, 0.99), p1 = std::pow(2.0, -0.99) / zeta(n, 0.99);
  EXPECT_NEAR(hist[0] / double(draws), p0, 0.01);
  EXPECT_NEAR(hist[1] / double(draws), p1, 0.01);
  // The top 10% of ranks take the bulk of the draws.
  uint64_t top = 0;
  for (uint64_t i = 0; i < n / 10; ++i) top += hist[i];
  EXPECT_GT(top / double(draws), 0.6);
}

TEST(BenchZipfian, HugeUniverseSetsUpAndStaysInRange) {
  // 2^63 ranks: O(1) setup (YCSB's O(n) zeta could not finish); draws in range.
  const uint64_t n = uint64_t{1} << 63;
  zipfian z(n, 0.99);
  EXPECT_GT(z.zetan(), 40.0);  // ~ sum to 2^63 of i^-0.99
  rng r(5);
  uint64_t zeros = 0;
  for (int i = 0; i < 100000; ++i) {
    uint64_t k = z(r);
    ASSERT_LT(k, n);
    zeros += k == 0;
  }
  EXPECT_NEAR(zeros / 100000.0, 1 / z.zetan(), 0.01);
}

TEST(BenchSelfSimilar, EightyTwenty) {
  const uint64_t n = 100000;
  selfsimilar s(n, 0.2);
  rng r(9);
  int low = 0, draws = 200000;
  for (int i = 0; i < draws; ++i) {
    uint64_t k = s(r);
    ASSERT_LT(k, n);
    low += k < n / 5;
  }
  EXPECT_NEAR(low / double(draws), 0.8, 0.01);
}

TEST(BenchHistogram, EmptyIsAllZero) {
  histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  for (double q : {0.0, 0.5, 0.99999, 1.0}) EXPECT_EQ(h.percentile(q), 0u);
}

TEST(BenchHistogram, PercentilesWithinBucketError) {
  histogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.record(v);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100000u);
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    double want = q * 100000;
    EXPECT_NEAR(static_cast<double>(h.percentile(q)), want, want / 64 + 1) << q;
    EXPECT_GE(static_cast<double>(h.percentile(q)), want);  // upper edge: never optimistic
  }
  EXPECT_EQ(h.percentile(1.0), 100000u);
  // Small values are exact; huge ones saturate, no crash.
  histogram s;
  for (uint64_t v : {0ull, 5ull, 127ull}) s.record(v);
  EXPECT_EQ(s.percentile(0.5), 5u);
  s.record(~uint64_t{0});
  EXPECT_EQ(s.max(), ~uint64_t{0});
  EXPECT_EQ(s.percentile(1.0), ~uint64_t{0});
}

TEST(BenchHistogram, BucketsAreMonotoneAndEdgesConsistent) {
  unsigned prev = 0;
  for (uint64_t v = 0; v < (uint64_t{1} << 20); v += 1 + v / 50) {
    unsigned b = histogram::bucket_of(v);
    ASSERT_GE(b, prev);
    ASSERT_LE(v, histogram::upper_edge(b));
    if (b) {
      ASSERT_GT(v, histogram::upper_edge(b - 1));
    }
    prev = b;
  }
}

TEST(BenchHistogram, MergeAddsUp) {
  histogram a, b;
  for (int i = 0; i < 100; ++i) a.record(10);
  for (int i = 0; i < 100; ++i) b.record(1000);
  a.merge(b);
  EXPECT_EQ(a.count(), 200u);
  EXPECT_EQ(a.min(), 10u);
  EXPECT_EQ(a.max(), 1000u);
  EXPECT_EQ(a.percentile(0.5), 10u);
}

op_generator::params gen_params(workload w, uint32_t t = 0, uint32_t T = 1) {
  op_generator::params p;
  p.w = w;
  p.keys = key_map(key_universe::sparse, 1);
  p.prefill = 10000;
  p.thread = t;
  p.nthreads = T;
  p.seed = 11;
  return p;
}

TEST(BenchMix, OnePercentIsOnePercent) {
  workload w;
  std::fill(std::begin(w.mix), std::end(w.mix), 0.0);
  w.mix[static_cast<unsigned>(op_type::read)] = 0.99;
  w.mix[static_cast<unsigned>(op_type::insert)] = 0.01;
  op_generator g(gen_params(w));
  std::vector<op> b(777);  // batches that do not divide 100
  uint64_t inserts = 0, total = 0;
  for (int k = 0; k < 200; ++k) {
    g.fill(b.data(), b.size());
    for (auto& o : b) inserts += o.type == op_type::insert;
    total += b.size();
    // After every batch, within one op of the exact share.
    ASSERT_LE(std::fabs(static_cast<double>(inserts) - 0.01 * static_cast<double>(total)), 1.0) << "batch " << k;
  }
  // Tiny shares are honoured too.
  w.mix[static_cast<unsigned>(op_type::insert)] = 0.0001;
  w.mix[static_cast<unsigned>(op_type::read)] = 0.9999;
  op_generator g2(gen_params(w));
  std::vector<op> one(100);
  inserts = 0;
  for (int k = 0; k < 1000; ++k) {
    g2.fill(one.data(), one.size());
    for (auto& o : one) inserts += o.type == op_type::insert;
  }
  EXPECT_EQ(inserts, 10u);  // 0.0001 * 100000
}

TEST(BenchMix, EveryPresetAddsUp) {
  for (auto& name : preset_names()) {
    auto w = preset(name);
    ASSERT_TRUE(w) << name;
    double s = 0;
    for (double f : w->mix) s += f;
    EXPECT_NEAR(s, 1.0, 1e-12) << name;
    op_generator g(gen_params(*w));
    std::vector<op> b(10000);
    g.fill(b.data(), b.size());
    uint64_t count[k_nops] = {};
    for (auto& o : b) {
      ++count[static_cast<unsigned>(o.type)];
      if (o.type == op_type::scan) {
        EXPECT_GE(o.len, 1u);
        EXPECT_LE(o.len, 100u);
      }
    }
    for (unsigned t = 0; t < k_nops; ++t) EXPECT_NEAR(count[t], w->mix[t] * 10000, 1.0) << name << " op " << t;
  }
  EXPECT_FALSE(preset("ycsb-z"));
}

TEST(BenchMix, InsertKeysAreFreshAcrossThreads) {
  workload w;
  std::fill(std::begin(w.mix), std::end(w.mix), 0.0);
  w.mix[static_cast<unsigned>(op_type::insert)] = 0.5;
  w.mix[static_cast<unsigned>(op_type::read)] = 0.5;
  for (uint32_t T : {1u, 3u, 8u}) {
    auto p0 = gen_params(w, 0, T);
    std::unordered_set<uint64_t> prefill;
    for (uint64_t id = 0; id < p0.prefill; ++id) prefill.insert(p0.keys(id));
    std::unordered_set<uint64_t> inserted;
    for (uint32_t t = 0; t < T; ++t) {
      op_generator g(gen_params(w, t, T));
      std::vector<op> b(5000);
      for (int k = 0; k < 4; ++k) {
        g.fill(b.data(), b.size());
        for (auto& o : b) {
          if (o.type != op_type::insert) continue;
          ASSERT_FALSE(prefill.count(o.key)) << "insert collides with the prefill, T=" << T;
          ASSERT_TRUE(inserted.insert(o.key).second) << "two inserts of one key, T=" << T;
        }
      }
    }
    EXPECT_EQ(inserted.size(), T * 10000u);
  }
}

TEST(BenchMix, ReproducibleFromSeedAndDistinctPerThread) {
  auto w = *preset("ycsb-a");
  op_generator a(gen_params(w, 0, 2)), b(gen_params(w, 0, 2)), c(gen_params(w, 1, 2));
  std::vector<op> x(2000), y(2000), z(2000);
  a.fill(x.data(), x.size());
  b.fill(y.data(), y.size());
  c.fill(z.data(), z.size());
  size_t same_xy = 0, same_xz = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    same_xy += x[i].key == y[i].key && x[i].type == y[i].type && x[i].sampled == y[i].sampled;
    same_xz += x[i].key == z[i].key;
  }
  EXPECT_EQ(same_xy, x.size());
  EXPECT_LT(same_xz, x.size() / 2);
}

TEST(BenchMix, ReadsHitThePrefillAndLatestFavoursNewKeys) {
  auto w = *preset("ycsb-d");
  auto p = gen_params(w);
  std::unordered_set<uint64_t> prefill;
  for (uint64_t id = 0; id < p.prefill; ++id) prefill.insert(p.keys(id));
  op_generator g(p);
  std::vector<op> b(20000);
  std::unordered_set<uint64_t> inserted;
  uint64_t reads = 0, hits = 0, fresh_reads = 0;
  for (int k = 0; k < 5; ++k) {
    g.fill(b.data(), b.size());
    for (auto& o : b) {
      if (o.type == op_type::insert) {
        inserted.insert(o.key);
        continue;
      }
      ++reads;
      bool in_pre = prefill.count(o.key), in_new = inserted.count(o.key);
      hits += in_pre || in_new;
      fresh_reads += in_new;
    }
  }
  EXPECT_EQ(hits, reads);  // latest reads only existing keys
  EXPECT_GT(fresh_reads, reads / 10);  // recent inserts are hot
}

}  // namespace
}  // namespace pmindex::bench
