// PermART leaves: sorted key/value pairs that share the key bytes of their
// path. Immutable once published: every change copies the leaf and swings
// the parent's slot (the one 8-byte word that commits it).
#pragma once

#include <cstdint>

#include "node.hpp"

namespace pmindex::art::permart::detail {

// clang-format off
struct pair { uint64_t key, value; };
struct leaf {          // small: 64 bytes (2 pairs); big: 256 bytes (14 pairs)
  header h;            //  0  kind::leaf, count = pairs, cap = 2 or 14
  pair kv[1];          // 32  sorted by key, count used
};
// clang-format on

inline constexpr unsigned k_small_leaf = 2;
inline constexpr unsigned k_big_leaf = 14;
inline constexpr uint64_t leaf_size(unsigned cap) { return 32 + 16 * uint64_t{cap}; }
inline constexpr unsigned leaf_cap_for(unsigned n) { return n <= k_small_leaf ? k_small_leaf : k_big_leaf; }

// Index of the first pair with key >= k (count if none).
inline unsigned leaf_lower_bound(const leaf* l, uint64_t k) {
  unsigned i = 0;
  while (i < l->h.count && l->kv[i].key < k) ++i;
  return i;
}

}  // namespace pmindex::art::permart::detail
