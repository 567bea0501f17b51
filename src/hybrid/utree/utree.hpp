// uTree: a DRAM B+-tree over a persistent sorted linked list, one list node
// per record (Chen et al., "uTree: a Persistent B+-Tree with Low Tail
// Latency", VLDB'20). keys=u64 (the default: the node holds the key and the
// value) or keys=bytes (the node holds the key's prefix and the offset of a
// kv block with the key and value bytes; keys up to 4096 bytes, values up to
// 128 MiB).
//
// What persists: only the list. A root block names a sentinel head node;
// every node is one 32-byte block (one cache line: the allocator's 32-byte
// class is 32-byte aligned), sorted by key:
//
//   lnode { key 0 | value 8 | next 16 (offset, low bits: flags) | reserved 24 }
//
// flags (low bits of next; blocks are 16-byte aligned): bit 0 DIRTY, "this
// line has a store that may not be durable yet" (below). Nothing else: a
// remove is one 8-byte store, so no node is ever marked deleted in the pool.
//
// What is in DRAM: leaves of up to `leaf` entries {key word, node offset},
// sorted, each covering the key range [low, next leaf's low), chained both
// ways, over the shared DRAM inner layer (btree/detail/inner_layer.hpp) as
// the search layer. Every open (created, clean or dirty) rebuilds them from
// the list, 3/4 full; the original keeps no recovery at all.
//
// Lookups: search layer, one leaf, one list node. A leaf is 64-byte
// aligned and its lines (header, key words, node offsets) are asked for at
// once when the search layer names it, and with u64 keys it keeps a copy
// of its next leaf's low (`high`), so its upper fence is checked without
// the next leaf's line. Before (`perf record`, `pmindex bench` lookups at
// 1M records, one thread), finding the leaf took 36% of the run, half of it
// waiting for the next leaf's header, and the search's probes then missed
// one after another: uTree looked up at 0.56x FPTree against the
// original's 0.71x under PiBench; now 0.80x (PiBench 0.73x). The original's
// leaf (FAST_FAIR) interleaves keys and pointers and searches linearly, so
// the node pointer sits in the line the key was found in.
//
// Locking (the original: a FAST_FAIR tree plus CASes on the list, which
// loses inserts whose view changed 10 times, nvm-datastructure#3): one
// optimistic version lock per DRAM leaf. The rule that makes the list safe:
// a node's next word is written only by a thread holding the lock of the
// leaf whose range holds that node's key (the head belongs to the first
// leaf). An operation on key k locks L(k); when its predecessor is not in
// L(k) (k goes first in L), it also locks the left neighbour P, whose last
// entry is the predecessor (or the head when P is the first leaf and empty).
// Locks are always taken right to left, so there is no deadlock. Every leaf
// but the first is non-empty outside a critical section: a remove that
// empties a leaf unlinks it (it holds P already), so the predecessor is
// always one leaf away. Unlinked leaves are freed after two pool epochs.
//
// Commits (persist mode; writers persist before they unlock, so a lookup,
// which validates its leaf's version, never returns what a crash can undo):
//   insert: a new node {key, value, next = succ} written and flushed, fence
//     (keys=bytes: its kv block's lines flushed before the same fence: the
//     node is unreachable until linked); pred.next = node|DIRTY, flush,
//     fence (the commit); pred.next = node (DIRTY cleared; not flushed: the
//     bit is harmless in the pool). 2 lines, 2 fences (+ the kv block).
//   update: node.next |= DIRTY, node.value = new (u64: the value; bytes: a
//     new kv block, flushed and fenced first), flush, fence, DIRTY cleared.
//     In place: the value word is 8-byte aligned, failure-atomic, and the
//     node's key never changes; out-of-place (a second node) would put two
//     nodes of one key in the list for a while, for nothing. 1 line, 1
//     fence (bytes: + the block, 2 fences). The old block is retired.
//   remove: pred.next = node.next|DIRTY, flush, fence (the commit), DIRTY
//     cleared; the node is retired through the epochs (a scan may stand on
//     it). 1 line, 1 fence.
// Why DIRTY: scans walk the list without locks and could see a link or a
// value before it is durable. A scan that reads a node whose next word has
// DIRTY flushes the node's line and fences before it uses what it read
// (link-and-persist), so nothing a scan returns, or skips because it was
// removed, can be undone by a crash. (A value is stored after the DIRTY bit
// with release order, and read before the next word with acquire order.)
//
// Recovery: nothing to repair but DIRTY bits (cleared and flushed on a
// dirty open); every node, link and (bytes) kv block is checked before it
// is read (errc::corrupt). Nothing is allocated: a node allocated but not
// linked, a removed node or a replaced kv block waiting for its epoch is
// not reached by trace() and goes back to the heap.
//
// Scans: the search layer gives a start node (the predecessor of `from` or
// the first key >= from), then the walk follows next words: sorted, no
// duplicates (the list is sorted at every instant, and the next word of an
// unlinked node is frozen); every record returned was present when read; a
// record present for the whole scan is returned. Not atomic.
//
// Bugs of the original avoided (tests/unit/utree_test.cpp): duplicate
// inserts return false and keep the list free of a second node (#1);
// concurrent inserts are never dropped (#3: locks, no bounded retries);
// reopening finds every key (the original had no recovery); removes free
// nodes through epochs (the original never freed them).
//
// Caveats: one allocation per insert (uTree's tail latency); every open
// walks the whole list (no instant recovery); leaves never merge unless they
// empty; keys=bytes compares keys that share their 8-byte prefix by reading
// their kv blocks.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "btree/detail/inner_layer.hpp"
#include "btree/detail/collect_calls.hpp"
#include "btree/detail/keys.hpp"
#include "common/mutant.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "sync/optimistic_lock.hpp"

namespace pmindex::hybrid::utree {

// The key layouts, fingerprints and DRAM inner layer shared with the B+-trees.
namespace detail = btree::detail;

using detail::entry;

// In the order of its mutant list (tests.cpp).
enum class mutant : unsigned {
  none,
  node_unflushed,  // an insert links its node before the node is durable
  pred_unflushed,  // an insert never flushes the predecessor's next word
  free_no_epoch,   // a remove frees its node at once (no grace period)
  high_off_by_one, // a split stores the left leaf's copy of its next's low one too high
};

// clang-format off
struct lnode {
  uint64_t key;       //  0  u64: the key; bytes: the key's prefix (head: 0)
  uint64_t value;     //  8  u64: the value; bytes: kv block offset. Commit word of an update
  uint64_t next;      // 16  successor offset | flags. Commit word of an insert / remove after this node
  uint64_t reserved;  // 24  0
};                    // 32 bytes: one line
static_assert(sizeof(lnode) == 32);
inline constexpr uint64_t k_dirty = 1;        // next: this line may hold a store not yet durable
inline constexpr uint64_t k_flag_bits = 15;   // blocks are 16-byte aligned

struct root_block {
  uint64_t magic;        //  0
  uint64_t head;         //  8  the sentinel node (no key); never changes
  uint64_t reserved[6];  // 16
};
// clang-format on

template <class K>
struct dleaf {
  sync::optimistic_lock lock;
  dleaf* next;          // atomic accesses; changes under this leaf's lock
  dleaf* prev;          // atomic accesses; changes under the left neighbour's lock
  uint32_t count;       // atomic accesses
  uint32_t dead;        // unlinked (set under the lock): go back to the search layer
  typename K::key low;  // immutable; bytes: a DRAM copy (low_copy)
  char* low_copy;
  // u64 keys: next's low (atomic accesses; changes with next, under this
  // leaf's lock), so that a lookup learns its leaf's upper fence from the
  // line it reads anyway, not from the next leaf's.
  uint64_t high;
  uint64_t slot[1];  // key words[cap], node offsets[cap]
};

template <class K>
class tree final : public detail::collect_calls<tree<K>, K> {
  using base = detail::collect_calls<tree<K>, K>;
  friend base;  // the byte calls, scans and ranges (collect_calls.hpp)
  using key = typename K::key;
  using probe = typename K::probe;
  using probe_arg = typename K::probe_arg;
  using leaf = dleaf<K>;

 public:
  static constexpr uint64_t k_magic = K::k_blocks ? 0x7365747942455254ull : 0x3436754545525455ull;
  tree(pm::pool& p, open_kind kind, const index_config& cfg);
  ~tree() override;

  using base::insert, base::update, base::upsert, base::remove, base::lookup, base::scan, base::range;
  bool insert(uint64_t k, uint64_t v) override;
  bool update(uint64_t k, uint64_t v) override;
  bool remove(uint64_t k) override;
  std::optional<uint64_t> lookup(uint64_t k) override;
  bool lookup(std::string_view k, std::string* v) override;

  check_result check() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

 private:
  // --- DRAM leaves (leaf.cpp)
  uint64_t* kw(leaf* l) const noexcept { return l->slot; }
  uint64_t* nd(leaf* l) const noexcept { return l->slot + cap_; }
  const uint64_t* kw(const leaf* l) const noexcept { return l->slot; }
  const uint64_t* nd(const leaf* l) const noexcept { return l->slot + cap_; }
  leaf* new_leaf(const key& low);
  void free_leaf(leaf* l) noexcept;
  unsigned count_of(const leaf* l) const noexcept;                         // clamped to cap_
  bool entry_less(const leaf* l, unsigned i, probe_arg k) const noexcept;  // entry i < k
  bool entry_is(const leaf* l, unsigned i, probe_arg k) const noexcept;
  key entry_key(const leaf* l, unsigned i) const noexcept;
  unsigned lower_bound(const leaf* l, unsigned c, probe_arg k) const noexcept;
  int find(const leaf* l, probe_arg k) const noexcept;  // -1: absent
  // The leaf whose range holds k and the version its checks were made at.
  leaf* locate(probe_arg k, uint64_t& v) const noexcept;
  leaf* lock_leaf(probe_arg k) noexcept;
  leaf* lock_left(leaf* l) noexcept;  // l locked: its left neighbour, locked (null: l is the first)
  static bool try_upgrade(leaf* l, uint64_t v) noexcept {
    return __atomic_compare_exchange_n(&l->lock.word_, &v, v + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
  }
  leaf* split(leaf* l);  // l locked and full: its upper half moves to a new leaf, returned locked
  void put_entry(leaf* l, unsigned pos, uint64_t w, uint64_t node) noexcept;
  void erase_entry(leaf* l, unsigned pos) noexcept;
  void unlink_leaf(leaf* l, leaf* left);  // both locked, l empty
  void bury(leaf* l);                     // after its unlock: freed two epochs later
  void rebuild(bool dirty);
  void attach(open_kind kind);  // the constructor's work: a new root, or the list read back (rebuild)
  void free_leaves() noexcept;  // every DRAM leaf (the destructor; a constructor that throws)

  // --- the list (list.cpp)
  lnode* node(uint64_t off) const noexcept { return p_.template ptr<lnode>(off); }
  uint64_t pred_of(leaf* l, unsigned pos, leaf* left) const noexcept;
  void link(lnode* pred, uint64_t target);    // the persisted 8-byte commit of insert and remove
  bool insert_word(probe_arg k, uint64_t w);  // false: present
  bool update_word(probe_arg k, uint64_t w, uint64_t& old);
  bool remove_word(probe_arg k, uint64_t& old);
  bool lookup_word(probe_arg k, uint64_t& w) const;  // pinned by the caller

  // --- scans (scan.cpp)
  uint64_t start_node(probe_arg from, const leaf** at) const;  // the head or a node; keys below `from` come first
  unsigned prefetch_nodes(const leaf* l) const;               // a scan's hint: l's list nodes
  void collect(probe_arg from, size_t count, std::vector<entry>& out, const key* hi = nullptr);

  bool node_ok(uint64_t off) const noexcept { return p_.valid_block(off, sizeof(lnode)); }
  [[noreturn]] void corrupt(const std::string& what) const { throw error(errc::corrupt, "utree: " + what); }

  pm::pool& p_;
  root_block* root_ = nullptr;
  uint64_t head_ = 0;
  unsigned cap_ = 32;  // param `leaf`
  common::mutant_switch<mutant> mut_;
  detail::inner_layer<K> layer_;
  leaf* first_ = nullptr;  // never unlinked

  std::mutex grave_mu_;
  std::vector<std::pair<leaf*, uint64_t>> grave_;  // unlinked leaves and the epoch they left at
  std::atomic<uint64_t> leaves_{0}, splits_{0}, unlinks_{0}, helps_{0};
  double rebuild_seconds_ = 0;
};

}  // namespace pmindex::hybrid::utree
