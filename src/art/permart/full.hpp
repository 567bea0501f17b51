// PermART full inner node: one slot per key byte (256). Adding or removing a
// child is a store into its slot; the node is never copied. 2080 bytes.
#pragma once

#include <cstdint>

#include "node.hpp"

namespace pmindex::art::permart::detail {

// clang-format off
struct full {
  header h;              //    0  kind::full
  uint64_t slots[256];   //   32  slot b: child with key byte b (0 = none)
};
// clang-format on
static_assert(sizeof(full) == 2080);

inline uint64_t* full_find(full* n, unsigned b) { return &n->slots[b]; }

}  // namespace pmindex::art::permart::detail
