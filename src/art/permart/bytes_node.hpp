// PermART keys=bytes layout: byte pairs, their leaves, and the tail every
// byte inner node carries. See permart.hpp ("keys=bytes") for the protocol.
//
// A pair holds a key of up to 16 bytes and a value of up to 8 bytes inline;
// a longer key or value lives in a kv block (common/kv_block.hpp: a key
// block has an empty value, a value block an empty key) that the pair owns.
// A key block is written once, when its key is inserted, and is shared by
// every later copy of the leaf; a value block is replaced by each update.
// Leaves, as in the u64 layout, are immutable once published (2-Log leaves
// take two log entries in place).
#pragma once

#include <cstring>
#include <string_view>

#include "art/permart/core.hpp"
#include "common/kv_block.hpp"
#include "pmindex/util/hash.hpp"

namespace pmindex::art::permart::detail {

inline constexpr uint64_t k_bytes_root_magic = 0x3354524d52455042ull;     // "BPERMRT3"
inline constexpr uint64_t k_bytes_root_magic_v2 = 0x4254524d52455042ull;  // "BPERMRTB": before listed nodes
inline constexpr uint32_t k_inline_key = 16;
inline constexpr uint32_t k_inline_value = 8;
inline constexpr unsigned k_bsmall_leaf = 3;
inline constexpr unsigned k_bbig_leaf = 7;
inline constexpr unsigned k_bmax_view = k_bbig_leaf + 2;  // base pairs + 2 logged inserts

// clang-format off
struct bpair {          // 32 bytes
  uint64_t key[2];      //  0  klen <= 16: the key bytes, zero padded;
                        //     else {key block offset, key_hash(key)}
  uint64_t value;       // 16  vlen <= 8: the value bytes, zero padded; else the value block offset
  uint32_t klen;        // 24
  uint32_t vlen;        // 28
};
struct bleaf {          // small: 128 bytes (3 pairs); big: 256 bytes (7 pairs)
  header h;             //  0  kind::leaf, count = pairs, cap = 3 or 7, depth = 0
  bpair kv[1];          // 32  sorted by key, count used
};
struct blog_entry {     // 64 bytes: one cache line; meta is written last
  bpair kv;             //  0  the pair inserted or updated, or the key removed
  uint64_t stamp;       // 32  version stamp of the entry (volatile; recovery: 0)
  uint64_t meta;        // 40  k_log_valid | k_log_delete | k_log_unpersisted: commits the entry
  uint64_t pad[2];      // 48
};
struct blog_leaf {      // 416 bytes (a 448-byte block)
  header h;             //   0  kind::leaf, cap = 7, depth = k_leaf_logged
  uint64_t pad[4];      //  32
  blog_entry log[2];    //  64  entry j in line j + 1
  bpair kv[k_bbig_leaf];// 192  sorted base pairs
};
// A byte inner node: the block of a u64 inner kind (sparse, indirect, full:
// the same header and children), with header.prefix holding its depth (the
// key byte it discriminates, up to the longest key) and header.depth 0,
// followed at offset inner_size(kind) by
struct inner_tail {
  uint64_t end;         //  0  slot of the one key that ends here (key == prefix): a one-pair
                        //     leaf, a version link or 0; committed like the other slots
  char prefix[8];       //  8  key bytes [0, depth): the node's whole path, fixed at creation
};
// clang-format on
static_assert(sizeof(bpair) == 32 && sizeof(blog_entry) == 64 && sizeof(blog_leaf) == 416);

inline uint64_t bleaf_size(unsigned cap) { return 32 + sizeof(bpair) * uint64_t{cap}; }
inline uint64_t bleaf_block_size(const header* h) { return leaf_logged(h) ? sizeof(blog_leaf) : bleaf_size(h->cap); }
inline bpair* bleaf_pairs(header* h) {
  return leaf_logged(h) ? reinterpret_cast<blog_leaf*>(h)->kv : reinterpret_cast<bleaf*>(h)->kv;
}

struct bytes_leaves {  // the layout as core's leaf templates see it
  using pair_t = bpair;
  using log_leaf_t = blog_leaf;
  static constexpr unsigned k_small = k_bsmall_leaf, k_big = k_bbig_leaf;
  static uint64_t size(unsigned cap) { return bleaf_size(cap); }
  static bpair* pairs(header* h) { return bleaf_pairs(h); }
};

inline uint64_t bdepth(const header* h) { return h->prefix; }
inline inner_tail* btail(header* h) {
  return reinterpret_cast<inner_tail*>(reinterpret_cast<char*>(h) + inner_kind_size(h->kind));
}
inline uint64_t binner_size(uint8_t k, uint64_t depth) { return inner_kind_size(k) + 8 + depth; }

// The hash kept beside a key block's offset: a lookup compares it before
// reading the block. Fixed forever (it is persistent).
inline uint64_t key_hash(std::string_view s) {
  uint64_t h = util::mix64(s.size() + 0x9E3779B97F4A7C15ull);
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = util::mix64(h ^ w);
  }
  uint64_t w = 0;
  if (i < s.size()) std::memcpy(&w, s.data() + i, s.size() - i);
  return util::mix64(h ^ w) | 1;  // never 0
}

// A key as a write or lookup compares it with pairs.
struct bkey {
  std::string_view s;
  uint64_t w[2] = {0, 0};  // inline form (s.size() <= 16) or {0, hash}
  explicit bkey(std::string_view k) : s(k) {
    if (k.size() <= k_inline_key) {
      if (!k.empty()) std::memcpy(w, k.data(), k.size());  // the empty key's data() may be null
    } else {
      w[1] = key_hash(k);
    }
  }
};

// Reads pair contents (kv blocks are read through the pool).
class pair_reader {
 public:
  explicit pair_reader(const pm::pool& p) : p_(p) {}
  std::string_view key(const bpair& kv) const {
    if (kv.klen <= k_inline_key) return {reinterpret_cast<const char*>(kv.key), kv.klen};
    return common::kv_key(p_, kv.key[0]);
  }
  std::string_view value(const bpair& kv) const {
    if (kv.vlen <= k_inline_value) return {reinterpret_cast<const char*>(&kv.value), kv.vlen};
    return common::kv_value(p_, kv.value);
  }
  bool is(const bpair& kv, const bkey& k) const {
    if (kv.klen != k.s.size() || kv.key[1] != k.w[1]) return false;
    return kv.klen <= k_inline_key ? kv.key[0] == k.w[0] : key(kv) == k.s;
  }
  // Index of the first pair with key >= k (n if none).
  unsigned lower_bound(const bpair* kv, unsigned n, std::string_view k) const {
    unsigned i = 0;
    while (i < n && key(kv[i]) < k) ++i;
    return i;
  }
  // The key and value blocks a pair owns (0 for inline parts).
  static uint64_t key_block(const bpair& kv) { return kv.klen > k_inline_key ? kv.key[0] : 0; }
  static uint64_t value_block(const bpair& kv) { return kv.vlen > k_inline_value ? kv.value : 0; }

 private:
  const pm::pool& p_;
};

}  // namespace pmindex::art::permart::detail
