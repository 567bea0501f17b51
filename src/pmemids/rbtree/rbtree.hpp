// pmemids `rbtree`: the red-black tree of "Performance study of Optane DC
// from indexing data structures' perspective" (pmemids_bench, MSST'20): one
// node per record, value embedded, rebalanced on every insert and remove
// (CLRS ch. 13, without parent pointers: the operations keep the path in
// DRAM). Single-threaded: the harness runs it behind its global lock or one
// instance per thread.
//
// Node (32 + kw + slot bytes; kw = 8 for keys=u64, 16 for keys=bytes):
//     0  uint64_t left, 8 right   pool offsets of the children (0: none)
//    16  uint64_t red             1 red, 0 black
//    24  key word(s), meta (front.hpp), value slot
// Root block: magic, tree (the root node's offset), value slot, key kind.
//
// An operation runs on a DRAM working set (`work`, rbtree.cpp): the nodes
// it reads and the ones it changes (colour, children, the record moved into
// a removed node's place). Then:
//   persist: path copying, but only of the region that changed: every
//     changed node is written as a fresh copy, and so is every node that
//     would otherwise need two pointers changed, until one node (or the root
//     word) needs a single child word changed: that 8-byte store, after the
//     copies are flushed and fenced, commits the operation; the replaced
//     nodes are freed after it. An insert's rebalancing changes O(1) nodes
//     amortized (recolourings climb two levels at a time, at most two
//     rotations), so the copy is a few nodes: 2 fences per insert and per
//     remove whatever the depth, F = (copied nodes x node lines) + 1;
//     measured at 100k random u64 inserts: 7.1 lines flushed, 2 fences,
//     4.1 allocations (3.1 copies and the new node) per insert. keys=u64
//     update: one 8-byte value store (F 1, 1 fence); keys=bytes update
//     copies the node and links it (2 fences).
//   tx: in place: each changed node's header (left, right, colour; 24
//     bytes) saved once (1 fence each), a moved record saved, the new node
//     allocated in the transaction, commit 2 fences: measured 5.1 fences
//     and 11.4 lines per insert at 100k.
// Full pools: a copy-on-write remove allocates before it frees, so the pool
// keeps k_remove_reserve node blocks back for removes.
// Recovery: nothing to repair (tx: the pool rolled the log back before);
// tracing reclaims the blocks a crash left unlinked.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/mutant.hpp"
#include "pmemids/detail/front.hpp"
#include "pmemids/detail/root.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/pm/tx.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids::rbtree {

enum class mutant : unsigned { none, commit_before_flush, tx_unlogged_color };

inline constexpr uint64_t k_root_magic = 0x45455254425242;  // "BRBTREE"
// A red-black tree of a 2^40-byte pool is at most ~72 levels deep; a
// remove copies at most its path and the siblings of it.
inline constexpr uint32_t k_remove_reserve = 160;
inline constexpr int k_max_depth = 128;

class tree {
 public:
  tree(pm::pool& p, open_kind k, const index_config& c);
  ~tree();
  bool insert(key k, const char* v, uint32_t n);
  bool update(key k, const char* v, uint32_t n);
  bool remove(key k);
  const char* find(key k, uint32_t* n) const;
  template <class F>
  void scan(key from, F&& f) const {
    uint64_t stack[k_max_depth];
    int top = 0;
    for (uint64_t x = root_->tree; x;) {
      if (key_at(x) < from) {
        x = hdr(x)[1];
      } else {
        if (top == k_max_depth) return;  // deeper than a valid tree (check() says so)
        stack[top++] = x;
        x = hdr(x)[0];
      }
    }
    while (top) {
      const uint64_t x = stack[--top];
      if (!f(key_at(x), static_cast<const char*>(value_at(x)), meta_vlen(meta_at(x)))) return;
      for (uint64_t y = hdr(x)[1]; y && top < k_max_depth; y = hdr(y)[0]) stack[top++] = y;
    }
  }
  check_result check();
  void trace(pm::pool::trace_sink& s);
  index_stats stats();
  uint32_t max_value() const noexcept { return max_value_; }

 private:
  struct work;
  uint64_t* hdr(uint64_t x) const { return p_.ptr<uint64_t>(x); }  // left, right, red
  key key_at(uint64_t x) const {
    const uint64_t* w = hdr(x) + 3;
    return {w[0], kw_ == 16 ? w[1] : 0, meta_klen(w[kw_ / 8])};
  }
  uint64_t& meta_at(uint64_t x) const { return hdr(x)[3 + kw_ / 8]; }
  char* value_at(uint64_t x) const { return p_.ptr<char>(x) + 32 + kw_; }
  uint64_t rec_bytes(uint64_t x) const { return 8 + kw_ + meta_vlen(meta_at(x)); }
  // The path from the root to k's node (included) or to where it would
  // hang; returns k's node or 0.
  uint64_t descend(const key& k, std::vector<uint64_t>& path) const;
  void insert_fixup(work& w, key k, const char* v, uint32_t n, uint64_t z);
  void commit(work& w);
  void commit_cow(work& w);
  std::string check_node(uint64_t x, int depth, bool red_parent, const key* lo, const key* hi, int& black,
                         uint64_t& n);
  bool tx() const noexcept { return p_.pm_mode() == pm::mode::tx; }

  pm::pool& p_;
  root_block* root_ = nullptr;
  uint32_t kw_ = 8, slot_ = 8, max_value_ = 8;
  uint64_t node_bytes_ = 0;
  bool u64_ = true;
  common::mutant_switch<mutant> mut_;
  std::unique_ptr<work> w_;  // reused by every operation
};

}  // namespace pmindex::pmemids::rbtree
