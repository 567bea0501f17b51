// The std::map oracle comparison the index suites share: check(), every
// oracle key looked up, the record count, one full scan in key order (an
// ordered index). Call
// it under ASSERT_NO_FATAL_FAILURE (a failed ASSERT returns from here only).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pmindex/index.hpp"

namespace pmindex::test {

// An unordered index (index_entry::ordered = false) has no scan.
inline bool ordered(const index& idx) {
  auto e = find_index(idx.name());
  return !e || e->ordered;
}

inline void expect_matches(index& idx, const std::map<uint64_t, uint64_t>& ref) {
  auto c = idx.check();
  ASSERT_TRUE(c.ok) << c.message;
  for (auto& [k, v] : ref) {
    auto got = idx.lookup(k);
    ASSERT_TRUE(got.has_value()) << "key " << k << " missing";
    ASSERT_EQ(*got, v) << "key " << k;
  }
  ASSERT_EQ(idx.stats().records, ref.size());
  if (!ordered(idx)) return;  // no scan: the lookups and the count above
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

namespace pmindex::test {

// The same for byte keys and values: check(), every key looked up, one full
// scan from the empty key (the smallest) in key order, the record count.
inline void expect_matches(index& idx, const std::map<std::string, std::string>& ref) {
  auto c = idx.check();
  ASSERT_TRUE(c.ok) << c.message;
  std::string got;
  for (auto& [k, v] : ref) {
    ASSERT_TRUE(idx.lookup(k, &got)) << "key of " << k.size() << " bytes missing";
    ASSERT_EQ(got.size(), v.size()) << "value size, key of " << k.size() << " bytes";
    ASSERT_TRUE(got == v) << "value, key of " << k.size() << " bytes";
  }
  ASSERT_EQ(idx.stats().records, ref.size());
  if (!ordered(idx)) return;
  record_buffer all;
  ASSERT_EQ(idx.scan(std::string_view(), ref.size() + 1, all), ref.size());
  size_t i = 0;
  for (auto& [k, v] : ref) {
    ASSERT_TRUE(all.key(i) == k) << "scan position " << i;
    ASSERT_TRUE(all.value(i) == v) << "scan position " << i;
    ++i;
  }
  ASSERT_EQ(idx.stats().records, ref.size());
}

}  // namespace pmindex::test
