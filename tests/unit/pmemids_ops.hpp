// What the pmemids structures' own suites share: the options of a test
// pool, a key space with byte keys that are prefixes of each other, and
// random operations applied to an index and a std::map oracle alike, and
// the comparison of an ordered structure with that oracle.
// (pmemids_btree_test.cpp predates this header and keeps its own copy.)
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <string>

#include "pmindex/index.hpp"

namespace pmindex::test::pmemids {

using ref_map = std::map<std::string, std::string>;

inline options pool_options(const std::string& index, const std::string& path, pm::mode m, bool bytes) {
  options o;
  o.index = index;
  o.pool_path = path;
  o.pool_size = 64 << 20;
  o.mode = m;
  o.params = bytes ? "keys=bytes" : "";
  o.quiet = true;
  return o;
}

// Key i of the space: u64 keys, or byte keys of 1..13 bytes, many of them
// prefixes of others.
inline std::string key_of(uint64_t i, bool bytes) {
  if (!bytes) return std::string(std::string_view(key_bytes(i * 7919 % 5000)));
  std::string k = std::to_string(i * 7919 % 5000);
  return k.substr(0, 1 + i % k.size()) + std::string(i % 9, static_cast<char>('a' + i % 3));
}

// `ops` random inserts (half), updates and removes over keys [0, space),
// checked against `ref`; `phase()` every 1500 operations.
inline void random_ops(index& idx, ref_map& ref, std::mt19937_64& rng, bool bytes, int ops, uint64_t space,
                       const std::function<void()>& phase) {
  for (int i = 0; i < ops; ++i) {
    std::string k = key_of(rng() % space, bytes);
    std::string v = bytes ? std::string(rng() % 101, static_cast<char>('A' + rng() % 26))
                          : std::string(std::string_view(value_bytes(rng())));
    switch (rng() % 4) {
      case 0:
      case 1: EXPECT_EQ(idx.insert(k, v), ref.emplace(k, v).second) << i; break;
      case 2: {
        bool had = ref.count(k);
        EXPECT_EQ(idx.update(k, v), had) << i;
        if (had) ref[k] = v;
        break;
      }
      default: EXPECT_EQ(idx.remove(std::string_view(k)), ref.erase(k) == 1) << i;
    }
    if (i % 1500 == 0) phase();
  }
}

// An ordered structure holds exactly `ref`: check() passes, a full scan
// returns ref's records in order, and stats() counts them.
inline void compare_scan(index& idx, const ref_map& ref) {
  auto c = idx.check();
  ASSERT_TRUE(c.ok) << c.message;
  record_buffer all;
  idx.scan(std::string_view(""), ref.size() + 10, all);
  ASSERT_EQ(all.size(), ref.size());
  size_t i = 0;
  for (auto& [k, v] : ref) {
    ASSERT_EQ(all.key(i), k) << i;
    ASSERT_EQ(all.value(i), v) << i;
    ++i;
  }
  EXPECT_EQ(idx.stats().records, ref.size());
}

}  // namespace pmindex::test::pmemids
