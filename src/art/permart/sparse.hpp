// PermART sparse inner node: up to 17 children, key bytes sorted. Its key set
// is fixed at creation (adding a key byte copies it); its slots change in
// place under the node's lock. 192 bytes = 3 cache lines.
#pragma once

#include <cstdint>

#include "node.hpp"

namespace pmindex::art::permart::detail {

inline constexpr unsigned k_sparse_cap = 17;

// clang-format off
struct sparse {
  header h;                     //   0  kind::sparse, count = keys
  uint8_t keys[k_sparse_cap];   //  32  sorted
  uint8_t pad[7];               //  49
  uint64_t slots[k_sparse_cap]; //  56  each committed by one 8-byte store
};
// clang-format on
static_assert(sizeof(sparse) == 192);

inline uint64_t* sparse_find(sparse* n, unsigned b) {
  for (unsigned i = 0; i < n->h.count; ++i)
    if (n->keys[i] == b) return &n->slots[i];
  return nullptr;
}

}  // namespace pmindex::art::permart::detail
