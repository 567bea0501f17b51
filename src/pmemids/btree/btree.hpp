// pmemids `btree`: the B-tree of "Performance study of Optane DC from indexing
// data structures' perspective" (pmemids_bench, MSST'20): values embedded in
// the nodes, minimum degree t = 9 (8..17 records a node, the root 0..17),
// linear in-node search, proactive (top-down) splits. Single-threaded: the
// harness runs it behind its global lock or one instance per thread.
//
// Node (node_bytes = 152 + 17 * rec bytes; rec = key word(s) + meta + value
// slot: 24 bytes for keys=u64, 24 + the slot for keys=bytes):
//     0  uint32_t n            records in use
//     4  uint32_t leaf         1 for a leaf
//     8  uint64_t child[18]    pool offsets (internal nodes)
//   152  record[17]            key word (keys=bytes: two), meta word (front.hpp), value
// Root block: magic, tree (offset of the root node; the word that commits a
// new root), value slot, key kind.
//
// Remove is the CLRS delete (remove.cpp): rotations and merges keep every
// non-root node at >= 8 records; an emptied internal root gives way to its
// one child. (Pools written before removes merged may hold dead records,
// meta word not live: readers skip them, an insert of the key revives one.)
//
// Crash consistency, flushes (F, in lines) and fences per operation:
//   persist: out of place. An insert copies its leaf with the record added
//     (F = node lines + 1, 2 fences: the copy, then the 8-byte store of the
//     parent's child word or of the root word); a split builds the two halves
//     and a copy of the parent (3 nodes flushed, 2 fences, one 8-byte store).
//     keys=u64 update: one 8-byte value store (F 1, 1 fence); keys=bytes
//     update copies the node like an insert.
//   tx: in place under an undo-log transaction (pm/tx.hpp): an insert saves
//     the node header and the records it shifts (2 log entries: F = their
//     lines, 2 fences), then commit flushes the changed lines, fences, and
//     stores the log's word (F 1, 1 fence): 4 fences; a split logs the parent
//     range and the child's header and allocates the right half in the
//     transaction. keys=bytes update: one logged record. keys=u64 update
//     stays an 8-byte store.
//   remove, persist: a path copy from the commit node (the highest node
//     it changes) down to the leaf, plus a sibling per rotation, flushed,
//     one fence, one 8-byte store (flush, fence) of the commit node's slot:
//     2 fences; a remove from a leaf that can spare a record copies the leaf
//     alone (F = node lines + 1). Full pools: k_remove_reserve blocks kept.
//   remove, tx: in place; each node changed is saved whole (its used bytes)
//     once, 1 fence each, then commit (2 fences): a leaf remove is 3 fences.
//   both: reviving a dead record (old pools) writes its value slot,
//     persists it, then stores the meta word (2 fences).
// btree-ref (the same code, by_ref): the study's B-tree with values
// referenced by pointer. A record's value slot is the offset of a value
// block of its own (8-byte length, then the bytes; any length up to 1 MiB
// with keys=bytes), so nodes stay small (24 bytes a record) whatever the
// values. The block is written and flushed before the fence that precedes
// the store linking it (insert: the leaf copy's publish; update: the slot),
// and freed with its record (remove) or when replaced (update).
//   persist: insert as btree + the block's lines (same 2 fences); update:
//     a new block, fence, one 8-byte store of the slot (F = block lines +
//     1, 2 fences); remove as btree, the block freed after the commit.
//   tx: insert as btree (the block allocated in the transaction); update:
//     the slot saved, the block allocated in the transaction, commit: 3
//     fences; remove as btree, the block freed at commit.
// Recovery: nothing to repair (tx: the pool rolled the log back before);
// tracing reclaims blocks a crash left unlinked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/mutant.hpp"
#include "pmemids/detail/front.hpp"
#include "pmemids/detail/root.hpp"
#include "pmindex/alloc/size_classes.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/pm/tx.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids::btree {

// In the order of the mutant lists (tests.cpp): btree lists the first three, btree-ref all five.
enum class mutant : unsigned {
  none,
  publish_before_flush,
  tx_unlogged_shift,
  tx_unlogged_merge,
  value_not_flushed,
  tx_value_outside,
};

inline constexpr uint32_t k_t = 9;               // minimum degree
inline constexpr uint32_t k_max = 2 * k_t - 1;   // records a node
inline constexpr uint64_t k_root_magic = 0x45455254425f4950;      // "PI_BTREE"
inline constexpr uint64_t k_root_magic_ref = 0x46455254425f4950;  // "PI_BTREF"
// Nodes one copy-on-write remove may allocate before it frees any: the
// commit node and, per level below it, the child and one sibling (a tree
// of a 2^40-byte pool is at most 13 levels deep: internal nodes other than
// the root have >= 9 children).
inline constexpr uint32_t k_remove_reserve = 32;
inline constexpr uint32_t k_max_ref_value = 1 << 20;  // btree-ref, keys=bytes

struct node {
  uint32_t n;
  uint32_t leaf;
  uint64_t child[k_max + 1];
};
static_assert(sizeof(node) == 152);

// The longest embedded value (`value=`, keys=bytes): a node of 17 records of
// a 16-byte key, its length word and the value slot stays a small block
// (alloc::k_max_small), the size the pool keeps back for copy-on-write
// removes. 208: 152 + 17 * (16 + 8 + 208) = 4096.
inline constexpr uint32_t k_max_embedded_value = 208;
static_assert(sizeof(node) + k_max * (16 + 8 + k_max_embedded_value) <= alloc::k_max_small);

class tree {
 public:
  // by_ref: btree-ref (values in blocks of their own; see below).
  tree(pm::pool& p, open_kind k, const index_config& c, bool by_ref = false);
  bool insert(key k, const char* v, uint32_t n);
  bool update(key k, const char* v, uint32_t n);
  bool remove(key k);
  const char* find(key k, uint32_t* n) const;
  template <class F>
  void scan(key from, F&& f) const {
    walk(node_at(root_->tree), from, f);
  }
  check_result check();
  void trace(pm::pool::trace_sink& s);
  index_stats stats();
  uint32_t max_value() const noexcept { return max_value_; }

 private:
  struct rec {
    uint64_t* key;
    uint64_t* meta;
    char* value;
  };
  node* node_at(uint64_t off) const { return p_.ptr<node>(off); }
  char* rec_at(node* x, uint32_t i) const { return reinterpret_cast<char*>(x) + sizeof(node) + i * rec_; }
  // Record: key word(s) (kw_ bytes: 8 for keys=u64, 16 for keys=bytes),
  // meta word, value slot.
  key key_at(node* x, uint32_t i) const {
    auto* r = reinterpret_cast<uint64_t*>(rec_at(x, i));
    return {r[0], kw_ == 16 ? r[1] : 0, meta_klen(r[kw_ / 8])};
  }
  uint64_t& meta_at(node* x, uint32_t i) const { return reinterpret_cast<uint64_t*>(rec_at(x, i))[kw_ / 8]; }
  char* value_at(node* x, uint32_t i) const { return rec_at(x, i) + kw_ + 8; }
  // btree-ref: the record's value slot is the offset of its value block
  // (uint64_t length, then the bytes).
  uint64_t& ref_at(node* x, uint32_t i) const { return *reinterpret_cast<uint64_t*>(value_at(x, i)); }
  const char* value_of(node* x, uint32_t i, uint32_t* n) const {
    if (!by_ref_) return *n = meta_vlen(meta_at(x, i)), value_at(x, i);
    const char* b = p_.ptr<char>(ref_at(x, i));
    *n = static_cast<uint32_t>(*reinterpret_cast<const uint64_t*>(b));
    return b + 8;
  }
  uint64_t new_value(pm::transaction* tx, const char* v, uint32_t n);
  std::string check_value(node* x, uint32_t i);
  // First i with key(i) >= k (linear, as in the study).
  uint32_t position(node* x, key k) const {
    uint32_t i = 0;
    while (i < x->n && key_at(x, i) < k) ++i;
    return i;
  }
  // The node holding k, its index, and the word that references the node.
  struct place {
    node* x = nullptr;
    uint32_t i = 0;
    uint64_t* slot = nullptr;
  };
  place locate(key k) const;
  void write_rec(char* r, key k, const char* v, uint32_t n, uint64_t ref = 0) const;
  uint64_t new_node(bool leaf);
  void new_nodes(uint64_t* out, int n, bool leaf);
  void split_child(uint64_t* xslot, node* x, uint32_t i);
  void split_root();
  void split_child_tx(pm::transaction& tx, node* x, uint32_t i);
  void insert_leaf(uint64_t* slot, uint32_t i, key k, const char* v, uint32_t n);
  void publish(uint64_t* slot, uint64_t off, const uint64_t* fresh, size_t n);
  void publish(uint64_t* slot, uint64_t off, std::initializer_list<uint64_t> fresh) {
    publish(slot, off, fresh.begin(), fresh.size());
  }
  // remove.cpp: CLRS delete through an editor (persist: path copy; tx: log).
  struct edit;
  void erase(edit& ed, node* x, key k);
  uint32_t fill(edit& ed, node* x, uint32_t i);
  node* merge(edit& ed, node* x, uint32_t i);
  bool tx() const noexcept { return p_.pm_mode() == pm::mode::tx; }
  template <class F>
  bool walk(node* x, key from, F& f) const {
    uint32_t i = position(x, from);
    for (uint32_t j = i; j < x->n; ++j) {
      if (!x->leaf && !walk(node_at(x->child[j]), from, f)) return false;
      uint32_t n;
      if (meta_live(meta_at(x, j))) {
        const char* v = value_of(x, j, &n);
        if (!f(key_at(x, j), v, n)) return false;
      }
    }
    return x->leaf || walk(node_at(x->child[x->n]), from, f);
  }
  std::string check_node(uint64_t off, int depth, int& leaf_depth, const key* lo, const key* hi, uint64_t& live);

  pm::pool& p_;
  root_block* root_ = nullptr;
  uint32_t kw_ = 8, rec_ = 0, node_bytes_ = 0, max_value_ = 0;
  bool u64_ = true, by_ref_ = false;
  common::mutant_switch<mutant> mut_;
};

}  // namespace pmindex::pmemids::btree
