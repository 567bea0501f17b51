// The DRAM inner layer of FPTree and LB+-Tree (src/btree/detail/inner_layer.hpp):
// its scan cursor names, from the leaf find() picks, every following leaf in
// key order across bottom nodes and then 0, on layers built in one go and
// grown or shrunk by single inserts and erases (uneven nodes), with the
// smallest capacity (many levels) and LB+-Tree's.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "btree/detail/inner_layer.hpp"
#include "btree/detail/keys.hpp"
#include "test_seed.hpp"

namespace {

namespace d = pmindex::btree::detail;
using layer = d::inner_layer<d::u64_keys>;

// leaves: low key -> leaf offset, as the layer should route them.
void expect_cursor_walks(const layer& in, const std::map<uint64_t, uint64_t>& leaves, std::mt19937_64& rng) {
  std::vector<std::pair<uint64_t, uint64_t>> v(leaves.begin(), leaves.end());
  const uint64_t top = v.back().first + 20;
  for (int t = 0; t < 300; ++t) {
    const uint64_t key = t < 3 ? (t == 0 ? 0 : t == 1 ? top : v.back().first) : rng() % top;
    size_t i = std::upper_bound(v.begin(), v.end(), key, [](uint64_t k, auto& e) { return k < e.first; }) - v.begin() - 1;
    layer::cursor c;
    ASSERT_EQ(c.seek(in, key), v[i].second) << "key " << key;
    ASSERT_EQ(in.find(key), v[i].second);
    if (t % 2) {  // one at a time
      for (size_t j = i + 1; j < v.size(); ++j) ASSERT_EQ(c.next(), v[j].second) << "key " << key << ", leaf " << j;
    } else {  // in batches of uneven size
      uint64_t out[7];
      for (size_t j = i + 1; j < v.size();) {
        const unsigned want = 1 + unsigned(rng() % 7);
        const unsigned got = c.list(out, want);
        ASSERT_EQ(got, std::min<size_t>(want, v.size() - j)) << "key " << key << ", leaf " << j;
        for (unsigned k = 0; k < got; ++k, ++j) ASSERT_EQ(out[k], v[j].second) << "key " << key << ", leaf " << j;
      }
      ASSERT_EQ(c.list(out, 7), 0u);
    }
    ASSERT_EQ(c.next(), 0u) << "past the last leaf, key " << key;
    ASSERT_EQ(c.next(), 0u);
  }
}

class InnerLayer : public ::testing::TestWithParam<uint32_t> {};

TEST_P(InnerLayer, CursorNamesEveryFollowingLeafInOrder) {
  std::mt19937_64 rng(pmindex::test::test_seed());
  for (size_t n : {1, 2, 5, 16, 17, 300, 2000}) {
    SCOPED_TRACE("leaves " + std::to_string(n));
    std::map<uint64_t, uint64_t> leaves;
    for (size_t i = 0; i < n; ++i) leaves[i * 10] = 64 * (i + 1);
    layer in(GetParam());
    in.build({leaves.begin(), leaves.end()});
    expect_cursor_walks(in, leaves, rng);

    // Splits: new leaves between the built ones, in random order.
    std::vector<uint64_t> lows;
    for (size_t i = 0; i < n; ++i) lows.push_back(i * 10 + 5);
    std::shuffle(lows.begin(), lows.end(), rng);
    for (uint64_t k : lows) {
      leaves[k] = 64 * (n + 1 + k);
      in.insert(k, leaves[k]);
    }
    expect_cursor_walks(in, leaves, rng);

    // Merges: about half the leaves (never the head) dropped again.
    for (uint64_t k : lows)
      if (rng() % 2) {
        leaves.erase(k - 5 == 0 ? k : k - 5);
        in.erase(k - 5 == 0 ? k : k - 5);
      }
    ASSERT_EQ(in.check({leaves.begin(), leaves.end()}), "");
    expect_cursor_walks(in, leaves, rng);
  }
}

TEST(InnerLayerCursor, EmptyLayerAnswersZero) {
  layer in(15);
  layer::cursor c;
  EXPECT_EQ(c.seek(in, 42), 0u);
  EXPECT_EQ(c.next(), 0u);
  uint64_t out[4];
  EXPECT_EQ(c.list(out, 4), 0u);
}

INSTANTIATE_TEST_SUITE_P(Capacities, InnerLayer, ::testing::Values(3u, 4u, 15u, 128u));

}  // namespace
