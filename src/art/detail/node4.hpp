// Node4 (WOART, ART+CoW): up to 4 children. Its 4 partial keys, its count
// and its sorted order live in ONE 8-byte word, `meta`, so every in-place
// change (add or remove a child) commits with a single atomic store.
#pragma once

#include <cstdint>

#include "art/detail/layout.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::art::detail {

// clang-format off
// 64 bytes, one cache line (blocks of 64 bytes are line aligned).
struct node4 {
  uint64_t header;    //  0  see layout.hpp
  uint64_t meta;      //  8  COMMIT WORD: bytes 0-3 key of slot 0-3, byte 4 count,
                      //     byte 5 order: 2 bits per rank r = the slot holding
                      //     the r-th smallest key (ranks >= count unused)
  uint64_t child[4];  // 16  tagged child words; slot s valid iff some rank < count names it
  uint64_t pad[2];    // 48  keys=bytes: pad[0] is the end-of-key word (nodes.hpp)
};
// clang-format on

struct node4_ops {
  using node = node4;
  static constexpr kind k_kind = k_n4;
  static constexpr uint64_t k_size = 64;
  static constexpr uint64_t k_eok = 48;  // keys=bytes: the end-of-key word (in the pad)

  static unsigned key_of(uint64_t m, unsigned s) { return unsigned(m >> (8 * s)) & 0xff; }
  static unsigned count_of(uint64_t m) { return unsigned(m >> 32) & 0xff; }
  static unsigned slot_at(uint64_t m, unsigned r) { return unsigned(m >> (40 + 2 * r)) & 3; }
  static uint64_t make_meta(const unsigned* keys, unsigned count, const unsigned* order) {
    uint64_t m = 0;
    for (unsigned s = 0; s < 4; ++s) m |= uint64_t(keys[s] & 0xff) << (8 * s);
    m |= uint64_t(count) << 32;
    for (unsigned r = 0; r < count; ++r) m |= uint64_t(order[r] & 3) << (40 + 2 * r);
    return m;
  }
  static uint64_t load_meta(const node* n) { return __atomic_load_n(&n->meta, __ATOMIC_ACQUIRE); }

  static void init(node* n, uint64_t hdr) {
    *n = node{};
    n->header = hdr;
  }
  static unsigned count(const node* n) { return count_of(load_meta(n)); }
  static bool full(const node* n) { return count(n) == 4; }

  static uint64_t* find(node* n, unsigned d) {
    uint64_t m = load_meta(n);
    for (unsigned r = 0, c = count_of(m); r < c; ++r) {
      unsigned s = slot_at(m, r);
      if (key_of(m, s) == d) return &n->child[s];
    }
    return nullptr;
  }

  // Ascending digit order from digit `from` on; f(digit, slot) returns true to stop.
  template <class F>
  static bool for_each(node* n, F&& f, unsigned from = 0) {
    uint64_t m = load_meta(n);
    for (unsigned r = 0, c = count_of(m); r < c; ++r) {
      unsigned s = slot_at(m, r);
      if (key_of(m, s) >= from && f(key_of(m, s), &n->child[s])) return true;
    }
    return false;
  }

  // The smallest digit >= from that has a child (its slot in *slot), or -1.
  static int next(node* n, unsigned from, uint64_t** slot) {
    uint64_t m = load_meta(n);
    for (unsigned r = 0, c = count_of(m); r < c; ++r) {
      unsigned s = slot_at(m, r);
      if (key_of(m, s) >= from) return *slot = &n->child[s], int(key_of(m, s));
    }
    return -1;
  }

  // The meta word with (d -> slot s) added, s a free slot.
  static uint64_t meta_with(uint64_t m, unsigned d, unsigned* slot_out) {
    unsigned keys[4], order[4], c = count_of(m);
    bool used[4] = {};
    for (unsigned s = 0; s < 4; ++s) keys[s] = key_of(m, s);
    for (unsigned r = 0; r < c; ++r) used[order[r] = slot_at(m, r)] = true;
    unsigned s = 0;
    while (used[s]) ++s;
    unsigned r = c;
    while (r > 0 && keys[order[r - 1]] > d) {
      order[r] = order[r - 1];
      --r;
    }
    order[r] = s;
    keys[s] = d;
    *slot_out = s;
    return make_meta(keys, c + 1, order);
  }
  static uint64_t meta_without(uint64_t m, unsigned d) {
    unsigned keys[4], order[4], c = count_of(m), k = 0;
    for (unsigned s = 0; s < 4; ++s) keys[s] = key_of(m, s);
    for (unsigned r = 0; r < c; ++r) {
      unsigned s = slot_at(m, r);
      if (keys[s] != d) order[k++] = s;
    }
    return make_meta(keys, k, order);
  }

  // Unpublished node being built: plain stores, the caller persists it whole.
  static void fresh_add(node* n, unsigned d, uint64_t child) {
    unsigned s;
    n->meta = meta_with(n->meta, d, &s);
    n->child[s] = child;
  }

  // In place (WOART). The new leaf (flushed by the caller) must be durable
  // before the commit, hence the fence first. The child word and the meta
  // word share the node's single line and the child is stored first, so any
  // state of that line a crash can leave with the new meta also holds the
  // child: no fence between them. Cost: 1 flush + the leaf's, 2 fences.
  static void add(const pm::pool& p, node* n, unsigned d, uint64_t child) {
    p.fence();
    unsigned s;
    uint64_t m = meta_with(n->meta, d, &s);
    __atomic_store_n(&n->child[s], child, __ATOMIC_RELEASE);
    __atomic_store_n(&n->meta, m, __ATOMIC_RELEASE);  // commit
    p.persist(&n->meta, 8);
  }
  static void remove(const pm::pool& p, node* n, unsigned d) {
    p.store_persist(&n->meta, meta_without(n->meta, d));  // commit
  }

  static const char* validate(const node* n) {
    uint64_t m = n->meta;
    unsigned c = count_of(m);
    if (c > 4) return "node4 count above 4";
    bool used[4] = {};
    for (unsigned r = 0; r < c; ++r) {
      unsigned s = slot_at(m, r);
      if (used[s]) return "node4 order names a slot twice";
      used[s] = true;
      if (r && key_of(m, slot_at(m, r - 1)) >= key_of(m, s)) return "node4 keys not sorted";
      if (!n->child[s]) return "node4 valid slot without child";
    }
    return nullptr;
  }
};

}  // namespace pmindex::art::detail
