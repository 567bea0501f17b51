// pmemids `hashtable`: the chained hash table of "Performance study of Optane
// DC from indexing data structures' perspective" (pmemids_bench, MSST'20):
// separate chaining, a new element at the head of its chain, the table
// doubled when an insert would take it over load factor 0.75 (16 buckets at
// creation). Unordered: scan and range are error(unsupported)
// (index_entry::ordered = false). Single-threaded: the harness runs it
// behind its global lock or one instance per thread.
//
// Bucket array (one block, 16 + 8 n bytes; n a power of two >= 16):
//     0  uint64_t n            buckets
//     8  uint64_t gen          0 or 1: the next word its chains use
//    16  uint64_t head[n]      pool offset of the chain's first element (0: empty)
// Element (elem_bytes = 24 + kw + slot: 40 bytes for keys=u64, 40 + the
// value slot for keys=bytes):
//     0  uint64_t next[2]      next[gen]: the chain of the current table;
//                              next[1 - gen]: free for the next resize
//    16  key word(s)           kw = 8 (keys=u64) or 16 (keys=bytes), front.hpp
//  16+kw meta word             front.hpp (always live: a remove unlinks)
//  24+kw value slot            8 bytes, or the `value` parameter rounded to 8
// Root block: magic, table (offset of the bucket array; the word that
// commits a resize), value slot, key kind.
//
// Resize (both durable modes, no undo log): the new array (2n buckets,
// gen' = 1 - gen) is built by relinking every element through its *other*
// next word, which the current table never reads, so the committed table
// stays intact until the root's table word swings to the new array (one
// 8-byte store). Cost of a doubling at c records (n = 4c/3 buckets): one
// flushed line per element (its next[gen'] word) plus the new array's c/3
// lines, 2 fences, nothing copied or allocated but the array. The c/2
// inserts since the last doubling pay it: about 2.7 lines per insert.
// Measured (`pmindex bench --index hashtable --mode persist|tx -n 100k -t 1
// --workload insert=1 --ops 100k`, growing from 16 buckets): persist 5.06
// lines and 2.00 fences per insert, tx 7.06 and 3.00.
//
// Crash consistency, flushes (F, in lines) and fences per operation
// (elem = the element's lines: 1 for keys=u64, 3 for 100-byte values):
//   persist: insert writes the element (next = the chain head), flushes it,
//     fences, then stores the bucket's head word (F = elem + 1, 2 fences).
//     keys=u64 update: one 8-byte value store (F 1, 1 fence). keys=bytes
//     update: a new element with the same next word, flushed and fenced,
//     then the one word that referenced the old one swings to it (F =
//     elem + 1, 2 fences; the old element is freed). Remove: the word that
//     references the element takes its next (F 1, 1 fence), then the
//     element is freed.
//   tx: an undo-log transaction (pm/tx.hpp) per change: insert allocates
//     the element in the transaction and logs the head word (F = 1 + elem +
//     1 + 1, 3 fences: the log entry, the commit's flush, the log's word);
//     remove logs the referencing word and frees the element at commit (3
//     fences); keys=bytes update logs the meta word and value and writes
//     them in place (3 fences); keys=u64 update stays an 8-byte store.
// Recovery: nothing to repair (tx: the pool rolled the log back before);
// opening counts the records into DRAM (one walk of every chain); tracing
// reclaims a bucket array or element a crash left unlinked.
#pragma once

#include <cstdint>
#include <string>

#include "common/mutant.hpp"
#include "pmemids/detail/element.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/pm/tx.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids::hashtable {

enum class mutant : unsigned { none, publish_before_flush, resize_in_place, tx_unlogged_head };

inline constexpr uint64_t k_root_magic = 0x4853414854505f49;  // "I_PTHASH"
inline constexpr uint64_t k_min_buckets = 16;

struct table {
  uint64_t n;
  uint64_t gen;
  uint64_t* head() { return reinterpret_cast<uint64_t*>(this + 1); }  // head[n] follows
};

struct root_block {
  uint64_t magic;
  uint64_t table;
  uint64_t slot;
  uint64_t kind;
};

class hash_table {
 public:
  hash_table(pm::pool& p, open_kind k, const index_config& c);
  bool insert(key k, const char* v, uint32_t n);
  bool update(key k, const char* v, uint32_t n);
  bool remove(key k);
  const char* find(key k, uint32_t* n) const;
  check_result check();
  void trace(pm::pool::trace_sink& s);
  index_stats stats();
  uint32_t max_value() const noexcept { return el_.max_value; }

 private:
  table* tab() const { return p_.ptr<table>(root_->table); }
  static uint64_t table_bytes(uint64_t n) { return sizeof(table) + 8 * n; }
  char* elem(uint64_t off) const { return p_.ptr<char>(off); }
  uint64_t* next(uint64_t off, uint64_t gen) const { return reinterpret_cast<uint64_t*>(elem(off)) + gen; }
  key key_at(uint64_t off) const { return el_.key_at(elem(off)); }
  uint64_t hash(const key& k) const;
  // The word that references k's element (a head or a next word), or null.
  uint64_t* locate(key k) const;
  uint64_t new_elem(key k, const char* v, uint32_t n, uint64_t next_off, pm::transaction* tx);
  void grow();
  // Walks every chain with bounds (a damaged pool is errc::corrupt);
  // f(offset) per element. Returns the element count.
  template <class F>
  uint64_t walk(F&& f) const;
  bool tx() const noexcept { return p_.pm_mode() == pm::mode::tx; }

  pm::pool& p_;
  root_block* root_ = nullptr;
  element_layout el_;  // links: next[2]
  uint64_t count_ = 0;  // records (DRAM; counted at open)
  common::mutant_switch<mutant> mut_;
};

}  // namespace pmindex::pmemids::hashtable
