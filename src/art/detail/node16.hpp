// Node16 (WOART, ART+CoW): up to 16 children, appended unsorted into free
// slots; a 16-bit bitmap of valid slots is the commit word.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <emmintrin.h>

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
  // A valid slot's place in the order is the number of valid keys below its
  // own (SSE2: 16 byte compares at once), not a sort: std::sort of the slots
  // was 7% of a WOART scan. Two valid slots with one key (only a damaged
  // pool has them) fall back to the sort.
  template <class F>
  static bool for_each(node* n, F&& f, unsigned from = 0) {
    if (from > 255) return false;
    // The bitmap first (acquire), then the keys: a valid slot's key was
    // written before its bit (min_leaf_word walks beside writers).
    uint32_t valid = uint32_t(load_bitmap(n)) & 0xffff;
    const __m128i flip = _mm_set1_epi8(char(0x80));  // unsigned order through signed compares
    const __m128i keys = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(n->key)), flip);
    if (from) valid &= uint32_t(_mm_movemask_epi8(_mm_cmpgt_epi8(keys, _mm_set1_epi8(char((from - 1) ^ 0x80)))));
    uint8_t order[16];
    uint32_t places = 0;
    for (uint32_t b = valid; b; b &= b - 1) {
      const unsigned s = unsigned(std::countr_zero(b));
      const __m128i mine = _mm_set1_epi8(char(n->key[s] ^ 0x80));
      const unsigned below = unsigned(std::popcount(uint32_t(_mm_movemask_epi8(_mm_cmplt_epi8(keys, mine))) & valid));
      order[below] = uint8_t(s);
      places |= 1u << below;
    }
    const unsigned c = unsigned(std::popcount(valid));
    if (places != (1u << c) - 1) return for_each_sorted(n, f, valid);
    for (unsigned i = 0; i < c; ++i)
      if (f(unsigned(n->key[order[i]]), &n->child[order[i]])) return true;
    return false;
  }
  template <class F>
  static bool for_each_sorted(node* n, F&& f, uint32_t valid) {
    uint16_t sorted[16];  // key << 8 | slot
    unsigned c = 0;
    for (uint32_t b = valid; b; b &= b - 1) {
      unsigned s = unsigned(std::countr_zero(b));
      sorted[c++] = uint16_t(n->key[s] << 8 | s);
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
