// pmemids `bplustree`: the B+-tree of "Performance study of Optane DC from
// indexing data structures' perspective" (pmemids_bench, MSST'20): records
// (values embedded) in the leaves, separator keys in the inner nodes,
// linear in-node search, proactive (top-down) splits. Single-threaded: the
// harness runs it behind its global lock or one instance per thread.
//
// Leaves are unsorted with a bitmap of the slots in use (as NV-Tree and
// FPTree do): a record is written into a free slot and committed by the one
// 8-byte store of the bitmap, the cheapest crash-consistent insert (the
// study's sorted leaves shifted records in place, which a crash can tear).
// A scan sorts each leaf's records (16 at most). There is no leaf chain: a
// scan walks down the tree (a chain would be a second word to commit at
// every split). A remove clears a bit; a remove that empties a leaf takes
// the leaf out of the tree instead (below), so a pool emptied and refilled
// with other keys holds as much again. Nodes are never merged: an inner node
// may hold as few as one child (0 keys).
//
// Node (header, then the leaf's records or the inner node's keys and
// children; kw = 8 for keys=u64, 16 for keys=bytes; ik = 8 for keys=u64, 24
// for keys=bytes: the two key words and the length):
//     0  uint32_t leaf           1 for a leaf
//     4  uint32_t n              inner: keys in use (1..16)
//     8  uint64_t bitmap         leaf: bit i set = slot i holds a record
//    16  leaf: record[16]        key word(s), meta (front.hpp), value slot
//        inner: key[16] (ik bytes each), then uint64_t child[17]
// Keys below key[i] are in child[i], keys >= key[i] in child[i + 1].
// Root block: magic, tree (the root node's offset; the word that commits a
// new root), value slot, key kind.
//
// Crash consistency, flushes (F, in lines) and fences per operation:
//   persist: an insert writes its record into a free slot (F = the
//     record's lines, 1 fence) and stores the bitmap (F 1, 1 fence): 2
//     fences. A full node on the way down is split out of place first: its
//     two halves and a copy of its parent, flushed, 1 fence, then the 8-byte
//     store of the grandparent's child word or of the root word (F 1, 1
//     fence). A remove stores the bitmap (F 1, 1 fence). keys=u64 update:
//     one 8-byte value store (F 1, 1 fence); keys=bytes update writes the
//     new record into a free slot and swaps the two bits in one bitmap
//     store (2 fences; a full leaf is copied and relinked instead).
//     A remove of a leaf's last record unlinks the leaf: a copy of the
//     lowest node above it that has another child, without that child,
//     flushed, 1 fence, then the 8-byte store of the word that points to
//     that node (F 1, 1 fence); the leaf, the one-child nodes between and
//     the old node are freed after it. A root left with one child is
//     replaced by that child. When the pool has no room for the copy, the
//     remove clears the bit and the empty leaf stays.
//   tx: the same steps in one undo-log transaction: an insert saves the
//     free slot and the bitmap (2 snapshots), commit: 4 fences; a split's
//     new nodes are allocated in the transaction and linked by a saved
//     store. A remove: 1 snapshot + commit, 3 fences (one that empties a
//     leaf: the copy allocated in the transaction, the pointing word saved,
//     the old blocks freed at commit). keys=bytes update: the
//     record saved and rewritten in place, 3 fences.
// Recovery: nothing to repair (tx: the pool rolled the log back before);
// tracing reclaims the blocks a crash left unlinked.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "common/mutant.hpp"
#include "pmemids/detail/front.hpp"
#include "pmemids/detail/root.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/pm/tx.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids::bplustree {

enum class mutant : unsigned { none, bitmap_before_record, tx_unlogged_bitmap, link_before_flush };

inline constexpr uint32_t k_leaf = 16;   // records a leaf
inline constexpr uint32_t k_inner = 16;  // keys an inner node
inline constexpr uint64_t k_full = (uint64_t{1} << k_leaf) - 1;
inline constexpr uint64_t k_root_magic = 0x4545525450425f50;  // "P_BPTREE"

struct head {
  uint32_t leaf;
  uint32_t n;
  uint64_t bitmap;
};
static_assert(sizeof(head) == 16);

class tree {
 public:
  tree(pm::pool& p, open_kind k, const index_config& c);
  bool insert(key k, const char* v, uint32_t n);
  bool update(key k, const char* v, uint32_t n);
  bool remove(key k);
  const char* find(key k, uint32_t* n) const;
  template <class F>
  void scan(key from, F&& f) const {
    walk(root_->tree, from, f);
  }
  check_result check();
  void trace(pm::pool::trace_sink& s);
  index_stats stats();
  uint32_t max_value() const noexcept { return max_value_; }

 private:
  // Where a change lands: persist writes new nodes and links them with one
  // store each; tx does the same inside the caller's transaction.
  struct writer {
    tree& t;
    pm::transaction* tx;
    uint64_t fresh_node(bool leaf);
    void link(uint64_t* slot, uint64_t off, std::initializer_list<uint64_t> fresh);
    void drop(uint64_t off);
  };

  head* at(uint64_t off) const { return p_.ptr<head>(off); }
  char* rec(uint64_t x, uint32_t i) const { return p_.ptr<char>(x) + sizeof(head) + i * rec_; }
  key rec_key(uint64_t x, uint32_t i) const {
    auto* w = reinterpret_cast<const uint64_t*>(rec(x, i));
    return {w[0], kw_ == 16 ? w[1] : 0, meta_klen(w[kw_ / 8])};
  }
  uint64_t& rec_meta(uint64_t x, uint32_t i) const { return reinterpret_cast<uint64_t*>(rec(x, i))[kw_ / 8]; }
  char* rec_value(uint64_t x, uint32_t i) const { return rec(x, i) + kw_ + 8; }
  uint64_t* ikey(uint64_t x, uint32_t i) const {
    return reinterpret_cast<uint64_t*>(p_.ptr<char>(x) + sizeof(head) + i * ik_);
  }
  key inner_key(uint64_t x, uint32_t i) const {
    const uint64_t* w = ikey(x, i);
    return ik_ == 8 ? key{w[0], 0, 8} : key{w[0], w[1], static_cast<uint32_t>(w[2])};
  }
  void set_inner_key(uint64_t x, uint32_t i, const key& k) const;
  uint64_t* child(uint64_t x) const {
    return reinterpret_cast<uint64_t*>(p_.ptr<char>(x) + sizeof(head) + k_inner * ik_);
  }
  uint64_t node_size(bool leaf) const { return leaf ? leaf_bytes_ : inner_bytes_; }
  // The bytes a new node's flush covers (a split's leaves fill slots 0..).
  uint64_t used_bytes(uint64_t x) const {
    if (at(x)->leaf) return sizeof(head) + (64 - std::countl_zero(at(x)->bitmap)) * rec_;
    return sizeof(head) + k_inner * ik_ + (at(x)->n + 1) * 8;
  }
  // Keys <= k among the inner node's separators: the child holding k.
  uint32_t route(uint64_t x, const key& k) const {
    uint32_t i = 0;
    while (i < at(x)->n && !(k < inner_key(x, i))) ++i;
    return i;
  }
  bool full(uint64_t x) const { return at(x)->leaf ? at(x)->bitmap == k_full : at(x)->n == k_inner; }
  // The leaf for k, its slot of k (k_leaf if absent), and its parent's
  // word; the word pointing to the lowest inner node on the way that has
  // more than one child, and which of its children the way took (the
  // nodes below it down to the leaf have one child each).
  struct place {
    uint64_t leaf = 0;
    uint32_t i = k_leaf;
    uint64_t* slot = nullptr;
    uint64_t* fork = nullptr;
    uint32_t fork_i = 0;
  };
  place locate(const key& k) const;
  uint32_t sorted(uint64_t leaf, uint32_t* order) const;  // slots in key order
  void write_rec(uint64_t x, uint32_t i, const key& k, const char* v, uint32_t n) const;
  void split(writer& w, uint64_t* xslot, uint64_t x, uint32_t i);
  bool tx() const noexcept { return p_.pm_mode() == pm::mode::tx; }
  void add(writer& w, const key& k, const char* v, uint32_t n);
  bool unlink_leaf(writer& w, const place& pl);
  template <class F>
  bool walk(uint64_t x, const key& from, F& f) const {
    if (!at(x)->leaf) {
      for (uint32_t i = route(x, from); i <= at(x)->n; ++i)
        if (!walk(child(x)[i], from, f)) return false;
      return true;
    }
    uint32_t order[k_leaf];
    const uint32_t n = sorted(x, order);
    for (uint32_t j = 0; j < n; ++j) {
      key k = rec_key(x, order[j]);
      if (k < from) continue;
      if (!f(k, static_cast<const char*>(rec_value(x, order[j])), meta_vlen(rec_meta(x, order[j])))) return false;
    }
    return true;
  }
  std::string check_node(uint64_t x, int depth, int& leaf_depth, const key* lo, const key* hi, uint64_t& live);

  pm::pool& p_;
  root_block* root_ = nullptr;
  uint32_t kw_ = 8, ik_ = 8, rec_ = 0, max_value_ = 0;
  uint64_t leaf_bytes_ = 0, inner_bytes_ = 0;
  bool u64_ = true;
  common::mutant_switch<mutant> mut_;
};

}  // namespace pmindex::pmemids::bplustree
