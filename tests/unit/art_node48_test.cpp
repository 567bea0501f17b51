// WOART / ART+CoW Node48's walks (src/art/detail/node48.hpp): the digits
// that name a child are found 16 index bytes at a time, so a walk starting
// at any digit (inside a 16-byte group or at its edge) must still visit
// exactly the named digits at or after it, in order, each with its slot.
// Checked against testing the 256 bytes one by one on random nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "art/detail/node48.hpp"
#include "test_seed.hpp"

namespace pmindex::art::detail {
namespace {

using visit = std::pair<unsigned, unsigned>;  // (digit, slot)

std::vector<visit> walk(node48& n, unsigned from, size_t stop_after = ~size_t{0}) {
  std::vector<visit> out;
  node48_ops::for_each(
      &n,
      [&](unsigned d, uint64_t* s) {
        out.push_back({d, unsigned(s - n.child)});
        return out.size() == stop_after;
      },
      from);
  return out;
}

std::vector<visit> expected(const node48& n, unsigned from) {
  std::vector<visit> out;
  for (unsigned d = from; d < 256; ++d)
    if (n.index[d]) out.push_back({d, n.index[d] - 1u});
  return out;
}

node48 random_node(std::mt19937_64& rng, unsigned children) {
  node48 n{};
  std::vector<unsigned> digits(256);
  for (unsigned d = 0; d < 256; ++d) digits[d] = d;
  std::shuffle(digits.begin(), digits.end(), rng);
  for (unsigned s = 0; s < children; ++s) n.index[digits[s]] = uint8_t(s + 1), n.child[s] = s + 1;
  return n;
}

TEST(ArtNode48, WalksNamedDigitsInOrderFromAnyDigit) {
  std::mt19937_64 rng(test::test_seed());
  for (int round = 0; round < 3000; ++round) {
    node48 n = random_node(rng, 1 + unsigned(rng() % 48));
    if (round % 5 == 0) n.index[0] = n.index[15] = n.index[16] = n.index[255] = 0;  // group edges
    if (round % 7 == 0) n.index[15] = 47, n.index[16] = 48, n.index[255] = 46;
    unsigned from = round % 4 == 0 ? 0 : unsigned(rng() % 258);
    ASSERT_EQ(walk(n, from), expected(n, from)) << "round " << round << " from " << from;
    uint64_t* slot = nullptr;
    auto want = expected(n, from);
    int d = node48_ops::next(&n, from, &slot);
    if (want.empty()) {
      ASSERT_EQ(d, -1) << "round " << round << " from " << from;
    } else {
      ASSERT_EQ(d, int(want[0].first)) << "round " << round << " from " << from;
      ASSERT_EQ(slot, &n.child[want[0].second]);
    }
  }
}

TEST(ArtNode48, StopsWhereTheVisitorSays) {
  std::mt19937_64 rng(test::test_seed());
  node48 n = random_node(rng, 48);
  auto all = expected(n, 0);
  for (size_t k = 1; k <= all.size(); ++k) {
    auto got = walk(n, 0, k);
    ASSERT_EQ(got, std::vector<visit>(all.begin(), all.begin() + long(k)));
  }
}

}  // namespace
}  // namespace pmindex::art::detail
