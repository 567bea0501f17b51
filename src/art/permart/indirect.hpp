// PermART indirect inner node: up to 64 children; a 256-bit bitmap of the key
// bytes present and the slots in key order (a child's position is the rank of
// its bit, by popcount). Key set fixed at creation, slots change in place.
// 576 bytes (a 640-byte block).
#pragma once

#include <cstdint>

#include "node.hpp"

namespace pmindex::art::permart::detail {

inline constexpr unsigned k_indirect_cap = 64;

// clang-format off
struct indirect {
  header h;                        //   0  kind::indirect, count = keys
  uint64_t bits[4];                //  32  key byte b present iff bit b set
  uint64_t slots[k_indirect_cap];  //  64  in key order
};
// clang-format on
static_assert(sizeof(indirect) == 576);

inline bool indirect_has(const indirect* n, unsigned b) { return n->bits[b >> 6] >> (b & 63) & 1; }
inline unsigned indirect_rank(const indirect* n, unsigned b) {
  unsigned r = 0;
  for (unsigned w = 0; w < (b >> 6); ++w) r += __builtin_popcountll(n->bits[w]);
  uint64_t below = (b & 63) ? n->bits[b >> 6] & ((uint64_t{1} << (b & 63)) - 1) : 0;
  return r + __builtin_popcountll(below);
}
inline uint64_t* indirect_find(indirect* n, unsigned b) {
  return indirect_has(n, b) ? &n->slots[indirect_rank(n, b)] : nullptr;
}

}  // namespace pmindex::art::permart::detail
