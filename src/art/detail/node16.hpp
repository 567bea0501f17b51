// Node16 (WOART, ART+CoW): up to 16 children, appended unsorted into free
// slots; a 16-bit bitmap of valid slots is the commit word.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include "art/detail/layout.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::art::detail {

// clang-format off
// 160 bytes (a 192-byte block, three lines).
struct node16 {
  uint64_t header;     //   0  see layout.hpp
  uint64_t bitmap;     //   8  COMMIT WORD: bit s set = slot s valid (bits 0-15)
  uint8_t key[16];     //  16  partial key of slot s (meaningless when invalid)
  uint64_t child[16];  //  32  tagged child word of slot s
};
// clang-format on

struct node16_ops {
  using node = node16;
  static constexpr kind k_kind = k_n16;
  static constexpr uint64_t k_size = sizeof(node16);
  static constexpr uint64_t k_eok = k_size;  // keys=bytes: the end-of-key word after the node

  static uint64_t load_bitmap(const node* n) { return __atomic_load_n(&n->bitmap, __ATOMIC_ACQUIRE); }
  static void init(node* n, uint64_t hdr) {
    *n = node{};
    n->header = hdr;
  }
  static unsigned count(const node* n) { return unsigned(std::popcount(load_bitmap(n))); }
  static bool full(const node* n) { return load_bitmap(n) == 0xffff; }

  static uint64_t* find(node* n, unsigned d) {
    for (uint64_t b = load_bitmap(n); b; b &= b - 1) {
      unsigned s = unsigned(std::countr_zero(b));
      if (n->key[s] == d) return &n->child[s];
    }
    return nullptr;
  }

  // Ascending digit order from digit `from` on; f(digit, slot) returns true to stop.
  template <class F>
  static bool for_each(node* n, F&& f, unsigned from = 0) {
    uint16_t sorted[16];  // key << 8 | slot
    unsigned c = 0;
    for (uint64_t b = load_bitmap(n); b; b &= b - 1) {
      unsigned s = unsigned(std::countr_zero(b));
      if (n->key[s] >= from) sorted[c++] = uint16_t(n->key[s] << 8 | s);
    }
    std::sort(sorted, sorted + c);
    for (unsigned i = 0; i < c; ++i)
      if (f(unsigned(sorted[i] >> 8), &n->child[sorted[i] & 15])) return true;
    return false;
  }

  static int next(node* n, unsigned from, uint64_t** slot) {
    int best = -1;
    for (uint64_t b = load_bitmap(n); b; b &= b - 1) {
      unsigned s = unsigned(std::countr_zero(b));
      if (n->key[s] >= from && (best < 0 || n->key[s] < best)) best = n->key[s], *slot = &n->child[s];
    }
    return best;
  }

  static void fresh_add(node* n, unsigned d, uint64_t child) {
    unsigned s = unsigned(std::countr_zero(~n->bitmap)) & 15;  // (never full here; & 15 tells the compiler)
    n->key[s] = uint8_t(d);
    n->child[s] = child;
    n->bitmap |= uint64_t{1} << s;
  }

  // In place (WOART): fill a free slot, make it durable with the new leaf
  // (flushed by the caller), then set its bit. The key byte shares line 0
  // with the bitmap and is stored first, so it needs no flush of its own;
  // the child word does when it sits in line 1 or 2. Cost: 1-2 flushes +
  // the leaf's, 2 fences.
  static void add(const pm::pool& p, node* n, unsigned d, uint64_t child) {
    uint64_t b = n->bitmap;
    unsigned s = unsigned(std::countr_zero(~b));
    __atomic_store_n(&n->key[s], uint8_t(d), __ATOMIC_RELEASE);
    __atomic_store_n(&n->child[s], child, __ATOMIC_RELEASE);
    if (s >= 4) p.flush(&n->child[s], 8);  // not in the bitmap's line
    p.fence();
    p.store_persist(&n->bitmap, b | uint64_t{1} << s);  // commit
  }
  static void remove(const pm::pool& p, node* n, unsigned d) {
    uint64_t b = n->bitmap;
    for (uint64_t x = b; x; x &= x - 1) {
      unsigned s = unsigned(std::countr_zero(x));
      if (n->key[s] == d) {
        p.store_persist(&n->bitmap, b & ~(uint64_t{1} << s));  // commit
        return;
      }
    }
  }

  static const char* validate(const node* n) {
    if (n->bitmap >> 16) return "node16 bitmap has bits above 15";
    bool seen[256] = {};
    for (uint64_t b = n->bitmap; b; b &= b - 1) {
      unsigned s = unsigned(std::countr_zero(b));
      if (seen[n->key[s]]) return "node16 holds a partial key twice";
      seen[n->key[s]] = true;
      if (!n->child[s]) return "node16 valid slot without child";
    }
    return nullptr;
  }
};

}  // namespace pmindex::art::detail
