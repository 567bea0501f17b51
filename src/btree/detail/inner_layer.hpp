// The DRAM inner layer shared by the hybrid B+-trees (FPTree, LB+-Tree): a
// B+-tree of separator keys whose bottom level points at persistent leaves
// (pool offsets). Nothing of it is persisted; every open rebuilds it from
// the leaf chain with build().
//
// Concurrency: writers (leaf splits, 1 in ~C/2 inserts) are serialised by
// one mutex. Readers take no lock: every slot is read and written with
// 8-byte atomic accesses and nodes are never freed while the layer lives, so
// a reader racing with a writer always lands on some real leaf. The answer is
// only a hint: callers validate it with the leaves' fence keys (low key of
// the leaf and of its right sibling), move right along the leaf chain when
// the key lies further right, and retry from the top when it lies left.
// Splits publish the new right node in the parent before shrinking the left
// one, so a hint is at worst a few leaves to the left while a writer runs.
//
// Keys (detail/keys.hpp): u64 separators are one word; a byte separator is
// its prefix word plus a pointer to its bytes, compared only when the
// prefixes tie. The bytes are DRAM copies the layer owns (an arena freed
// with the layer), or with byte_keys::k_dram_separators off, the leaves'
// fence key blocks in the pool. A reader may see a prefix and a pointer of
// two different separators (two 8-byte loads): a wrong hint at worst, as
// every pointer it can see is null (the empty key) or a live copy.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "btree/detail/keys.hpp"

namespace pmindex::btree::detail {

template <class K>
class inner_layer {
 public:
  using key = typename K::key;
  using probe_arg = typename K::probe_arg;

  // `capacity`: separator keys per node (children = capacity + 1), >= 3.
  explicit inner_layer(uint32_t capacity);
  ~inner_layer();
  inner_layer(const inner_layer&) = delete;
  inner_layer& operator=(const inner_layer&) = delete;

  // Replaces the layer by one built bottom-up from the leaf chain:
  // (low fence key, leaf offset) pairs, low keys strictly increasing. Nodes
  // are filled to ~7/8 so the first splits do not cascade. No concurrent use.
  void build(const std::vector<std::pair<key, uint64_t>>& leaves);

  // Lock-free: the leaf whose range holds `key` (a hint, see above), or 0 if
  // the reader met a slot a concurrent writer has not filled yet (retry).
  uint64_t find(probe_arg key) const noexcept;
  // The same for the keys just below `key`: the leaf whose range holds the
  // greatest keys < key (a leaf's left neighbour, asked with its low key).
  uint64_t find_before(probe_arg key) const noexcept;

  // Adds the leaf `off` whose low fence key is `low` (the new right sibling
  // made by a leaf split). Thread-safe (takes the writer mutex). On
  // bad_alloc nothing changed; with `may_lag` (callers whose readers move
  // right past a missing leaf) it does not throw but leaves the layer
  // lagging: no route counts as exact any more (version() stays odd) until
  // the next open rebuilds the layer, and check() accepts a route to a
  // leaf's left.
  void insert(const key& low, uint64_t off, bool may_lag = false);

  // Drops the leaf whose low key is `low` (not the head): its range then
  // routes to the leaf on its left (which absorbed it). The separator is
  // removed from the deepest node holding it, or, when the leaf is the first
  // child under it, replaced by the next separator of that subtree, whose
  // first child is dropped. Racing readers may get a hint one leaf left or
  // right of the exact one (a wrong hint, as with insert()); nothing keeps
  // pointing at the dropped leaf. Nodes are never freed. Thread-safe.
  void erase(const key& low) noexcept;  // never allocates

  // Seqlock word of the layer: odd while insert() modifies it, bumped by 2 per
  // insert. A find() started at an even version v whose caller then sees v
  // again, after taking (or snapshotting) the leaf, got the exact leaf: leaf
  // splits call insert() while they hold the split leaf's lock. Callers use
  // it to skip the fence-key check (a read of the sibling leaf) when no
  // split happened meanwhile.
  // Odd for good once an insert lagged: no route is known exact any more.
  uint64_t version() const noexcept {
    return __atomic_load_n(&version_, __ATOMIC_ACQUIRE) | __atomic_load_n(&lag_, __ATOMIC_RELAXED);
  }

  // Checks node order and that find(low) returns each leaf exactly. No
  // concurrent writers. Empty string when fine.
  std::string check(const std::vector<std::pair<key, uint64_t>>& leaves) const;

  uint64_t dram_bytes() const noexcept { return nodes_.size() * node_bytes() + arena_bytes_; }
  uint64_t nodes() const noexcept { return nodes_.size(); }
  uint32_t height() const noexcept;  // inner levels (>= 1)
  uint32_t capacity() const noexcept { return cap_; }

 private:
  struct node;

 public:
  // A scan's prefetch hints: the leaf offsets in key order. seek() answers
  // as find(); next() names the leaf after the last one named (0 past the
  // last leaf, or when a racing writer left a slot unfilled; it stays 0).
  // As racy as find(): each answer is some leaf's offset or 0. Lock-free;
  // the layer must outlive the cursor (nodes are never freed meanwhile).
  class cursor {
   public:
    uint64_t seek(const inner_layer& layer, probe_arg key) noexcept;
    uint64_t next() noexcept;
    // next() into out[] up to n times or until it answers 0; returns how
    // many it wrote.
    unsigned list(uint64_t* out, unsigned n) noexcept;

   private:
    static constexpr unsigned k_depth = 48;  // > any height: >= 4 children per node
    const inner_layer* l_ = nullptr;
    unsigned depth_ = 0;  // nodes on the path; 0: no more answers
    const node* path_[k_depth];
    uint32_t at_[k_depth];  // the child taken in path_[i]
  };

 private:
  // clang-format off
  struct node {
    uint32_t level;    //  0  1: children are leaf offsets; > 1: node pointers
    uint32_t count;    //  4  separator keys in use; children = count + 1
    uint64_t slot[1];  //  8  key words[cap], children[cap + 1], then (bytes) key refs[cap]
  };
  // clang-format on
  static constexpr uint64_t k_arrays = K::k_refs ? 3 : 2;
  static constexpr std::align_val_t k_node_align{64};  // a node spans the fewest lines
  static constexpr uint64_t k_prefetch_node_bytes = 512;  // find() asks for the lines of nodes up to this size
  uint64_t node_bytes() const noexcept { return 8 + 8 * (k_arrays * uint64_t{cap_} + 1); }
  uint64_t* keys(node* n) const noexcept { return n->slot; }
  uint64_t* kids(node* n) const noexcept { return n->slot + cap_; }
  uint64_t* refs(node* n) const noexcept { return n->slot + 2 * cap_ + 1; }
  const uint64_t* keys(const node* n) const noexcept { return n->slot; }
  const uint64_t* kids(const node* n) const noexcept { return n->slot + cap_; }
  const uint64_t* refs(const node* n) const noexcept { return n->slot + 2 * cap_ + 1; }
  key key_at(const node* n, uint32_t i) const noexcept;
  void set_key(node* n, uint32_t i, const key& k) noexcept;
  key own(const key& k);  // the layer's copy of a separator (bytes)
  node* make(uint32_t level);
  void drop_first(node* n);  // removes child 0 and key 0 (count > 0)
  void clear();
  // Index of the child whose range holds key: the number of keys <= key.
  uint32_t position(const node* n, uint32_t count, probe_arg key) const noexcept;
  // The same, the number of keys < key.
  uint32_t position_before(const node* n, uint32_t count, probe_arg key) const noexcept;
  void insert_at(std::vector<node*>& path, size_t depth, const key& k, uint64_t child);
  std::string check_node(const node* n, const key& lo, bool has_hi, const key& hi) const;

  uint32_t cap_;
  alignas(64) uint64_t version_ = 0;  // own line: read by every operation
  uint64_t lag_ = 0;                  // 1 once an insert lagged (version_'s line)
  alignas(64) node* root_ = nullptr;  // atomic accesses
  std::mutex mu_;         // writers
  std::vector<node*> nodes_;
  // Separator copies (bytes): chunks never freed while the layer lives.
  std::vector<std::unique_ptr<char[]>> arena_;
  uint64_t arena_left_ = 0, arena_bytes_ = 0;
  char* arena_next_ = nullptr;
};

extern template class inner_layer<u64_keys>;
extern template class inner_layer<byte_keys>;

}  // namespace pmindex::btree::detail
