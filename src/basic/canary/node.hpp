// canary node layouts (persistent). Offsets within the pool; bit 0 of a
// level-0 link (and of a byte node's kv word) is the UNPERSISTED tag (blocks
// are 16-byte aligned, so bit 0 of a real offset is always clear).
#pragma once

#include <cstdint>

#include "common/kv_block.hpp"

namespace pmindex::basic::canary::detail {

inline constexpr uint32_t k_max_height = 12;  // p = 1/4: ~16M keys
inline constexpr uint64_t k_unpersisted = 1;
inline constexpr uint64_t k_root_magic = 0x5952414e41432d50;   // "P-CANARY" (keys=u64)
inline constexpr uint64_t k_broot_magic = 0x4252414e41432d50;  // "P-CANARB" (keys=bytes)

// keys=u64
// clang-format off
struct node {
  uint64_t key;       //  0
  uint64_t value;     //  8  one 8-byte store commits an update
  uint32_t height;    // 16  1..k_max_height, fixed at creation
  uint32_t seq;       // 20  seqlock of value updates (volatile state)
  uint64_t next[1];   // 24  next[0] durable list, next[1..height) hints
};
struct root {
  uint64_t magic;     //  0
  uint64_t reserved;  //  8
  node head;          // 16  key unused; height k_max_height
};
// clang-format on

inline constexpr uint64_t node_size(uint32_t height) { return 24 + 8 * uint64_t{height}; }
inline constexpr uint64_t k_root_size = 16 + node_size(k_max_height);
// torn_16byte mutant: a shadow copy of the value in the node's second line
// (or past its links, whichever is later).
inline constexpr uint64_t k_shadow_offset = 64;

// keys=bytes: the node holds no key; its kv word names an immutable kv block
// {key, value} (src/common/kv_block.hpp). An update writes a new block and
// swings the kv word (the 8-byte store that commits it).
// clang-format off
struct bnode {
  uint64_t kv;        //  0  kv block; bit 0 UNPERSISTED while a swing is not durable
  uint32_t height;    //  8  1..k_max_height, fixed at creation
  uint32_t reserved;  // 12
  uint64_t next[1];   // 16  next[0] durable list, next[1..height) hints
};
struct broot {
  uint64_t magic;     //  0  k_broot_magic
  uint64_t reserved;  //  8
  bnode head;         // 16  kv 0; height k_max_height
};
// clang-format on

inline constexpr uint64_t bnode_size(uint32_t height) { return 16 + 8 * uint64_t{height}; }
inline constexpr uint64_t k_broot_size = 16 + bnode_size(k_max_height);
// The limits of keys=bytes (entry.cpp): recovery rejects a kv block beyond them.
inline constexpr uint64_t k_bytes_max_key = 4096;
inline constexpr uint64_t k_bytes_max_value = common::k_max_value;

// A node height with P(h > i) = 4^-i; the generator's seed comes from a
// thread-local's address (so threads differ; the checker turns address
// randomisation off to replay a history exactly).
inline uint32_t random_height() {
  static thread_local uint64_t s = 0x9E3779B97F4A7C15ull ^ reinterpret_cast<uintptr_t>(&s);
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  uint32_t h = 1;
  uint64_t r = s;
  while (h < k_max_height && (r & 3) == 0) {
    ++h;
    r >>= 2;
  }
  return h;
}

}  // namespace pmindex::basic::canary::detail
