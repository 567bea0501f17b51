// The scan's leaf ordering (src/btree/detail/rank_sort.hpp): every SIMD
// variant this CPU has against std::sort, on leaf-sized sets of distinct
// keys including 0 and UINT64_MAX (the padding value) and keys that differ
// only in the top bit (AVX2 compares signed words).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "btree/detail/rank_sort.hpp"
#include "pmindex/index.hpp"
#include "test_seed.hpp"

namespace {

using pmindex::record;
namespace d = pmindex::btree::detail;

using ranks_fn = void (*)(const uint64_t*, size_t, uint8_t*);

std::vector<std::pair<const char*, ranks_fn>> variants() {
  std::vector<std::pair<const char*, ranks_fn>> v = {{"scalar", d::key_ranks_scalar}};
  if (__builtin_cpu_supports("avx2")) v.emplace_back("avx2", d::key_ranks_avx2);
  if (__builtin_cpu_supports("avx512f")) v.emplace_back("avx512", d::key_ranks_avx512);
  return v;
}

std::vector<record> distinct_records(std::mt19937_64& rng, size_t m) {
  std::set<uint64_t> keys;
  const uint64_t special[] = {0, UINT64_MAX, 0x8000000000000000ull, 0x7fffffffffffffffull, 1};
  while (keys.size() < m) {
    uint64_t k = rng() % 4 == 0 ? special[rng() % 5] : rng() % 3 == 0 ? rng() % 100 : rng();
    keys.insert(k);
  }
  std::vector<record> r;
  for (uint64_t k : keys) r.push_back({k, ~k});
  std::shuffle(r.begin(), r.end(), rng);
  return r;
}

TEST(RankSort, EveryVariantRanksLikeStdSort) {
  std::mt19937_64 rng(pmindex::test::test_seed());
  for (auto [name, fn] : variants())
    for (size_t m = 1; m <= 64; ++m)
      for (int rep = 0; rep < 20; ++rep) {
        auto recs = distinct_records(rng, m);
        alignas(64) uint64_t keys[64];
        for (size_t i = 0; i < 64; ++i) keys[i] = i < m ? recs[i].key : UINT64_MAX;
        uint8_t rank[64];
        fn(keys, m, rank);
        auto sorted = recs;
        std::sort(sorted.begin(), sorted.end(), [](const record& a, const record& b) { return a.key < b.key; });
        for (size_t i = 0; i < m; ++i)
          ASSERT_EQ(sorted[rank[i]].key, recs[i].key) << name << " m=" << m << " i=" << i;
      }
}

TEST(RankSort, DispatchPadsAndRanks) {
  std::mt19937_64 rng(pmindex::test::test_seed() + 1);
  for (size_t m = 1; m <= 64; ++m) {
    auto recs = distinct_records(rng, m);
    uint8_t rank[64];
    alignas(64) uint64_t keys[64];
    for (size_t i = 0; i < m; ++i) keys[i] = recs[i].key;
    for (size_t i = m; i < 64; ++i) keys[i] = 0xdead;  // must be overwritten by the padding
    d::key_ranks(keys, m, rank);
    auto sorted = recs;
    std::sort(sorted.begin(), sorted.end(), [](const record& a, const record& b) { return a.key < b.key; });
    for (size_t i = 0; i < m; ++i) ASSERT_EQ(sorted[rank[i]].key, recs[i].key) << "m=" << m << " i=" << i;
  }
}

}  // namespace
