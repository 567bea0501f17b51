// The std::map oracle comparison the index suites share: check(), every
// oracle key looked up, one full scan in key order, the record count. Call
// it under ASSERT_NO_FATAL_FAILURE (a failed ASSERT returns from here only).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "pmindex/index.hpp"

namespace pmindex::test {

inline void expect_matches(index& idx, const std::map<uint64_t, uint64_t>& ref) {
  auto c = idx.check();
  ASSERT_TRUE(c.ok) << c.message;
  for (auto& [k, v] : ref) {
    auto got = idx.lookup(k);
    ASSERT_TRUE(got.has_value()) << "key " << k << " missing";
    ASSERT_EQ(*got, v) << "key " << k;
  }
  std::vector<record> all(ref.size() + 1);
  ASSERT_EQ(idx.scan(0, all.size(), all.data()), ref.size());
  size_t i = 0;
  for (auto& [k, v] : ref) {
    ASSERT_EQ(all[i].key, k) << "scan position " << i;
    ASSERT_EQ(all[i].value, v) << "scan position " << i;
    ++i;
  }
  ASSERT_EQ(idx.stats().records, ref.size());
}

}  // namespace pmindex::test
