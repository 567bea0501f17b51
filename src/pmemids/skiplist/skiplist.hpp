// pmemids `skiplist`: the skip list of "Performance study of Optane DC from
// indexing data structures' perspective" (pmemids_bench, MSST'20): p = 0.5,
// at most 16 levels, one node per record with its value embedded.
// Single-threaded: the harness runs it behind its global lock or one
// instance per thread. A node's height is 1 + the trailing zero bits of a
// hash of its key (p = 0.5 per level, capped at 16): the same key always
// gets the same height, so a history replays exactly.
//
// Node (a block of 16 + kw + slot + 8 * height bytes; kw = 8 for keys=u64,
// 16 for keys=bytes; slot = 8, or the `value` parameter rounded up to 8):
//     0  uint32_t height       1..16
//     8  key word(s)           front.hpp
//  8+kw  uint64_t meta         front.hpp (always live)
// 16+kw  value slot
//   ...  uint64_t next[height] pool offsets of the successors at each level
// The head is a node of height 16 without a record; the root block
// (detail/root.hpp) names it.
//
// Level 0 is the list; the levels above are hints for the search.
// Crash consistency, flushes (F, in lines) and fences per operation:
//   persist: an insert writes and flushes its node, fences, then stores the
//     predecessor's level-0 next word (the commit: flush, fence): F = node
//     lines + 1 + (height - 1), 2 fences. The upper levels' next words are
//     stored after the commit and flushed without a fence (a later
//     operation's fence, or the clean close's, makes them durable). A remove
//     unlinks level 0 first (the commit: F 1, 1 fence), then the upper
//     levels (flushed, no fence), then frees the node. keys=u64 update: one
//     8-byte value store (F 1, 1 fence); keys=bytes update writes a copy of
//     the node and swaps it in like an insert (2 fences).
//     Recovery after a crash rebuilds every upper level from level 0 (the
//     hints may point at freed or reused blocks): one walk of the list,
//     each node's upper next words rewritten and flushed, one fence; O(n)
//     time, like the tracing that follows it. A clean open trusts them.
//   tx: an insert allocates its node in the transaction and saves the
//     predecessor's next word of each of its levels (height snapshots, 1
//     fence each), commit 2 fences: height + 2 fences (4 on average). A
//     remove likewise (height + 2). keys=bytes update: one saved range
//     (meta and value), 3 fences. Every level is logged, so recovery has
//     nothing to rebuild (the pool rolled the logs back before).
#pragma once

#include <cstdint>
#include <string>

#include "common/mutant.hpp"
#include "pmemids/detail/front.hpp"
#include "pmemids/detail/root.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/pm/tx.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids::skiplist {

enum class mutant : unsigned { none, link_before_flush, tx_unlogged_link, no_rebuild };

inline constexpr uint32_t k_levels = 16;
inline constexpr uint64_t k_root_magic = 0x5453494c504b5350;  // "PSKPLIST"

class list {
 public:
  list(pm::pool& p, open_kind k, const index_config& c);
  bool insert(key k, const char* v, uint32_t n);
  bool update(key k, const char* v, uint32_t n);
  bool remove(key k);
  const char* find(key k, uint32_t* n) const;
  template <class F>
  void scan(key from, F&& f) const {
    for (uint64_t x = first_ge(from); x; x = next(x)[0]) {
      const uint64_t m = meta_at(x);
      if (!f(key_at(x), static_cast<const char*>(value_at(x)), meta_vlen(m))) return;
    }
  }
  check_result check();
  void trace(pm::pool::trace_sink& s);
  index_stats stats();
  uint32_t max_value() const noexcept { return max_value_; }

 private:
  char* at(uint64_t off) const { return p_.ptr<char>(off); }
  uint32_t height(uint64_t x) const { return *p_.ptr<uint32_t>(x); }
  key key_at(uint64_t x) const {
    auto* w = reinterpret_cast<const uint64_t*>(at(x) + 8);
    return {w[0], kw_ == 16 ? w[1] : 0, meta_klen(w[kw_ / 8])};
  }
  uint64_t& meta_at(uint64_t x) const { return *reinterpret_cast<uint64_t*>(at(x) + 8 + kw_); }
  char* value_at(uint64_t x) const { return at(x) + 16 + kw_; }
  uint64_t* next(uint64_t x) const { return reinterpret_cast<uint64_t*>(at(x) + 16 + kw_ + slot_); }
  uint64_t node_bytes(uint32_t h) const { return 16 + kw_ + slot_ + 8 * h; }
  static uint32_t height_of(const key& k);
  // preds[l]: the last node before k at level l (the head if none), for
  // every level below top_; returns the node after preds[0] (0 at the end).
  uint64_t descend(key k, uint64_t* preds) const;
  uint64_t first_ge(key k) const;
  uint64_t new_node(pm::transaction* tx, uint32_t h, key k, const char* v, uint32_t n);
  void link_upper(const uint64_t* preds, uint64_t x, uint32_t from);
  void rebuild();
  bool tx() const noexcept { return p_.pm_mode() == pm::mode::tx; }
  std::string walk(uint64_t* records, bool trace_only, pm::pool::trace_sink* s);

  pm::pool& p_;
  root_block* root_ = nullptr;
  uint64_t head_ = 0;
  uint32_t kw_ = 8, slot_ = 8, max_value_ = 8;
  uint32_t top_ = 1;  // levels in use (DRAM; only grows while open)
  bool u64_ = true;
  common::mutant_switch<mutant> mut_;
};

}  // namespace pmindex::pmemids::skiplist
