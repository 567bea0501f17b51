// pmemids `arraylist`: the array list of "Performance study of Optane DC
// from indexing data structures' perspective" (pmemids_bench, MSST'20): one
// fixed array of 128-byte items allocated at creation, the key is the slot
// number. Ordered (slot order is key order), so scans walk the array.
// Single-threaded: the harness runs it behind its global lock or one
// instance per thread.
//
// Keys: 0 .. capacity-1 (`--params capacity=N`, fixed at creation; the
// registry's key_limit, so every generated tester and bench draw keys
// below it). A key >= capacity is error(errc::key_too_long) (exit code 9),
// for lookups and removes too; nothing changes. keys=bytes: keys are the
// 8 big-endian bytes of the slot number (any other length: errc::unsupported
// or key_too_long), values 0..120 bytes (longer: errc::value_too_long).
//
// Item (128 bytes, 64-byte aligned: two cache lines):
//     0  uint64_t meta     bit 63 live | bit 62 value in the spare copy |
//                          bits 32..39 key length (8) | bits 0..31 value
//                          length (front.hpp); 0 = empty. The word that
//                          commits every change of the slot.
//     8  char value[120]   the value (keys=u64: 8 bytes)
// keys=bytes also has a spare array of `capacity` items: item i's spare
// copy, value at offset 8 (meta word unused), so an update never
// overwrites the value a crash may still need (per-item two-copy scheme).
// Root block: magic, array, spare array (0 for keys=u64), capacity, kind.
//
// Crash consistency, flushes (F, in lines) and fences per operation. The
// protocol relies on the crash model's rule for one cache line: a line not
// yet durable holds a prefix of its stores, so a value stored in line 0
// before the meta word (release store: the compiler keeps the order, x86
// keeps it in the cache) is never seen without it.
//   persist (and dram/volatile, where flushes are no-ops):
//     insert: the value into the item, then the meta word; F 1, 1 fence
//       when the value fits line 0 (<= 56 bytes, every keys=u64 insert);
//       longer: line 1 flushed and fenced first (F 2, 2 fences).
//     update keys=u64: one 8-byte value store in place (F 1, 1 fence).
//     update keys=bytes: the value goes to the copy not in use; into the
//       item (meta's line last) as an insert, or into the spare (its lines
//       flushed, fenced) and then the meta word swings to it (F = spare
//       lines + 1, 2 fences); a 100-byte value alternates: 2 lines 2 fences,
//       then 3 lines 2 fences.
//     remove: the meta word cleared (F 1, 1 fence).
//   tx: in place under an undo-log transaction (pm/tx.hpp): insert logs the
//     meta word only (the empty slot's value bytes need no undo; line 1 is
//     flushed before the commit's fence), remove logs the meta word,
//     keys=bytes update logs the meta word and the value: each 3 fences (the
//     log entry, the commit's flush, the log's word). keys=u64 update stays
//     an 8-byte store (F 1, 1 fence), as in every pmemids structure.
// Recovery: nothing to repair and nothing to free (tx: the pool rolled the
// log back before); every open counts the live items (one pass over the
// meta words: the record count of stats()).
// Creation zeroes the meta words that are not zero already (none in a fresh
// pool: no flush). Scans stop at one past the highest slot live at open or
// inserted since (DRAM), not at the capacity.
//
// Measured (`pmindex bench --index arraylist --mode persist|tx -n 100k -t 1
// --workload insert=1|update=1|remove=1 --ops 100k`, per successful op):
// persist insert 1.00 line, 1.00 fence; update 1, 1; remove 1, 1. tx insert
// 3.00 lines, 3.00 fences; update (keys=u64) 1, 1; remove 3, 3.
#pragma once

#include <cstdint>
#include <string>

#include "common/mutant.hpp"
#include "pmemids/detail/front.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids::arraylist {

enum class mutant : unsigned { none, insert_unflushed, update_in_place, tx_unlogged_remove };

inline constexpr uint64_t k_root_magic = 0x5453494c59525241;  // "ARRYLIST"
inline constexpr uint32_t k_item = 128;
inline constexpr uint32_t k_max_value = k_item - 8;
inline constexpr uint64_t k_spare_bit = uint64_t{1} << 62;
inline constexpr uint64_t k_default_capacity = 1200000;  // pmemids-write at 1M: 1M + 100k inserts

struct root_block {
  uint64_t magic;
  uint64_t array;
  uint64_t spare;
  uint64_t capacity;
  uint64_t kind;  // 0 keys=u64, 1 keys=bytes
};

class array {
 public:
  array(pm::pool& p, open_kind k, const index_config& c);
  bool insert(key k, const char* v, uint32_t n);
  bool update(key k, const char* v, uint32_t n);
  bool remove(key k);
  const char* find(key k, uint32_t* n) const;
  template <class F>
  void scan(key from, F&& f) const {
    // Slot s (key (s, 0, 8)) is >= from unless from is longer than 8 bytes
    // and starts with s's bytes.
    if (from.len > 8 && from.w == UINT64_MAX) return;
    for (uint64_t s = from.w + (from.len > 8 ? 1 : 0); s < end_; ++s) {
      const char* it = item(s);
      const uint64_t m = meta(s);
      if (meta_live(m) && !f(key{s, 0, 8}, value_of(it, m), meta_vlen(m))) return;
    }
  }
  check_result check();
  void trace(pm::pool::trace_sink& s);
  index_stats stats();
  uint32_t max_value() const noexcept { return u64_ ? 8 : k_max_value; }

 private:
  char* item(uint64_t s) const { return items_ + s * k_item; }
  uint64_t& meta(uint64_t s) const { return *reinterpret_cast<uint64_t*>(item(s)); }
  const char* value_of(const char* it, uint64_t m) const {
    return (m & k_spare_bit ? spare_ + (it - items_) : it) + 8;
  }
  // The slot of a key; error(key_too_long) past the array.
  uint64_t slot(const key& k) const;
  // The value into item s (line 1 made durable first when it reaches it),
  // then meta word m stored and its line persisted.
  void write_item(uint64_t s, const char* v, uint32_t n, uint64_t m);
  bool tx() const noexcept { return p_.pm_mode() == pm::mode::tx; }
  std::string bad_meta(uint64_t m) const;

  pm::pool& p_;
  root_block* root_ = nullptr;
  char* items_ = nullptr;
  char* spare_ = nullptr;
  uint64_t cap_ = 0;
  uint64_t records_ = 0;  // DRAM: counted at open
  // DRAM: one past the highest slot live at open or inserted since (an
  // upper bound of the live slots: scans stop there, not at the capacity).
  uint64_t end_ = 0;
  bool u64_ = true;
  common::mutant_switch<mutant> mut_;
};

}  // namespace pmindex::pmemids::arraylist
