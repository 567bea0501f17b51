// The direct node: one child word per digit value. WORT's only node (16
// children, 4-bit digits) and WOART's Node256. Every change is one 8-byte
// store of a child word.
#pragma once

#include <cstdint>

#include "art/detail/layout.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::art::detail {

// clang-format off
// Fanout 16: 136 bytes (192-byte block); fanout 256: 2056 bytes (2560-byte block).
template <unsigned Fanout>
struct node_direct {
  uint64_t header;         //  0  see layout.hpp
  uint64_t child[Fanout];  //  8  COMMIT WORD per digit: tagged child word, 0 = none
};
// clang-format on

template <unsigned Fanout>
struct direct_ops {
  using node = node_direct<Fanout>;
  static constexpr kind k_kind = k_direct;
  static constexpr uint64_t k_size = sizeof(node);
  static constexpr uint64_t k_eok = k_size;  // keys=bytes: the end-of-key word after the node

  static void init(node* n, uint64_t hdr) {
    *n = node{};
    n->header = hdr;
  }
  static unsigned count(const node* n) {
    unsigned c = 0;
    for (unsigned d = 0; d < Fanout; ++d) c += n->child[d] != 0;
    return c;
  }
  static bool full(const node*) { return false; }

  static uint64_t* find(node* n, unsigned d) {
    return __atomic_load_n(&n->child[d], __ATOMIC_ACQUIRE) ? &n->child[d] : nullptr;
  }

  template <class F>
  static bool for_each(node* n, F&& f, unsigned from = 0) {
    for (unsigned d = from; d < Fanout; ++d)
      if (__atomic_load_n(&n->child[d], __ATOMIC_ACQUIRE) && f(d, &n->child[d])) return true;
    return false;
  }

  static int next(node* n, unsigned from, uint64_t** slot) {
    for (unsigned d = from; d < Fanout; ++d)
      if (__atomic_load_n(&n->child[d], __ATOMIC_ACQUIRE)) return *slot = &n->child[d], int(d);
    return -1;
  }

  static void fresh_add(node* n, unsigned d, uint64_t child) { n->child[d] = child; }

  // The new leaf (flushed by the caller) durable first, then one child word.
  // Cost: 1 flush + the leaf's, 2 fences (the WORT insert of the paper).
  static void add(const pm::pool& p, node* n, unsigned d, uint64_t child) {
    p.fence();
    p.store_persist(&n->child[d], child);  // commit
  }
  static void remove(const pm::pool& p, node* n, unsigned d) { p.store_persist(&n->child[d], 0); }

  static const char* validate(const node*) { return nullptr; }
};

}  // namespace pmindex::art::detail
