// PermART: the common node header, slot encoding and key helpers.
//
// Slots (8 bytes) hold pool offsets; blocks are 16-byte aligned, so the low
// bits are tags:
//   bit 0 UNPERSISTED  the pointer was stored but is not yet durable; readers
//                      wait, recovery clears it (the store was fenced or not:
//                      either way the node it names was persisted first)
//   bit 1 LINK         the offset names a version link (16 bytes: stamp, prev)
//                      standing for null; recovery resets its stamp to 0
// Every node starts with `header` (whose first 16 bytes are the
// sync::version_header), so a slot's history is walked the same way for
// leaves, inner nodes and links.
#pragma once

#include <cstdint>

#include "sync/versioned_ptr.hpp"

namespace pmindex::art::permart::detail {

inline constexpr uint64_t k_unpersisted = 1;
inline constexpr uint64_t k_link = 2;
inline constexpr uint64_t k_tag_mask = 15;
inline constexpr uint64_t k_root_magic = 0x335452414d524550ull;      // "PERMART3"
inline constexpr uint64_t k_root_magic_v2 = 0x5452414d5245502dull;   // "-PERMART": sorted inner nodes, bitmap indirect
inline constexpr uint64_t k_run_shift = 40;  // stamps: run << 40 | counter

// 2-Log entries: meta bits (the word that commits an entry), and the mark
// of a leaf that carries entries (in its header.depth).
inline constexpr uint64_t k_log_valid = 1, k_log_delete = 2, k_log_unpersisted = 4;
inline constexpr uint8_t k_leaf_logged = 1;

inline constexpr uint64_t untag(uint64_t v) { return v & ~k_tag_mask; }
inline constexpr bool is_link(uint64_t v) { return v & k_link; }

enum class kind : uint8_t { root = 1, leaf = 2, sparse = 3, indirect = 4, full = 5 };

// clang-format off
struct header {        // 32 bytes, common to every node
  uint64_t stamp;      //  0  version stamp (volatile; recovery: 0)
  uint64_t prev;       //  8  previous value of the installing slot (volatile; recovery: 0)
  uint64_t prefix;     // 16  inner: key bytes [0, depth) (rest zero); leaf: 0
  uint32_t lock;       // 24  sync::version_lock word (volatile; recovery: 0)
  uint8_t kind;        // 28  detail::kind
  uint8_t depth;       // 29  inner: the key byte this node discriminates (0 = most significant)
  uint8_t count;       // 30  sparse: keys; leaf: pairs
  uint8_t cap;         // 31  leaf: capacity (2 or 14)
};
static_assert(sizeof(header) == 32);

// The pool root (64 bytes). `slot` is the tree's top pointer; `run` numbers
// the opens, so stamps of an earlier run are all below this run's snapshots.
struct root {
  header h;            //  0  kind::root; h.lock guards `slot`
  uint64_t magic;      // 32
  uint64_t run;        // 40  bumped (and persisted) at every open
  uint64_t slot;       // 48  committed by one 8-byte store
  uint64_t spare;      // 56  0; older versions kept a spare version link here
                       //     (still traced; removes now use the pool's reserve)
};
// clang-format on
static_assert(sizeof(root) == 64);

// Version link: a stand-in for a null slot value with its own version.
struct link {
  uint64_t stamp;  // 0
  uint64_t prev;   // 8
};
inline constexpr uint64_t k_link_size = 16;

// --- keys: compared as 8 big-endian bytes, i.e. numerically
inline constexpr unsigned key_byte(uint64_t key, unsigned d) { return (key >> (56 - 8 * d)) & 0xff; }
// Mask of key bytes [0, d).
inline constexpr uint64_t prefix_mask(unsigned d) { return d == 0 ? 0 : ~uint64_t{0} << (64 - 8 * d); }
// First byte where a and b differ (a != b).
inline unsigned first_diff_byte(uint64_t a, uint64_t b) { return __builtin_clzll(a ^ b) / 8; }
// Smallest and largest key below an inner node at depth d with this prefix,
// whose byte d is b.
inline constexpr uint64_t child_min(uint64_t prefix, unsigned d, unsigned b) {
  return (prefix & prefix_mask(d)) | (uint64_t{b} << (56 - 8 * d));
}

inline bool leaf_logged(const header* h) { return h->depth == k_leaf_logged; }

// Applies one log entry (pair e, or the removal of e's key) to a sorted view
// of n pairs, given the first position i whose key is >= e's and whether it
// is e's key; returns the new n. Any pair type (both layouts).
template <class P>
inline unsigned apply_entry(P* kv, unsigned n, unsigned i, bool found, const P& e, bool del) {
  if (del) {
    if (!found) return n;
    for (unsigned j = i; j + 1 < n; ++j) kv[j] = kv[j + 1];
    return n - 1;
  }
  if (found) {
    kv[i] = e;
    return n;
  }
  for (unsigned j = n; j > i; --j) kv[j] = kv[j - 1];
  kv[i] = e;
  return n + 1;
}

}  // namespace pmindex::art::permart::detail
