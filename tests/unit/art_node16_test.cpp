// WOART / ART+CoW Node16's ordered walk (src/art/detail/node16.hpp): the
// slot order comes from counting smaller keys with SSE2 byte compares, which
// must order bytes as unsigned (0x80 and above after 0x7f) and start at a
// digit. Checked against std::sort on random nodes. A damaged node with two
// valid slots holding one key falls back to sorting and still visits every
// valid slot once.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "art/detail/node16.hpp"
#include "test_seed.hpp"

namespace pmindex::art::detail {
namespace {

std::vector<std::pair<unsigned, unsigned>> walk(node16& n, unsigned from) {  // (digit, slot)
  std::vector<std::pair<unsigned, unsigned>> out;
  node16_ops::for_each(
      &n,
      [&](unsigned d, uint64_t* s) {
        out.push_back({d, unsigned(s - n.child)});
        return false;
      },
      from);
  return out;
}

TEST(ArtNode16, WalksValidSlotsInUnsignedDigitOrder) {
  std::mt19937_64 rng(test::test_seed());
  for (int round = 0; round < 2000; ++round) {
    node16 n{};
    std::vector<unsigned> digits(256);
    for (unsigned d = 0; d < 256; ++d) digits[d] = d;
    std::shuffle(digits.begin(), digits.end(), rng);
    if (round % 4 == 0) digits[0] = 0x7f, digits[1] = 0x80, digits[2] = 0, digits[3] = 0xff;  // the sign edge
    for (unsigned s = 0; s < 16; ++s) n.key[s] = uint8_t(digits[s]), n.child[s] = s + 1;
    n.bitmap = rng() & 0xffff;
    unsigned from = round % 3 == 0 ? 0 : unsigned(rng() % 258);
    std::vector<std::pair<unsigned, unsigned>> want;
    for (unsigned s = 0; s < 16; ++s)
      if (n.bitmap >> s & 1 && n.key[s] >= from) want.push_back({n.key[s], s});
    std::sort(want.begin(), want.end());
    ASSERT_EQ(walk(n, from), want) << "round " << round << " from " << from;
  }
}

TEST(ArtNode16, DuplicateKeysOfADamagedNodeAreAllVisited) {
  node16 n{};
  for (unsigned s = 0; s < 16; ++s) n.key[s] = uint8_t(200 - s), n.child[s] = s + 1;
  n.key[5] = n.key[9];  // two valid slots with one key
  n.bitmap = 0xffff;
  auto got = walk(n, 0);
  ASSERT_EQ(got.size(), 16u);
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
  std::vector<unsigned> slots;
  for (auto& [d, s] : got) slots.push_back(s);
  std::sort(slots.begin(), slots.end());
  for (unsigned s = 0; s < 16; ++s) EXPECT_EQ(slots[s], s);
}

}  // namespace
}  // namespace pmindex::art::detail
