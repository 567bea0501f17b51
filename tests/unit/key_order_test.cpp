// common/key_order.hpp: key_less, the scans' inline byte-string order, and
// key_prefix, the B-trees' slot word, against std::string_view's operator<
// on keys that stress the fast path's edge: lengths around 8, equal first 8
// bytes, bytes >= 0x80 (an order that read them as signed chars would
// differ), prefixes of each other, and distinct 8-byte keys (the u64 keys'
// case).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/key_order.hpp"
#include "test_seed.hpp"

namespace {

using pmindex::common::key_less;
using pmindex::common::key_prefix;

std::string random_key(std::mt19937_64& rng) {
  static const size_t lengths[] = {0, 1, 7, 8, 8, 8, 9, 12, 16, 17};
  std::string s(lengths[rng() % 10], '\0');
  const bool narrow = rng() % 2;  // few distinct bytes: long shared prefixes
  for (char& c : s) c = char(narrow ? (rng() % 2 ? 0x00 : 0x80) + rng() % 2 : rng() % 256);
  return s;
}

std::vector<std::string> test_keys() {
  std::mt19937_64 rng(pmindex::test::test_seed());
  std::vector<std::string> keys;
  for (int i = 0; i < 400; ++i) keys.push_back(random_key(rng));
  for (size_t i = 0, n = keys.size(); i < n; ++i) {  // each key changed in its last byte, and extended
    std::string t = keys[i];
    if (!t.empty()) t.back() = char(t.back() ^ 0x81);
    keys.push_back(t);
    keys.push_back(t + '\0');
  }
  return keys;
}

TEST(KeyOrder, KeyLessOrdersAsStringView) {
  const std::vector<std::string> keys = test_keys();
  size_t checked = 0;
  for (const std::string& a : keys)
    for (const std::string& b : keys) {
      ASSERT_EQ(key_less(a, b), std::string_view(a) < std::string_view(b))
          << "a=" << testing::PrintToString(a) << " b=" << testing::PrintToString(b);
      ++checked;
    }
  EXPECT_EQ(checked, keys.size() * keys.size());
}

// The prefix is the first 8 bytes, big-endian, zero-padded, and orders like
// the keys: what the B-trees' slots and separators rely on.
TEST(KeyOrder, PrefixIsTheFirstEightBytesInOrder) {
  EXPECT_EQ(key_prefix(""), 0u);
  EXPECT_EQ(key_prefix("a"), 0x6100000000000000ull);
  EXPECT_EQ(key_prefix(std::string_view("\x01\x02\x03\x04\x05\x06\x07\x08\xff", 9)), 0x0102030405060708ull);
  const std::vector<std::string> keys = test_keys();
  for (const std::string& a : keys)
    for (const std::string& b : keys) {
      if (std::string_view(a) > std::string_view(b)) continue;
      ASSERT_LE(key_prefix(a), key_prefix(b)) << "a=" << testing::PrintToString(a) << " b=" << testing::PrintToString(b);
    }
}

}  // namespace
