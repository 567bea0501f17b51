// Node48 (WOART, ART+CoW): up to 48 children. A 256-entry index maps a
// digit to a child slot; the index byte is the commit: the child word is
// written and persisted first, then the byte. Free slots are the ones no
// index byte names (so a child word left behind by a crash is harmless).
#pragma once

#include <immintrin.h>

#include <bit>
#include <cstdint>

#include "art/detail/layout.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::art::detail {

// clang-format off
// 648 bytes (a 768-byte block).
struct node48 {
  uint64_t header;     //   0  see layout.hpp
  uint8_t index[256];  //   8  COMMIT BYTE per digit: 0 = none, s + 1 = child[s]
  uint64_t child[48];  // 264  tagged child words
};
// clang-format on

struct node48_ops {
  using node = node48;
  static constexpr kind k_kind = k_n48;
  static constexpr uint64_t k_size = sizeof(node48);
  static constexpr uint64_t k_eok = k_size;  // keys=bytes: the end-of-key word after the node

  static unsigned idx(const node* n, unsigned d) { return __atomic_load_n(&n->index[d], __ATOMIC_ACQUIRE); }
  static void init(node* n, uint64_t hdr) {
    *n = node{};
    n->header = hdr;
  }
  static unsigned count(const node* n) {
    unsigned c = 0;
    for (unsigned d = 0; d < 256; ++d) c += n->index[d] != 0;
    return c;
  }
  static bool full(const node* n) { return count(n) == 48; }

  static uint64_t* find(node* n, unsigned d) {
    unsigned i = idx(n, d);
    return i ? &n->child[i - 1] : nullptr;
  }

  // The digits from `base` to base + 15 that name a child, as a bit mask: 16
  // index bytes compared at once (SSE2). A Node48 names at most 48 of its
  // 256 digits, and testing them one by one mispredicts a branch per child
  // (perf: a third of a WOART scan100 at 10K records). Only where to look:
  // the walks read a named digit's byte again (acquire) before its child.
  static uint32_t named(const node* n, unsigned base) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(n->index + base));
    return ~uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()))) & 0xffff;
  }

  // Ascending digit order from digit `from` on; f(digit, slot) returns true to stop.
  template <class F>
  static bool for_each(node* n, F&& f, unsigned from = 0) {
    for (unsigned base = from & ~15u; base < 256; base += 16)
      for (uint32_t m = named(n, base) & (0xffffu << (from > base ? from - base : 0)); m; m &= m - 1) {
        const unsigned d = base + unsigned(std::countr_zero(m));
        if (unsigned i = idx(n, d); i && f(d, &n->child[i - 1])) return true;
      }
    return false;
  }

  static int next(node* n, unsigned from, uint64_t** slot) {
    int d = -1;
    for_each(n, [&](unsigned dd, uint64_t* s) { return *slot = s, d = int(dd), true; }, from);
    return d;
  }

  static unsigned free_slot(const node* n) {
    uint64_t used = 0;
    for (unsigned d = 0; d < 256; ++d)
      if (n->index[d]) used |= uint64_t{1} << (n->index[d] - 1);
    return unsigned(std::countr_zero(~used));
  }

  static void fresh_add(node* n, unsigned d, uint64_t child) {
    unsigned s = free_slot(n);
    n->child[s] = child;
    n->index[d] = uint8_t(s + 1);
  }

  // In place: child word (with the new leaf, flushed by the caller)
  // durable, then the index byte. Cost: 2 flushes + the leaf's, 2 fences.
  static void add(const pm::pool& p, node* n, unsigned d, uint64_t child) {
    unsigned s = free_slot(n);
    __atomic_store_n(&n->child[s], child, __ATOMIC_RELEASE);
    p.flush(&n->child[s], 8);
    p.fence();
    __atomic_store_n(&n->index[d], uint8_t(s + 1), __ATOMIC_RELEASE);  // commit
    p.persist(&n->index[d], 1);
  }
  static void remove(const pm::pool& p, node* n, unsigned d) {
    __atomic_store_n(&n->index[d], uint8_t(0), __ATOMIC_RELEASE);  // commit
    p.persist(&n->index[d], 1);
  }

  static const char* validate(const node* n) {
    uint64_t used = 0;
    for (unsigned d = 0; d < 256; ++d) {
      unsigned i = n->index[d];
      if (!i) continue;
      if (i > 48) return "node48 index byte above 48";
      if (used >> (i - 1) & 1) return "node48 slot named twice";
      used |= uint64_t{1} << (i - 1);
      if (!n->child[i - 1]) return "node48 indexed slot without child";
    }
    return nullptr;
  }
};

}  // namespace pmindex::art::detail
