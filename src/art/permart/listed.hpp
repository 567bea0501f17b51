// PermART listed inner nodes: a child's key byte and its slot at the same
// position of two arrays, the first `count` positions in use, in no
// particular order (a node is built sorted; later children go after):
//   sparse    up to 17 children, 192 bytes (3 cache lines)
//   indirect  up to 64 children, 608 bytes (a 640-byte block)
// A slot changes in place under the node's lock, as a full node's does. A new
// key byte is added in place too, while there is room (core::add_child): its
// leaf, key byte and slot become durable before the count that names them,
// so a copy of the node (3 or 10 lines and a block, the whole cost of most
// inserts at 1M random keys) is needed only when it is full. Readers load
// the count once (acquire) and read only positions below it.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "node.hpp"

namespace pmindex::art::permart::detail {

// clang-format off
template <unsigned Cap>
struct listed {
  static constexpr unsigned k_cap = Cap;
  header h;                        //  0  kind::sparse or kind::indirect, count = children
  uint8_t keys[Cap];               // 32  distinct; position i is slots[i]'s byte
  alignas(8) uint64_t slots[Cap];  //     each committed by one 8-byte store
};
// clang-format on
using sparse = listed<17>;
using indirect = listed<64>;
static_assert(sizeof(sparse) == 192 && offsetof(sparse, slots) == 56);
static_assert(sizeof(indirect) == 608 && offsetof(indirect, slots) == 96);
inline constexpr unsigned k_sparse_cap = sparse::k_cap;
inline constexpr unsigned k_indirect_cap = indirect::k_cap;

// The positions in use: what a writer published (acquire: the keys and slots
// below it were written first), never more than the node holds (a damaged
// count reads no further than the node).
template <unsigned Cap>
inline unsigned listed_count(const listed<Cap>* n) {
  return std::min<unsigned>(__atomic_load_n(&n->h.count, __ATOMIC_ACQUIRE), Cap);
}

// The slot of key byte b, or null. 16 key bytes per compare; bytes past the
// count (the rest of the node: padding, slot words) are masked off.
template <unsigned Cap>
inline uint64_t* listed_find(listed<Cap>* n, unsigned b) {
  const unsigned c = listed_count(n);
  const __m128i want = _mm_set1_epi8(char(b));
  for (unsigned i = 0; i < c; i += 16) {
    __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(n->keys + i));
    unsigned m = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(k, want)));
    if (c - i < 16) m &= (1u << (c - i)) - 1;
    if (m) return &n->slots[i + unsigned(__builtin_ctz(m))];
  }
  return nullptr;
}

// f(byte, slot) for the children of positions [0, c) with byte >= from, in
// key order, for a node whose bytes are not sorted: the bytes as a 256-bit
// set with each one's position, then the set in order (no sort: appended
// bytes are random, and a scan walks each node it passes through twice,
// prefetch and walk). Out of line: its arrays stay off the stack of deep
// walks (recovery and check() recurse once per level; key chains are deep).
template <unsigned Cap, class F>
[[gnu::noinline]] bool listed_each_unsorted(listed<Cap>* n, unsigned c, unsigned from, F& f) {
  uint64_t set[4] = {};
  uint8_t pos[256];  // read only for the bytes in set
  for (unsigned i = 0; i < c; ++i) {
    unsigned k = n->keys[i];
    set[k >> 6] |= uint64_t{k >= from} << (k & 63);
    pos[k] = uint8_t(i);
  }
  for (unsigned w = from >> 6; w < 4; ++w)
    for (uint64_t m = set[w]; m; m &= m - 1) {
      unsigned b = w * 64 + unsigned(__builtin_ctzll(m));
      if (!f(b, &n->slots[pos[b]])) return false;
    }
  return true;
}

// f(byte, slot) for the children with byte >= from, in key order; false
// from f stops (and is returned).
template <unsigned Cap, class F>
inline bool listed_each_from(listed<Cap>* n, unsigned from, F&& f) {
  const unsigned c = listed_count(n);
  for (unsigned i = 1; i < c; ++i)
    if (n->keys[i - 1] > n->keys[i]) return listed_each_unsorted(n, c, from, f);
  for (unsigned i = 0; i < c; ++i)
    if (n->keys[i] >= from && !f(unsigned(n->keys[i]), &n->slots[i])) return false;
  return true;
}

// A listed node's key bytes are distinct ("" if so).
template <unsigned Cap>
inline const char* listed_check(const listed<Cap>* n) {
  if (n->h.count == 0 || n->h.count > Cap) return "bad inner node count";
  uint64_t seen[4] = {};
  for (unsigned i = 0; i < n->h.count; ++i) {
    unsigned k = n->keys[i];
    if (seen[k >> 6] >> (k & 63) & 1) return "inner node lists a key byte twice";
    seen[k >> 6] |= uint64_t{1} << (k & 63);
  }
  return "";
}

}  // namespace pmindex::art::permart::detail
