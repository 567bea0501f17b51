// ROART: a persistent adaptive radix tree with leaf arrays (Ma et al.,
// "ROART: Range-query Optimized Persistent ART", FAST'21), byte-string keys
// (keys=bytes) or 64-bit keys as their 8 big-endian bytes through the same
// tree (keys=u64, the default).
//
// Structure. Inner nodes N4/N16/N48/N256 branch on one key byte at their
// `level`; a node stores its level and the key bytes [level - nprefix, level)
// that precede the branch byte (absolute positions, so a prefix split above
// a node never rewrites it). Every inner node also has an END-OF-KEY word
// naming the one record whose key ends exactly at `level`, so a key may be a
// proper prefix of another (madsys-dev/ROART#1 asserted on that). A subtree
// holding few records is a LEAF ARRAY: 64 slots, each {16-bit fingerprint,
// 48-bit leaf offset}. Each record is one separately allocated leaf, the kv
// block {klen, vlen, key, value} (common/kv_block.hpp), never changed after
// it is published.
//
// Commits (every change is one 8-byte failure-atomic store, made durable
// before the operation returns; L = the lines of the new leaf):
//   insert into a leaf array: leaf written and flushed, fence, slot store,
//     flush, fence: L + 1 flushes, 2 fences;
//   insert of a byte missing in an inner node: a new leaf array with the
//     leaf (flushed), fence, the child word {byte, offset} stored in a free
//     child slot (N256: the byte's slot), flush, fence: L + 10, 2 fences;
//   insert at an end-of-key word: L + 1, 2;
//   update (out of place): a new leaf, fence, the slot swung, flush, fence:
//     L + 1, 2; the old leaf retired (epochs) after the swing is durable;
//   remove: the slot (or end-of-key word) zeroed, flush, fence: 1, 1; the
//     last record of a leaf array: its parent's word zeroed instead (the
//     array leaves the tree with it and is retired): 1, 1;
//   full leaf array: split by the first byte position where its keys differ:
//     one new leaf array per distinct byte (+ the end-of-key record) and one
//     new inner node, all flushed, one fence, then ONE 8-byte swing of the
//     parent's word, flush, fence; the insert then retries. The original
//     relaxed that order (no fence before the swing) and detected an
//     interrupted split by the level field; we keep the fence, so a crash
//     leaves either the old array or the whole new subtree: there is no
//     interrupted split to detect. What the relaxed order would save,
//     measured: a 1M sparse u64 load makes 257 splits (one per inner node)
//     among 2.1M fences, 0.012% (`pmindex bench --index roart -n 1M
//     --workload insert=1`, stats inner_nodes). check() still verifies every
//     node's level against its position;
//   node growth (N4 -> N16 -> N48 -> N256) and prefix splits build the new
//     node (and leaf array) aside, fence, and swing the parent's word.
// Inner nodes never shrink; a leaf array emptied by removes is unlinked and
// freed (so a pool emptied by removes takes new keys again: a refill holds
// what the first fill held, tests/unit/full_pool_refill_test.cpp).
//
// Volatile fields and instant recovery: the root holds a persistent
// generation number, bumped (one flush, one fence) at every open. Each node's
// first word is its LOCK WORD {generation: 32, version: 32} -- never a
// pointer, never flushed on purpose. A leaf array's bitmap of used slots and
// an N48's byte -> slot index are volatile: a node whose lock word carries an
// older generation rebuilds them (from its non-null slot words) on first
// access, under its lock word taken by CAS, so a lock word left set by a
// crash or kept in a pool closed and reopened means nothing (the original
// stored DRAM lock pointers in PM and crashed on reopen + lookup). A dirty
// open therefore repairs nothing: it bumps the generation, and the pool's
// tracing rebuilds the allocator from trace(). A damaged word that carries
// the new generation is trusted: held with no writer inside a section
// (upgrade()), or obsolete and met twice by one pinned walk, it is
// errc::corrupt, not a wait or a restart forever.
//
// Scans: a leaf array's slots are in insertion order; a scan sorts the keys
// of each array it visits (the original emitted them unsorted, so a scan
// that stopped mid-array returned the wrong subset). Fingerprints hash the
// key as unsigned bytes (the original took a signed char).
//
// Threads: optimistic lock coupling (Leis et al.) on the per-node lock
// words. A lookup writes nothing: it reads each node's version before its
// fields and validates it after them, restarting when a writer intervened or
// the node was replaced (obsolete bit); it asks for a leaf array's lines
// at once when it reaches one (1M records, one thread: 9% more lookups, the
// slots its bitmap names no longer missed one by one). A writer descends the same way and
// locks the node it changes by upgrading the version it read (CAS; a failed
// upgrade restarts the operation), the parent too when the node is replaced
// (split, growth) or gets a new node above it (prefix split). It holds the
// lock word around the commit store AND its flush and fence, so a reader that
// read the new value fails validation until it is durable: no lookup returns
// a state a crash could take back. Writers on different nodes run in
// parallel. Writers pass a writer gate (sync/writer_gate.hpp: one
// exchange on a line of their own); scans and ranges close it shared, so a
// scan is an atomic snapshot and does not run beside writers, but scans run
// beside each other (the original's scans were not atomic); check, stats and
// trace close it alone. Unlinked leaves and nodes are retired through the pool's epochs
// (every operation runs pinned).
// Caveats: 48-bit offsets (pools below 256 TiB); keys up to 4096 bytes,
// values up to 128 MiB; space like the original's: a leaf array takes
// 640 bytes of the pool whatever its fill (536 in the allocator's 640-byte
// class; the original's are 576), and a split makes one array per distinct
// next key byte, so with sparse u64 keys the second-byte arrays overflow
// near 4M records and PM per record jumps (2M: 53 B, 4M: 259 B, 10M: ~530
// B; the paper measured 189 at 100M, when the third-byte arrays fill);
// generations are 32 bits (a node last
// touched exactly 2^32 opens ago would look current).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/kv_block.hpp"
#include "common/marker_passes.hpp"
#include "sync/writer_gate.hpp"
#include "common/mutant.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex::art::roart {

// In the order of its mutant list (tests.cpp).
enum class mutant : unsigned {
  none,
  leaf_unflushed,        // a leaf's slot is stored before the leaf is flushed
  split_swing_early,     // a split swings the parent before its new nodes are durable
  stale_volatile,        // the bitmap is trusted whatever its generation
  insert_unlocked,       // an insert into a leaf array takes no lock word
};

// ---------------------------------------------------------------- words
//
// A node word (root, inner child slot): bits 0..47 the node's offset (16-byte
// aligned, so bits 0..3 are free), bit 1 set for a leaf array, bit 2 for an
// inner node; bits 48..55 the child's key byte (N4/N16/N48; 0 in N256).
// A leaf slot word: bits 0..47 the kv block's offset, bits 48..63 the key's
// fingerprint. An end-of-key word: the kv block's offset.
inline constexpr uint64_t k_off_mask = (uint64_t{1} << 48) - 16;
inline constexpr uint64_t k_tag_array = 2;
inline constexpr uint64_t k_tag_inner = 4;
inline uint64_t off_of(uint64_t w) { return w & k_off_mask; }
inline bool is_array(uint64_t w) { return w & k_tag_array; }
inline bool is_inner(uint64_t w) { return w & k_tag_inner; }
inline unsigned byte_of(uint64_t w) { return unsigned(w >> 48) & 0xff; }
inline uint64_t child_word(uint64_t off, uint64_t tag, unsigned byte) {
  return off | tag | uint64_t{byte} << 48;
}
inline unsigned fp_of(uint64_t slot) { return unsigned(slot >> 48); }

// The 16-bit fingerprint of a key, over its bytes read as unsigned.
uint16_t fingerprint(std::string_view key) noexcept;

// ---------------------------------------------------------------- layouts
// clang-format off
inline constexpr unsigned k_slots = 64;
struct leaf_array {
  uint64_t lock;             //   0  volatile: {generation:32, version:32}, bit 0 locked
  uint32_t level;            //   8  the key position its keys are below (= its depth)
  uint32_t pad;              //  12
  uint64_t bitmap;           //  16  volatile: used slots (rebuilt from slot != 0)
  uint64_t slot[k_slots];    //  24  {fingerprint:16, leaf offset:48}; commit word of
                             //      insert / update / remove of one record
};                           // 536 bytes
static_assert(sizeof(leaf_array) == 536);

enum class kind : uint8_t { n4 = 1, n16 = 2, n48 = 3, n256 = 4 };
struct inner {
  uint64_t lock;             //   0  volatile: {generation:32, version:32}
  uint8_t kind;              //   8  immutable from creation
  uint8_t pad;               //   9
  uint16_t nprefix;          //  10  prefix bytes stored after the children
  uint32_t level;            //  12  the position of the byte it branches on
  uint64_t eok;              //  16  the record whose key is exactly [0, level): commit word
  uint64_t child[1];         //  24  capacity(kind) child words: commit word of a new child
  // N48 only, after its 48 child words: uint8_t index[256], volatile
  // (byte -> child slot + 1, rebuilt from the child words' bytes);
  // then the prefix: key bytes [level - nprefix, level).
};
// clang-format on
inline constexpr size_t k_inner_header = 24;
inline unsigned capacity(kind k) {
  switch (k) {
    case kind::n4: return 4;
    case kind::n16: return 16;
    case kind::n48: return 48;
    default: return 256;
  }
}
inline size_t index_bytes(kind k) { return k == kind::n48 ? 256 : 0; }
inline size_t inner_size(kind k, size_t nprefix) {
  return k_inner_header + 8 * capacity(k) + index_bytes(k) + nprefix;
}

// clang-format off
struct root_block {
  uint64_t magic;            //  0
  uint64_t gen;              //  8  bumped at every open (persisted)
  uint64_t root;             // 16  node word of the tree (0: empty): commit word
};
// clang-format on

// ---------------------------------------------------------------- the index

class pending;  // write.cpp

class tree final : public bytes_index {
 public:
  static constexpr size_t k_max_key = 4096;
  static constexpr size_t k_max_value = common::k_max_value;
  static constexpr uint64_t k_magic = 0x5452414f522d50ull;  // "P-ROART"

  tree(pm::pool& p, open_kind kind, const index_config& cfg);

  using bytes_index::insert, bytes_index::update, bytes_index::upsert, bytes_index::remove,
      bytes_index::lookup, bytes_index::scan;
  bool insert(std::string_view key, std::string_view value) override;
  bool update(std::string_view key, std::string_view value) override;
  bool upsert(std::string_view key, std::string_view value) override;
  bool remove(std::string_view key) override;
  bool lookup(std::string_view key, std::string* value) override;
  size_t scan(std::string_view from, size_t count, record_buffer& out) override;
  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) override;
  // The u64 fast path: no string per call.
  std::optional<uint64_t> lookup(uint64_t key) override;
  size_t scan(uint64_t from, size_t count, record* out) override;

  check_result check() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

 private:
  // --- nodes
  leaf_array* array_at(uint64_t w) const { return p_.ptr<leaf_array>(off_of(w)); }
  inner* inner_at(uint64_t w) const { return p_.ptr<inner>(off_of(w)); }
  const common::kv_block* leaf_at(uint64_t slot) const { return common::kv_at(p_, off_of(slot)); }
  std::string_view leaf_key(uint64_t slot) const { return common::kv_key(leaf_at(slot)); }
  static uint8_t* n48_index(inner* n) { return reinterpret_cast<uint8_t*>(&n->child[48]); }
  static const char* prefix_of(inner* n) {
    auto k = static_cast<kind>(n->kind);
    return reinterpret_cast<const char*>(n) + k_inner_header + 8 * capacity(k) + index_bytes(k);
  }
  // --- lock words {generation: 32, version: 32}: bit 0 locked, bit 1
  // obsolete (replaced), the version in steps of 4. A word of an older
  // generation is stale whatever its bits (see the header).
  static constexpr uint64_t k_locked = 1, k_obsolete = 2, k_step = 4;
  // Makes a node's volatile fields current: a stale node rebuilds them under
  // its lock word taken by CAS; waits while another thread rebuilds. Safe
  // beside lookups and other readers.
  void fresh(uint64_t* lock, leaf_array* a, inner* n);
  void fresh(leaf_array* a) {
    if (!current(__atomic_load_n(&a->lock, __ATOMIC_ACQUIRE))) [[unlikely]] fresh(&a->lock, a, nullptr);
  }
  void fresh(inner* n) {
    if (!current(__atomic_load_n(&n->lock, __ATOMIC_ACQUIRE))) [[unlikely]] fresh(&n->lock, nullptr, n);
  }
  bool current(uint64_t w) const { return (w >> 32) == gen_ && !(w & k_locked); }
  // Optimistic readers (lookups): the version to validate, waiting while a
  // writer holds the node (its odd version covers the store AND its flush,
  // so a validated read never returns an unpersisted state).
  uint64_t read_version(uint64_t* lock, leaf_array* a, inner* n);
  static bool validate(const uint64_t* lock, uint64_t v) {
    std::atomic_thread_fence(std::memory_order_acquire);
    return __atomic_load_n(lock, __ATOMIC_RELAXED) == v;
  }
  // Writers: lock a node by upgrading the version they read (false: it
  // changed, restart). Nobody waits while holding a lock word, so the order
  // in which a writer takes two (node, then parent) cannot deadlock.
  // Every held lock word (and fresh()'s rebuild) is inside a section of
  // passes_, opened just before the CAS: a lock word of this generation
  // that stays held while no writer is inside is damage (a clean open
  // trusts them), not a writer to wait for (common/marker_passes.hpp).
  bool upgrade(uint64_t* lock, uint64_t v) {
    return passes_.take(p_.thread_slot(), [&]() noexcept {
      return __atomic_compare_exchange_n(lock, &v, v | k_locked, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    });
  }
  bool try_upgrade_parent(uint64_t* plock, uint64_t pv, uint64_t* held) {
    if (upgrade(plock, pv)) return true;
    write_unlock(held);
    return false;
  }
  void write_unlock(uint64_t* lock) {
    __atomic_fetch_add(lock, k_step - k_locked, __ATOMIC_RELEASE);
    passes_.leave(p_.thread_slot());
  }
  // Unlocks and marks a replaced node: lookups inside it restart. A node
  // is unlinked before it is marked, so a pinned thread whose walk meets
  // it restarts and cannot reach it again: met twice, it is damage.
  void write_obsolete(uint64_t* lock) {
    uint64_t w = __atomic_load_n(lock, __ATOMIC_RELAXED);
    __atomic_store_n(lock, ((w & ~k_locked) + k_step) | k_obsolete, __ATOMIC_RELEASE);
    passes_.leave(p_.thread_slot());
  }
  // A walk met `node` obsolete (`met`: the last one it met under its pin).
  void met_obsolete(const void*& met, const void* node) const {
    if (node == met) corrupt("an obsolete node is still in the tree (damaged pool)");
    met = node;
  }
  // One step of a wait for lock word `w` at *lock, held by another thread.
  [[gnu::noinline, gnu::cold]] void wait_held(unsigned& spins, const uint64_t* lock, uint64_t w) const;
  uint64_t* find_child(inner* n, unsigned b);
  bool bitmap_trusted() const;

  // --- reads (tree.cpp)
  // Lookups, without the tree lock: optimistic descent validated per node,
  // pinned in an epoch. out(leaf) may run more than once (restarts).
  template <class Out>
  bool read(std::string_view key, Out&& out);
  // Scans walk breadth first (tree.cpp), as the WORT family's do
  // (art/detail/tree.hpp): `seed` lists, in key order, what hangs right of
  // the path to the scan's start (node words, end-of-key records, and the
  // path's leaf array with its leaves asked for); each pass reads its list
  // in order, records and arrays whose leaves were asked for, and from the
  // first node word on, `expand` replaces every node word by what it holds
  // (an array: its leaves asked for; an inner node: its end-of-key record
  // and children), the next pass's list. Every line is asked for where its
  // entry is listed, a whole list before it is read: a scan waits about
  // once per level, not once per node. A list stops where the records
  // guessed below it fill the walk; a walk that left entries out ("cut") is
  // followed by another from the key after its last (no writer runs beside
  // a scan: the gate).
  static constexpr size_t k_batch = 4096;      // records a walk lists for
  static constexpr uint64_t k_entry_read = 8;  // a list entry: a kv block's offset | 8; an array word | 8: its leaves asked for
  struct walk_list {
    uint64_t* e;
    size_t n = 0, guessed = 0, want = 0;
    bool full() const { return guessed >= want; }
  };
  struct walk_state {
    std::string_view from;
    const leaf_array* edge = nullptr;  // the path's array: its records below `from` are skipped
    bool cut = false;                  // an entry was left out
    walk_list now, next;
  };
  // Records guessed below child word w and the bytes of it to ask for,
  // told by a sibling (`model`: 0 if none).
  struct child_guess {
    size_t records, bytes;
  };
  child_guess guess_from(uint64_t model, uint64_t w);
  void seed(uint64_t w, unsigned pos, walk_state& s);
  // Inner node n's end-of-key record (if `eok`) and children from key byte
  // lo into g while it is not full. Out of line: its array stays off the
  // frames of seed's recursion (4096 levels for the longest keys).
  [[gnu::noinline]] void list_node(inner* n, bool eok, unsigned lo, uint64_t model, walk_state& s, walk_list& g);
  void ask_array(uint64_t w, walk_list& g);
  void expand(walk_state& s, size_t i);
  // One walk of up to `want` records from `from` into sink; false: the
  // sink stopped it.
  template <class Sink>
  bool walk(std::string_view from, size_t want, Sink& sink, bool& cut);
  // Walks until the sink stops or the tree ends; next_want(w): the next
  // walk's count after one of w.
  template <class Sink, class Next>
  void walks(std::string_view from, size_t want, Sink& sink, Next next_want);
  // Out of line: its arrays (~1.3 KB) stay off the walk's frame.
  template <class Sink>
  [[gnu::noinline]] bool scan_array(leaf_array* a, std::string_view from, bool bounded, Sink& sink);

  // --- writes (write.cpp); the exclusive lock is held
  enum { k_insert, k_upsert, k_update, k_remove };
  bool put(std::string_view key, std::string_view value, int mode);
  int try_put(std::string_view key, std::string_view value, int mode, const void*& met);
  uint64_t new_leaf(pending& pb, std::string_view key, std::string_view value);  // flushed
  uint64_t new_array(pending& pb, unsigned level);                              // not flushed
  uint64_t new_inner(pending& pb, kind k, unsigned level, const char* prefix, unsigned nprefix);
  void place(inner* n, uint64_t c);
  // parent: the word naming node w; plock: the lock word of its owner.
  // Both hold locks taken by the caller; they release them (the caller
  // retires w: a throw after the unlocks must not reach its unlock path).
  void split(uint64_t* plock, uint64_t* parent, uint64_t w, unsigned pos);
  void grow(pending& pb, uint64_t* plock, uint64_t* parent, uint64_t w, unsigned pos, uint64_t c);
  void swing(uint64_t* word, uint64_t v);  // fence (new blocks durable), store, flush, fence
  void unlink_array(inner* pnode, uint64_t* parent, uint64_t w);

  // --- verification (verify.cpp)
  std::string check_node(uint64_t w, unsigned pos, std::string& path, uint64_t& n);
  [[gnu::noinline]] std::string check_array(uint64_t w, unsigned pos, const std::string& path, uint64_t& n);
  [[gnu::noinline]] std::string check_inner(uint64_t w, unsigned pos, std::string& path, uint64_t& n, inner*& nd);
  bool leaf_ok(uint64_t s) const;
  void trace_node(pm::pool::trace_sink& sink, uint64_t w, unsigned pos);
  struct census {
    uint64_t records = 0, arrays = 0, used_slots = 0, inner[5] = {}, depth_sum = 0;
  };
  void count_node(uint64_t w, unsigned depth, census& c);
  [[noreturn]] void corrupt(const std::string& what) const {
    throw error(errc::corrupt, "roart: " + what);
  }

  pm::pool& p_;
  root_block* root_ = nullptr;
  uint32_t gen_ = 1;
  uint64_t root_lock_ = 0;  // DRAM: the lock word of the root word's owner
  unsigned cap_ = k_slots;  // records per leaf array (param `leaf`; tests split early)
  common::mutant_switch<mutant> mut_;
  common::writer_gate gate_;  // writers pass it; scans close it shared, check/stats/trace alone
  mutable common::marker_passes passes_;  // sections hold the lock words (upgrade)
};

}  // namespace pmindex::art::roart
