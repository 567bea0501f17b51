// common::key_less (src/common/kv_block.hpp), the scans' inline byte-string
// order, against std::string_view's operator< on keys that stress its fast
// path's edge: lengths around 8, equal first 8 bytes, bytes >= 0x80 (an
// order that read them as signed chars would differ), prefixes of each
// other, and distinct 8-byte keys (the u64 keys' case).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/kv_block.hpp"
#include "test_seed.hpp"

namespace {

std::string random_key(std::mt19937_64& rng) {
  static const size_t lengths[] = {0, 1, 7, 8, 8, 8, 9, 12, 16, 17};
  std::string s(lengths[rng() % 10], '\0');
  const bool narrow = rng() % 2;  // few distinct bytes: long shared prefixes
  for (char& c : s) c = char(narrow ? (rng() % 2 ? 0x00 : 0x80) + rng() % 2 : rng() % 256);
  return s;
}

TEST(KeyLess, OrdersAsStringView) {
  std::mt19937_64 rng(pmindex::test::test_seed());
  std::vector<std::string> keys;
  for (int i = 0; i < 400; ++i) keys.push_back(random_key(rng));
  for (size_t i = 0, n = keys.size(); i < n; ++i) {  // each key changed in its last byte, and extended
    std::string t = keys[i];
    if (!t.empty()) t.back() = char(t.back() ^ 0x81);
    keys.push_back(t);
    keys.push_back(t + '\0');
  }
  size_t checked = 0;
  for (const std::string& a : keys)
    for (const std::string& b : keys) {
      ASSERT_EQ(pmindex::common::key_less(a, b), std::string_view(a) < std::string_view(b))
          << "a=" << testing::PrintToString(a) << " b=" << testing::PrintToString(b);
      ++checked;
    }
  EXPECT_EQ(checked, keys.size() * keys.size());
}

}  // namespace
