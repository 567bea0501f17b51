// PermART leaves: sorted key/value pairs that share the key bytes of their
// path. A plain leaf is immutable once published: every change copies it and
// swings the parent's slot (the one 8-byte word that commits it).
//
// PermART (2-Log) log leaves: a big leaf with two in-node log entries before
// its pairs. An update appends an entry in place (key, value, then meta with
// UNPERSISTED; flush; fence; clear the bit): one fence, no copy. Entry 1 is
// written only after entry 0 is durable. A third update copies the leaf,
// applying both entries and itself (reconciliation), possibly splitting.
#pragma once

#include <cstdint>

#include "node.hpp"

namespace pmindex::art::permart::detail {

// clang-format off
struct pair { uint64_t key, value; };
struct leaf {          // small: 64 bytes (2 pairs); big: 256 bytes (14 pairs)
  header h;            //  0  kind::leaf, count = pairs, cap = 2 or 14, depth = k_leaf_logged or 0
  pair kv[1];          // 32  sorted by key, count used
};
struct log_entry {     // 32 bytes, one cache line half; meta is written last
  uint64_t key;        //  0
  uint64_t value;      //  8
  uint64_t stamp;      // 16  version stamp of the entry (volatile; recovery: 0)
  uint64_t meta;       // 24  k_log_valid | k_log_delete | k_log_unpersisted: commits the entry
};
struct log_leaf {      // 320 bytes
  header h;            //   0  kind::leaf, cap = 14, depth = k_leaf_logged
  log_entry log[2];    //  32  entry 0 in line 0, entry 1 in line 1
  pair kv[14];         //  96  sorted base pairs
};
// clang-format on
static_assert(sizeof(log_leaf) == 320);

inline constexpr unsigned k_small_leaf = 2;
inline constexpr unsigned k_big_leaf = 14;
inline constexpr unsigned k_max_view = k_big_leaf + 2;  // base pairs + 2 log inserts
inline constexpr uint64_t leaf_size(unsigned cap) { return 32 + 16 * uint64_t{cap}; }
inline uint64_t leaf_block_size(const header* h) { return leaf_logged(h) ? sizeof(log_leaf) : leaf_size(h->cap); }
inline pair* leaf_pairs(header* h) {
  return leaf_logged(h) ? reinterpret_cast<log_leaf*>(h)->kv : reinterpret_cast<leaf*>(h)->kv;
}

// The layout as core's leaf templates see it.
struct u64_leaves {
  using pair_t = pair;
  using log_leaf_t = log_leaf;
  static constexpr unsigned k_small = k_small_leaf, k_big = k_big_leaf;
  static uint64_t size(unsigned cap) { return leaf_size(cap); }
  static pair* pairs(header* h) { return leaf_pairs(h); }
};

// Index of the first pair with key >= k (n if none).
inline unsigned lower_bound(const pair* kv, unsigned n, uint64_t k) {
  unsigned i = 0;
  while (i < n && kv[i].key < k) ++i;
  return i;
}

// Applies one log entry to a sorted view of n pairs; returns the new n.
inline unsigned apply_log(pair* kv, unsigned n, uint64_t key, uint64_t value, bool del) {
  unsigned i = lower_bound(kv, n, key);
  return apply_entry(kv, n, i, i < n && kv[i].key == key, pair{key, value}, del);
}

}  // namespace pmindex::art::permart::detail
