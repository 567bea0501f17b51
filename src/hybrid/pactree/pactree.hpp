// PACTree: a persistent range index with a data layer of sorted-by-range
// nodes and a search layer updated asynchronously (Kim et al., "PACTree: A
// High Performance Persistent Range Index Using PAC Guidelines", SOSP'21).
// keys=u64 (the default: 8-byte keys and values in the slots) or keys=bytes
// (each record one kv block; the slot holds its key's prefix and offset).
//
// Data layer: a linked list of data nodes in the pool (next links; `prev`
// only names where a node merged away went), each holding
// up to 64 records (param `node`) in unsorted slots: a 64-bit bitmap of used
// slots (commit word of inserts and removes), one-byte fingerprints, the
// slots {key, value} (btree/detail/keys.hpp), a min anchor (the node's
// smallest possible key, immutable; the next node's anchor is its max), a
// permutation array (sorted order for scans) and a version lock.
//
// Search layer: anchor -> data node, a persistent radix tree in the pool
// (layer.hpp; the original's is a persistent ART under ROWEX), updated only
// by the background SMO thread. It is a HINT: a writer that splits or merges
// nodes leaves it to that thread, and readers walk the list right from a
// possibly stale anchor (left through `prev` from a node merged away).
//
// Commits (persist mode; every step one 8-byte store made durable before the
// next, writers hold the node's lock until the last one is durable):
//   insert: slot {key, value} flushed, fingerprint flushed, fence, bitmap bit
//     stored, flushed, fence: 3 flushes, 2 fences (keys=bytes: + the kv
//     block's lines, flushed before the same first fence);
//   update: keys=u64 the value word, 1 flush, 1 fence; keys=bytes a new kv
//     block, fence, the slot's value word swung, flush, fence;
//   remove: the bitmap bit cleared, 1 flush, 1 fence;
//   split (a full node n): an SMO log entry {split, n} (1 flush, 1 fence);
//     a new node m with the upper half (keys=bytes: + a key block for its
//     anchor), flushed, fence; n.next = m, flush, fence (the commit: m is in
//     the list); n.bitmap without the moved slots, flush, fence. A crash
//     leaves no link (m unreachable, reclaimed by tracing) or the link with
//     or without the bitmap store: recovery CLIPS n (clears n's slots whose
//     keys are >= n.next's anchor: copies m holds). Measured: 3.3 flushes
//     and 2.1 fences per insert at 1M random keys (1 split per ~32 inserts);
//   merge (a remove leaves n below half full and n + its right neighbour r
//     fit in 3/4 of a node, or leaves n empty: then r whole, so that no
//     emptied node stays in the list): log entry {merge, n, r}; r's records copied into
//     n's free slots, flushed, fence; n.bitmap with them, flush, fence (r
//     still linked: a crash here leaves copies the clip drops); n.next =
//     r.next, flush, fence (the commit: r leaves the list).
//   The log names the nodes to clip; clipping is idempotent and correct on
//   any node, so an entry left behind by a finished SMO is harmless.
// prev is read only in a node merged away (obsolete): the merge stores its
// left neighbour there. It is never persisted on purpose.
//
// Background SMO thread (started with the index, stopped at close): writers
// queue each finished SMO (in the order of their node locks; the queue is a
// ring with room for every log entry, so queueing never allocates: a
// bad_alloc under the lock left the node locked, and the next writer took
// the pool for damaged); the thread
// applies them to the search layer (split: add m's anchor; merge: zero r's
// leaf, then retire r through the epochs) and frees the log entry (persisted
// stores: the crash checker takes crash points in this thread). A split
// reserves the one block its layer insert may need (layer.hpp) before it
// commits, so a full pool fails the insert, never the layer. A writer whose
// log (16 entries) is full waits for it.
//
// Recovery: a persistent generation number, bumped at every open, makes
// every version lock word and permutation array of an older generation
// stale (lazy reset: a word left locked by a crash or kept by a clean close
// means nothing; a damaged word of the new generation is errc::corrupt when
// held with no writer inside a section, upgrade(), or obsolete with a prev
// that names no node on its left, prev_of()). A clean open reads nothing else: the layer is ready
// (instant restart). A dirty open clips the nodes named by non-free log
// entries and marks each node a logged merge had unlinked obsolete (prev =
// its left neighbour); after the pool's tracing (after_recovery()) it redoes
// what the logged SMOs had not applied -- a merged node's leaf zeroed and
// the node freed, the nodes right of a split's left node that have no leaf
// added -- then frees the entries. Unapplied SMOs are a suffix of the queue
// (entries are freed in apply order), so every node the layer names is in
// the list or a logged merge's victim, which tracing keeps allocated until
// the redo frees it. trace() reports the root, the logs, the layer's
// blocks, the nodes (listed or named by the layer), their anchor blocks and
// the live records' blocks.
//
// Full pools: space a remove frees reaches the heap late and in pieces
// (retired blocks wait in the limbo of the thread that retired them --
// merged nodes in the SMO thread's --, reclaimed ones in that thread's
// cache, and a chunk serves another size class only when all its blocks
// are back). An insert or a byte update that meets a full pool advances
// the epochs, has the SMO thread reclaim and give back what it holds,
// gives back its own cache, and retries (with_room, tree.cpp: 3 times). A
// split's reserved layer block, unused, goes back to a stash (of up to 32)
// for the next split instead of a thread's cache; make_room empties it. Measured (tests/unit/
// pactree_space_test.cpp): after a fill to the first pool_full, every
// record updated and removed, fills with new keys take 97-100% of the first
// fill again at 2 and 16 MiB, 1 and 2 threads, u64 keys, and 16 MiB byte
// keys; 2 MiB byte keys 85-100% (a chunk of 32 more or less). A byte update
// (copy-on-write) in a pool full in its block's size class is refused.
//
// Threads: optimistic version locks (the lock word holds {generation: 32,
// version: 32}, bit 0 locked, bit 1 obsolete). Readers validate; writers
// lock the one node they change (a merge also takes its right neighbour,
// by try-lock), persist, then unlock, so nothing a reader validated can be
// undone by a crash. Every operation pins an epoch (merged nodes and, with
// keys=bytes, replaced kv blocks are retired).
//
// Scans (`--params scan=`):
//   unsafe (default, as the original): each node is read as one validated
//     snapshot; keys strictly increase; a record present for the whole scan
//     is returned; not atomic across nodes.
//   safe: an atomic snapshot (the PermART paper's comparison). First up to
//     k_safe_tries (3) optimistic walks: the versions of all nodes read
//     are validated again at the end, a walk that meets a changed node
//     stops there. Then one walk that locks the nodes as it goes and holds
//     them to its end (two-phase: the records of the instant its last lock
//     was taken; writers of those nodes wait meanwhile), so a scan beside
//     writers finishes: a whole-index scan used to restart without end
//     (2-3 scans of 30,000 records in 8 s beside one writer). Stats:
//     safe_scan_retries (failed walks), safe_scan_locked (locking walks).
//     Measured (30,000 u64 records, one reader of full scans, one writer
//     of random inserts and removes, -O2, 2 busy cores): 260 scans/s
//     beside the writer (50 of 781 scans locked), 3,156/s without it;
//     scan=unsafe 168/s and 2,818/s; the restarting walk it replaces
//     76/s and 2,585/s here, 2-3 scans in 8 s in an ASan build.
//   Either way a scan builds a node's permutation array when it is stale
//   (taking the node's lock briefly) and runs pinned in an epoch.
//
// Bugs of the original avoided (tests/unit/pactree_test.cpp): keys with \0
// (compared as byte strings, never strcmp); a lookup miss returns nothing
// (no uninitialised value); scans run inside the epoch, `safe` is atomic; the
// search layer has one writer and grows a node by copying it, never in
// place under readers (pactree#1: a crash in the ART's N16 growth under
// load); fingerprints compare with AVX-512, AVX2 or SSE2 chosen at run
// time; log blocks are allocated per thread slot on first use (512 bytes
// each), no fixed 537 MB area.
// Caveats: the head node is never merged away; layer nodes emptied by merges
// stay (a copy of a node drops its zeroed words, nothing merges nodes).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "btree/detail/collect_calls.hpp"
#include "btree/detail/keys.hpp"
#include "hybrid/pactree/layer.hpp"
#include "common/marker_passes.hpp"
#include "common/mutant.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex::hybrid::pactree {

// The key layouts, fingerprints and DRAM inner layer shared with the B+-trees.
namespace detail = btree::detail;

using detail::entry;

// In the order of its mutant list (tests.cpp).
enum class mutant : unsigned {
  none,
  split_unlogged,     // a split writes no log entry (recovery cannot clip)
  merge_link_first,   // a merge unlinks r before n's bitmap takes r's records
  node_unflushed,     // a split links the new node before it is durable
  generation_ignored, // lock words of an older generation are trusted
  layer_unflushed,    // new search-layer nodes are published unflushed
};

// clang-format off
inline constexpr unsigned k_slots = 64;
struct dnode {
  uint64_t lock;           //    0  volatile {generation:32, version:32}
  uint64_t bitmap;         //    8  used slots: commit word of insert / remove
  uint64_t next;           //   16  right neighbour (0: last): commit word of split / merge
  uint64_t prev;           //   24  left neighbour: volatile (rebuilt at open)
  uint64_t low;            //   32  min anchor: u64 key, or key block offset (0: empty key)
  uint64_t perm_version;   //   40  volatile: the lock word the permutation was built at
  uint32_t perm_count;     //   48  volatile
  uint32_t pad[3];         //   52
  uint8_t fp[k_slots];     //   64  fingerprints of the used slots
  uint8_t perm[k_slots];   //  128  volatile: used slots in key order
  entry slot[k_slots];     //  192  {key, value}
};                         // 1216 bytes
static_assert(sizeof(dnode) == 1216);

enum smo_kind : uint64_t { k_smo_free = 0, k_smo_split = 1, k_smo_merge = 2 };
struct smo_entry {          // blocks are 16-byte aligned: kind and left always share a line
  uint64_t kind;           //   0  commit word, stored after left
  uint64_t left;           //   8  the node to clip at recovery
  uint64_t right;          //  16  merge: the absorbed node (written with left); split: 0
  uint64_t pad;            //  24
};                         //  32 bytes
inline constexpr unsigned k_log_entries = 16;  // 512-byte log block per thread slot
struct smo_log {
  smo_entry e[k_log_entries];
};

inline constexpr unsigned k_max_logs = 512;  // sync::epoch_manager::k_max_slots
struct root_block {
  uint64_t magic;          //   0
  uint64_t gen;            //   8  bumped at every open
  uint64_t head;           //  16  the first node (anchor: the smallest key); never changes
  uint64_t node_slots;     //  24  the `node` parameter it was built with
  uint64_t logs[k_max_logs];// 32  per thread slot: its SMO log block (0: none yet)
  uint64_t layer;          // 4128  the search layer's root word (layer.hpp)
};
// clang-format on

// The anchor of a data node and a search key as the layer's bytes (a u64:
// its 8 big-endian bytes).
template <class K>
struct anchors;
template <>
struct anchors<detail::u64_keys> {
  static std::string_view of_probe(uint64_t k, char* buf) noexcept {
    const uint64_t be = __builtin_bswap64(k);
    std::memcpy(buf, &be, 8);
    return {buf, 8};
  }
  static std::string_view of_node(const pm::pool& p, uint64_t node, char* buf) noexcept {
    return of_probe(__atomic_load_n(&p.ptr<dnode>(node)->low, __ATOMIC_RELAXED), buf);
  }
};
template <>
struct anchors<detail::byte_keys> {
  static std::string_view of_probe(const detail::bprobe& k, char*) noexcept { return k.s; }
  static std::string_view of_node(const pm::pool& p, uint64_t node, char*) noexcept {
    const uint64_t w = p.ptr<dnode>(node)->low;  // immutable
    return w ? common::kv_key(p, w) : std::string_view{};
  }
};

// One index over a key policy (u64_keys or byte_keys). Both take both sets
// of calls: keys=u64 implements the u64 calls and checks the byte calls
// (8-byte keys and values) into them; keys=bytes the reverse.
template <class K>
class tree final : public detail::collect_calls<tree<K>, K> {
  using base = detail::collect_calls<tree<K>, K>;
  friend base;  // the byte calls, scans and ranges (collect_calls.hpp)
  using key = typename K::key;
  using probe = typename K::probe;
  using probe_arg = typename K::probe_arg;

 public:
  // Root magics: "PACbyte2" / "PAC_u642" since the persistent search layer;
  // pools of the DRAM-layer layout ("PACbytes" / "PPAC_u64") are refused
  // with errc::bad_version.
  static constexpr uint64_t k_magic = K::k_blocks ? 0x3265747962434150ull : 0x323436755f434150ull;
  static constexpr uint64_t k_magic_v1 = K::k_blocks ? 0x6574796265434150ull : 0x3436755f43415050ull;
  tree(pm::pool& p, open_kind kind, const index_config& cfg);
  ~tree() override;

  using base::insert, base::update, base::upsert, base::remove, base::lookup, base::scan, base::range;
  bool insert(uint64_t k, uint64_t v) override;
  bool update(uint64_t k, uint64_t v) override;
  bool insert(std::string_view k, std::string_view v) override;
  bool update(std::string_view k, std::string_view v) override;
  bool remove(uint64_t k) override;
  std::optional<uint64_t> lookup(uint64_t k) override;
  bool lookup(std::string_view k, std::string* v) override;

  check_result check() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;
  void close() override;
  void abandon() override;
  // Tests: while held, the SMO thread applies nothing, so SMOs stay queued
  // and logged as a crash would find them (abandon() then leaves them to
  // the next open's redo). check(), trace() and close() wait for the queue:
  // release it before them.
  void hold_smo(bool on);
  // Tests: the optimistic walks a scan=safe scan tries before it locks the
  // nodes it reads (k_safe_tries; 0: every safe scan locks).
  void set_safe_scan_tries(unsigned n) noexcept { safe_tries_.store(n, std::memory_order_relaxed); }

 protected:
  bool after_recovery() override;

 private:
  // --- lock words (node.cpp)
  static constexpr uint64_t k_locked = 1, k_obsolete = 2, k_step = 4;
  bool current(uint64_t w) const noexcept { return uint32_t(w >> 32) == gen_ || mut_.on(mutant::generation_ignored); }
  bool obsolete(uint64_t w) const noexcept { return current(w) && (w & k_obsolete); }
  uint64_t read_begin(const dnode* n) const;  // waits while a writer holds it
  // One step of a wait for lock word `w` of n, held by another thread.
  [[gnu::noinline, gnu::cold]] void wait_held(unsigned& spins, const dnode* n, uint64_t w) const;
  static bool validate(const dnode* n, uint64_t v) noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);
    return __atomic_load_n(&n->lock, __ATOMIC_RELAXED) == v;
  }
  // A held lock word is inside a section of passes_, opened just before
  // the CAS that takes it: a word of this generation that stays held while
  // no writer is inside is damage (a clean open trusts the words of its
  // generation), not a writer to wait for (common/marker_passes.hpp).
  bool upgrade(dnode* n, uint64_t v) noexcept;  // lock from version v (false: it changed)
  void unlock(dnode* n) noexcept {
    __atomic_fetch_add(&n->lock, k_step - k_locked, __ATOMIC_RELEASE);
    passes_.leave(p_.thread_slot());
  }
  void unlock_obsolete(dnode* n) noexcept {
    __atomic_store_n(&n->lock, ((n->lock & ~k_locked) + k_step) | k_obsolete, __ATOMIC_RELEASE);
    passes_.leave(p_.thread_slot());
  }
  // The left neighbour an obsolete node n names (prev), checked: a damaged
  // pool may mark any node obsolete, and then prev is whatever bytes were
  // there. `w`: the obsolete nodes this walk met (see locate()).
  static constexpr unsigned k_met = 64;
  struct obsolete_met {
    const dnode* last[k_met];  // the last k_met, a ring
    unsigned n = 0;
    uint64_t total = 0;
  };
  uint64_t prev_of(const dnode* n, obsolete_met& w) const;

  // A structure modification on its way to the search layer: its log entry
  // (null under the mutant split_unlogged), thread slot and entry index.
  struct smo {
    smo_kind kind;
    uint64_t left, right;
    smo_entry* e;
    uint32_t log_slot, pos;
    uint64_t spare;  // split: the block reserved for its layer insert (layer.hpp)
  };

  // --- nodes (node.cpp)
  dnode* at(uint64_t off) const noexcept { return p_.template ptr<dnode>(off); }
  key low_of(const dnode* n) const noexcept { return K::low(p_, __atomic_load_n(&n->low, __ATOMIC_RELAXED)); }
  key key_of(const dnode* n, unsigned i) const noexcept {
    return K::of(p_, __atomic_load_n(&n->slot[i].key, __ATOMIC_RELAXED),
                 __atomic_load_n(&n->slot[i].value, __ATOMIC_ACQUIRE));
  }
  // The node whose range holds k, and the version its checks were made at
  // (the caller reads, then validates, or upgrades).
  dnode* locate(probe_arg k, uint64_t& v) const;
  dnode* lock_node(probe_arg k);
  int find_slot(const dnode* n, probe_arg k) const noexcept;  // -1: absent
  void put_slot(dnode* n, unsigned i, probe_arg k, uint64_t w);  // not committed
  bool insert_word(probe_arg k, uint64_t w);   // false: present
  bool update_word(probe_arg k, uint64_t w, uint64_t& old);
  bool remove_word(probe_arg k, uint64_t& old);
  smo split(dnode* n);                         // n locked and full; n stays locked; not queued
  void try_merge(dnode* n);                    // n locked
  void clip(dnode* n);                         // recovery: drop copies >= next's anchor
  unsigned sorted_slots(const dnode* n, uint8_t* out) const;  // used slots in key order

  // --- SMO log and background thread (tree.cpp)
  smo log_begin(smo_kind kind, uint64_t left, uint64_t right);  // persisted; may throw pool_full
  void log_release(const smo& s);                                // persisted free
  void queue(const smo& s);                // never allocates (an SMO that holds a log entry)
  void grow_ring(size_t by);               // under q_mu_
  void smo_thread();
  void apply(const smo& s);
  void stop_thread(bool drain);
  // --- room (tree.cpp)
  // f() (an operation that allocates, unpinned); when it meets a full
  // pool, make_room() and f() again, up to k_room_attempts times.
  static constexpr unsigned k_room_attempts = 3;
  template <class F>
  auto with_room(F&& f) -> decltype(f());
  void make_room();  // unpinned: retired blocks reclaimed, caches given back
  // The layer's reserved blocks (smo::spare): an unused one goes back to a
  // small stash and serves the next split, not to a thread's cache.
  uint64_t take_spare(size_t n);
  void stash_spare(uint64_t off) noexcept;
  void free_spares() noexcept;  // close, make_room
  void drain_smo();  // waits until every queued SMO is applied
  void recover_logs();  // dirty open, before tracing
  void redo_logs();     // dirty open, after tracing (after_recovery)
  std::string_view anchor_of(uint64_t node, char* buf) const noexcept { return anchors<K>::of_node(p_, node, buf); }

  // --- scans (scan.cpp)
  // Up to `count` records >= from in key order, as slot words (pinned by
  // the caller: kv blocks stay readable).
  // With `hi`, only records <= *hi (range()).
  void collect(probe_arg from, size_t count, std::vector<entry>& out, const key* hi = nullptr);
  bool collect_optimistic(probe_arg from, size_t count, std::vector<entry>& out, const key* hi);  // false: retry
  void collect_locked(probe_arg from, size_t count, std::vector<entry>& out, const key* hi);
  unsigned node_order(dnode* n, uint64_t& v, uint8_t* order);
  bool after(const entry& last, probe& p, std::string& buf) const;

  // --- verification (verify.cpp)
  std::string check_node(const dnode* n, const dnode* next) const;

  template <class F>
  auto pinned(F&& f) {
    auto g = p_.pin();
    return f();
  }
  [[noreturn]] void corrupt(const std::string& what) const { throw error(errc::corrupt, "pactree: " + what); }
  bool node_in_heap(uint64_t off) const noexcept { return p_.valid_block(off, sizeof(dnode)); }

  pm::pool& p_;
  root_block* root_ = nullptr;
  uint32_t gen_ = 1;
  unsigned cap_ = k_slots;  // param `node`
  bool safe_scan_ = false;  // param `scan`
  static constexpr unsigned k_safe_tries = 3;  // optimistic walks of a safe scan before it locks
  std::atomic<unsigned> safe_tries_{k_safe_tries};
  std::mutex locked_scan_mu_;  // one locking scan at a time (scan.cpp)
  std::atomic<uint64_t> scan_retries_{0}, scan_locked_{0};  // safe scans: failed optimistic walks, locking walks
  common::mutant_switch<mutant> mut_;
  mutable common::marker_passes passes_;  // sections hold the node locks (upgrade)
  search_layer<anchors<K>> layer_;
  // dirty open: the non-free log entries, for redo_logs()
  std::vector<smo_entry*> redo_;
  std::unordered_set<uint64_t> traced_leaves_;  // the data nodes the layer named at tracing

  // per thread slot: which log entries hold an SMO not yet applied (DRAM)
  std::unique_ptr<std::atomic<uint32_t>[]> busy_;
  // The SMO queue, a ring: an SMO is queued only while it holds a log entry,
  // so k_log_entries per thread slot that logged one since the open always
  // suffice. The ring grows in log_begin, before anything commits, so that
  // queue(), under node locks after the commit, never allocates (a
  // bad_alloc there left the node locked: every later writer waited).
  std::mutex q_mu_;
  std::condition_variable q_cv_, idle_cv_;
  std::vector<smo> ring_;                   // its size is its capacity
  size_t q_head_ = 0, q_len_ = 0;           // the queue: ring_[q_head_ ...], q_len_ SMOs
  std::vector<bool> ring_counted_;          // per thread slot: its entries have room in ring_
  bool applying_ = false, stop_ = false, drain_on_stop_ = true, held_ = false;
  std::thread bg_;
  uint64_t room_req_ = 0, room_done_ = 0;  // under q_mu_: make_room()'s asks of the SMO thread
  static constexpr size_t k_spare_stash = 2 * k_log_entries;
  std::mutex spare_mu_;
  std::vector<uint64_t> spares_;  // capacity k_spare_stash (stash_spare never allocates)
  std::atomic<uint64_t> splits_{0}, merges_{0}, applied_{0}, room_calls_{0};
  std::atomic<uint64_t> layer_spares_{0};  // layer inserts that took the split's reserved block
  uint64_t redone_ = 0;                    // SMOs redone at the last dirty open
};

}  // namespace pmindex::hybrid::pactree
