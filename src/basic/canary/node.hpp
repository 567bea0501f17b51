// canary node layout (persistent). Offsets within the pool; bit 0 of a
// level-0 link is the UNPERSISTED tag (blocks are 16-byte aligned).
#pragma once

#include <cstdint>

namespace pmindex::basic::canary::detail {

inline constexpr uint32_t k_max_height = 12;  // p = 1/4: ~16M keys
inline constexpr uint64_t k_unpersisted = 1;
inline constexpr uint64_t k_root_magic = 0x5952414e41432d50;  // "P-CANARY"

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
// torn_16byte mutant: a shadow copy of the value in the node's second line.
inline constexpr uint64_t k_shadow_offset = 64;

}  // namespace pmindex::basic::canary::detail
