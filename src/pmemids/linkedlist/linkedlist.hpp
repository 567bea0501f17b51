// pmemids `linkedlist`: the linked list of "Performance study of Optane DC
// from indexing data structures' perspective" (pmemids_bench, MSST'20): an
// append-only singly linked list of elements in the pool, found through a
// DRAM hash table (key -> element, predecessor) rebuilt from the list at
// every open. Unordered: scan and range are error(unsupported)
// (index_entry::ordered = false). Single-threaded: the harness runs it
// behind its global lock or one instance per thread.
//
// Element (detail/element.hpp with one link word; 32 bytes for keys=u64,
// 32 + the value slot for keys=bytes):
//     0  uint64_t next         the following element (0: the last)
//     8  key word(s), meta word, value slot (front.hpp)
// Root block: magic, head (the first element; the word that commits an
// append to an empty list or a change of the first element), value slot,
// key kind. The DRAM side: std::unordered_map key -> {element, predecessor}
// and the last element (where an insert appends).
//
// Crash consistency, flushes (F, in lines) and fences per operation
// (elem = the element's lines: 1 for keys=u64, 3 for 100-byte values):
//   persist: insert appends: the element is written (next 0), flushed,
//     fenced, then the last element's next word (or the root's head word)
//     stores it (F = elem + 1, 2 fences). keys=u64 update: one 8-byte value
//     store in place (F 1, 1 fence). keys=bytes update: a new element with
//     the old one's next, flushed and fenced, then the predecessor's next
//     word swings to it (F = elem + 1, 2 fences; the old one is freed): the
//     cheapest protocol that never shows a torn value. Remove unlinks: the
//     predecessor's next word takes the element's next (F 1, 1 fence).
//   tx: an undo-log transaction (pm/tx.hpp) per change: insert allocates the
//     element in it and logs the word that links it (3 fences: the log
//     entry, the commit's flush, the log's word); remove logs that word and
//     frees the element at commit (3 fences); keys=bytes update logs the
//     meta word and the value and writes them in place (3 fences); keys=u64
//     update stays an 8-byte store.
// Recovery: nothing to repair (tx: the pool rolled the log back before);
// every open walks the list once into the DRAM table (stats():
// rebuild_seconds): about 1.3 M elements per CPU-second (`pmindex bench
// --index linkedlist -n 1M --workload read=1 --ops 1000 --recover`: a clean
// reopen of 1M records took 0.82 CPU-s, most of it std::unordered_map
// inserts). Tracing reclaims an element a crash left unlinked.
//
// Measured (`pmindex bench --index linkedlist --mode persist|tx -n 100k -t 1
// --workload insert=1 --ops 100k`): insert persist 2.00 lines, 2.00 fences;
// tx 4.00 lines, 3.00 fences; keys=bytes 100-byte update (--dataset
// u64-bytes --value-size 100 --workload update=1): persist 4 lines, 2
// fences; tx 7 lines, 3 fences.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "common/mutant.hpp"
#include "pmemids/detail/element.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/pm/tx.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids::linkedlist {

enum class mutant : unsigned { none, publish_before_flush, tx_unlogged_link };

inline constexpr uint64_t k_root_magic = 0x5453494c4b4e4c49;  // "ILNKLIST"

struct root_block {
  uint64_t magic;
  uint64_t head;
  uint64_t slot;
  uint64_t kind;
};

class list {
 public:
  list(pm::pool& p, open_kind k, const index_config& c);
  bool insert(key k, const char* v, uint32_t n);
  bool update(key k, const char* v, uint32_t n);
  bool remove(key k);
  const char* find(key k, uint32_t* n) const;
  check_result check();
  void trace(pm::pool::trace_sink& s);
  index_stats stats();
  uint32_t max_value() const noexcept { return el_.max_value; }

 private:
  struct key_hash {
    size_t operator()(const key& k) const noexcept;
  };
  struct place {
    uint64_t off;   // the element
    uint64_t prev;  // its predecessor (0: the root's head word links it)
  };
  char* elem(uint64_t off) const { return p_.ptr<char>(off); }
  uint64_t* next(uint64_t off) const { return reinterpret_cast<uint64_t*>(elem(off)); }
  // The word that links the element after `prev` (0: the first one).
  uint64_t* link(uint64_t prev) const { return prev ? next(prev) : &root_->head; }
  // The element after `off` (if any) now follows `prev`.
  void relink_successor(uint64_t off, uint64_t prev);
  // insert: a new element (k, v), durable, then linked at *at.
  uint64_t link_new(uint64_t* at, key k, const char* v, uint32_t n);
  // Walks the list with bounds (a damaged pool is errc::corrupt): f(element,
  // predecessor). Returns the element count.
  template <class F>
  uint64_t walk(F&& f) const;
  bool tx() const noexcept { return p_.pm_mode() == pm::mode::tx; }

  pm::pool& p_;
  root_block* root_ = nullptr;
  element_layout el_;  // links: next
  std::unordered_map<key, place, key_hash> map_;
  uint64_t tail_ = 0;  // the last element (0: empty)
  double rebuild_seconds_ = 0;
  common::mutant_switch<mutant> mut_;
};

}  // namespace pmindex::pmemids::linkedlist
