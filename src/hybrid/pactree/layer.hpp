// PACTree's search layer: a persistent radix tree in the pool from the data
// nodes' anchors (their min keys, as bytes: a u64 anchor is its 8 big-endian
// bytes) to the data nodes. The original keeps a persistent ART (ROWEX) here
// so that a restart finds it ready; so does this one: a clean open reads
// nothing, a dirty open redoes only the SMOs its logs name (tree.cpp).
//
// Shape (an ART: one key byte per level, path compression, node sizes that
// adapt): an inner node branches on the key byte at its `depth` and stores
// the bytes [depth - plen, depth) before it (absolute positions: a node put
// above it by a prefix split never rewrites it; readers compare those bytes
// again, which is harmless). A SORTED node holds up to 48 children as
// ascending branch bytes + child words; a DIRECT node 256 child words by
// byte. An END-OF-KEY word names the anchor that ends at `depth` (a byte key
// may be a proper prefix of another; the empty anchor of the head node sits
// there). A leaf is a word naming the data node (offset | 1); its key is the
// node's anchor, read from the node.
//
// Writes: ONE writer at a time (the SMO thread, or recovery before it runs).
// Nodes are immutable once published except their child and end-of-key
// words. Every change is one 8-byte store made durable after what it
// publishes is (flush, fence; then store, flush, fence):
//   a leaf into an empty child / end-of-key word: 1 flush, 1 fence;
//   a new byte in a sorted node: a copy with it (the kind grows to direct
//     past 48), then the parent's word swung: size/64 + 1 flushes, 2 fences;
//     the old node retired through the epochs;
//   a new branch (two anchors split at their first differing byte) or a
//     prefix split: a new 2-child node, then the parent's word swung;
//   erase: the leaf's word zeroed in place (1, 1): nothing is allocated, so
//     a merge's erase never waits for room. Emptied nodes stay (a copy drops
//     zeroed words).
// A crash leaves the layer as before or after one change; blocks built and
// not linked are reclaimed by tracing. An insert takes at most one new
// block: the caller passes a block of spare_size() bytes it reserved, used
// when the pool has no room for the exact one (a node records the size of
// the block it sits in), so a full pool never leaves an anchor out.
//
// Reads: lock-free; every word is read once with an 8-byte atomic load, a
// node replaced meanwhile stays readable (readers are pinned), so a reader
// sees some state of each node it visits: the answer is a HINT (the data
// layer checks it against the node's anchor and next link, tree.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/atomics.hpp"
#include "common/mutant.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::hybrid::pactree {

// clang-format off
struct lnode {
  uint16_t kind;    //  0  k_sorted / k_direct (0: never written)
  uint16_t count;   //  2  sorted: children in use; direct: 256
  uint16_t plen;    //  4  prefix bytes: the key bytes [depth - plen, depth)
  uint16_t pad;     //  6
  uint32_t depth;   //  8  the branch byte's position
  uint32_t bytes;   // 12  the block's size as allocated (>= what the node needs)
  uint64_t eok;     // 16  leaf word of the anchor ending at depth (0: none)
  uint64_t child[1];// 24  [count] (sorted) or [256] (direct); sorted: then the
                    //     branch bytes [count], ascending; then the prefix [plen]
};
// clang-format on

// A: the anchor of a data node, as bytes:
//   static std::string_view of_node(const pm::pool&, uint64_t node, char* buf8);
template <class A>
class search_layer {
 public:
  static constexpr uint16_t k_sorted = 1, k_direct = 2;
  static constexpr unsigned k_sorted_max = 48;
  static constexpr size_t k_header = offsetof(lnode, child);

  explicit search_layer(pm::pool& p) : p_(p) {}
  void attach(uint64_t* root) noexcept { root_ = root; }
  // The mutant `layer_unflushed` publishes new layer nodes unflushed.
  void skip_flushes(bool on) noexcept { unflushed_ = on; }

  // The largest block one insert makes (a sorted node of 48 grown direct).
  static size_t spare_size(size_t anchor_len) noexcept { return k_header + 8 * 256 + anchor_len; }
  // The word naming a data node (a leaf).
  static uint64_t leaf_word(uint64_t node) noexcept { return node | 1; }

  // --- readers (pinned)
  // The data node with the greatest anchor <= k; 0 when the layer has none
  // (or a racing change hid it: retry).
  uint64_t find(std::string_view k) const;

  // --- the one writer
  enum class put { placed, placed_in_spare, no_room };
  // Adds `node` under its anchor `a` (replacing a leaf of the same anchor).
  // `spare`: a block of spare_size(a.size()) bytes, or 0; the caller frees
  // it unless the answer is placed_in_spare.
  put insert(std::string_view a, uint64_t node, uint64_t spare);
  // Zeroes the leaf naming `node` under `a`; false if there is none.
  bool erase(std::string_view a, uint64_t node);
  // The word holding `node`'s leaf under `a` (nullptr: absent). Writer or
  // quiescent.
  uint64_t* slot_of(std::string_view a, uint64_t node) const;

  // --- quiescent (no writer): every block checked before it is read
  // Adds every layer block to `blocks` (offset, size); appends each leaf's
  // data node to `leaves` in key order. Throws errc::corrupt naming `who`.
  // `allocated`: each block must be allocated (not while tracing rebuilds
  // the heap).
  void walk(std::vector<std::pair<uint64_t, uint64_t>>& blocks, std::vector<uint64_t>& leaves, const char* who,
            bool allocated) const;
  // Empty when the layer maps exactly `nodes` (the list, in order) and each
  // leaf is found under its node's anchor.
  std::string check(const std::vector<uint64_t>& nodes) const;

 private:
  static bool is_leaf(uint64_t w) noexcept { return w & 1; }
  static uint64_t target(uint64_t w) noexcept { return w & ~uint64_t{1}; }
  lnode* at(uint64_t w) const noexcept { return p_.template ptr<lnode>(w); }
  static uint8_t* branch(lnode* n) noexcept { return reinterpret_cast<uint8_t*>(n->child + n->count); }
  static const uint8_t* branch(const lnode* n) noexcept { return reinterpret_cast<const uint8_t*>(n->child + n->count); }
  static const char* prefix(const lnode* n) noexcept {
    return reinterpret_cast<const char*>(n->child) + (n->kind == k_direct ? 8 * 256 : 9 * size_t{n->count});
  }
  static size_t need(uint16_t kind, unsigned count, unsigned plen) noexcept {
    return k_header + (kind == k_direct ? 8 * 256 : 9 * size_t{count}) + plen;
  }
  std::string_view anchor(uint64_t leaf, char* buf) const noexcept { return A::of_node(p_, target(leaf), buf); }

  // Exact child word of byte b (nullptr: none).
  static uint64_t* child_slot(lnode* n, unsigned b) noexcept;
  // The greatest leaf at or under w (0: none); below byte b of node n.
  uint64_t max_of(uint64_t w) const noexcept;
  uint64_t max_below(const lnode* n, unsigned b) const noexcept;

  // A new node (from the pool, else in `spare`), filled by the caller.
  lnode* make(uint16_t kind, unsigned count, uint32_t depth, std::string_view pfx, uint64_t& spare, put& how);
  void publish(uint64_t* slot, lnode* n);  // durable, then the one store
  void walk_rec(uint64_t w, int parent_depth, std::vector<std::pair<uint64_t, uint64_t>>& blocks,
                std::vector<uint64_t>& leaves, std::unordered_set<uint64_t>& seen, const char* who,
                bool allocated) const;

  pm::pool& p_;
  uint64_t* root_ = nullptr;
  bool unflushed_ = false;
};

}  // namespace pmindex::hybrid::pactree

#include "hybrid/pactree/layer_impl.hpp"
