// P-Masstree: Masstree (Mao et al., "Cache Craftiness for Fast Multicore
// Key-Value Storage", EuroSys'12) made persistent by RECIPE's conversion (Lee
// et al., "RECIPE: Converting Concurrent DRAM Indexes to Persistent-Memory
// Indexes", SOSP'19). keys=u64 (the default: one 8-byte slice, values in the
// leaf) or keys=bytes (any byte strings; records in kv blocks).
//
// Structure. A trie of B+-trees, one LAYER per 8-byte key slice. In the layer
// at depth d a key is compared by its IKEY {slice, class}: slice = bytes
// [8d, 8d + 8) big-endian, zero-padded; class = how many of them the key
// has (0..8) when it ends in this layer, or 9 when it goes on. Ordering
// ikeys as (slice, class) orders keys as byte strings ("ab" < "ab\0" <
// "ab\0\0..."). At most one class-9 entry per slice: while one key has that
// slice it is a SUFFIX entry (its kv block holds the whole key, compared on
// a match); when a second one arrives the entry becomes a LAYER entry, the
// root word of the next layer's tree (value word bit 0 set). keys=u64 keys
// are one slice of class 8: one layer, nothing else.
//
// Every layer is a B+-tree whose nodes all live in the pool:
//   leaves: 15 slots (param `leaf`, tests use fewer so short histories
//     split), unsorted, ordered by an 8-byte PERMUTATION word (Masstree's:
//     count in bits 0..3, then the slots in key order, one nibble each, then
//     the free ones). The permutation is the commit word of every insert and
//     remove. Leaves form a B-LINK chain per layer: `next` and an immutable
//     low bound `low`; a reader whose key is >= next's low moves right, so a
//     leaf reached through stale inner nodes, or only through the chain, is
//     found. A leaf a remove empties is unlinked and freed (below); a
//     layer's first leaf stays, and so does an emptied layer (caveat).
//   inner nodes: up to 15 separators and 16 children (param `inner`),
//     immutable once published: an insert into one builds a new copy (two
//     when it splits) and swings ONE 8-byte word above it (a child word of
//     the first unchanged ancestor, or the layer's root word). One change
//     is made in place: a dropped leaf's child words are swung to the leaf
//     on its left, so a leaf may be named by a run of child words, and
//     after a crash between those swings, first from a separator above its
//     low bound (both valid for B-link descents, which move right from a
//     leaf at or below their key); the node's next copy names each leaf
//     once. RECIPE's
//     P-Masstree makes its inner nodes B-link nodes with permutations too;
//     copy-on-write inner nodes need no lock word, no sibling link and no
//     repair of an interrupted inner split, at ~5 lines flushed per leaf
//     split (one split per ~7 inserts).
//
// Commits (persist mode; each durable -- flushed and fenced -- before the
// lock that hides it from readers is released, so no reader sees a state a
// crash can take back):
//   insert (no split): the slot {slice, value} written and flushed, fence
//     (the slot must be durable before the permutation names it); the
//     slot's class byte lives in the permutation's line, stored before it
//     (a line persists a prefix of its stores); permutation stored, flushed,
//     fenced: 2 flushes, 2 fences (keys=bytes: + the kv block's lines).
//   update: keys=u64 in place: the value word is 8 bytes, failure-atomic,
//     stored, flushed, fenced under the leaf lock (1 flush, 1 fence);
//     keys=bytes out of place: a new kv block, fence, the slot's value word
//     swung, flush, fence; the old block retired through the epochs.
//   remove: the permutation without the slot: 1 flush, 1 fence; keys=bytes
//     the kv block is retired.
//   leaf split (leaf L full; all under L's lock, taken before its entries
//     are read): a new leaf R with the upper half and R.next = L.next,
//     flushed, fence (R durable before anything names it); L.next = R,
//     flush, fence: the COMMIT -- R is in the chain; L's copies of R's
//     entries are hidden by it (a reader drops entries of L >= R's low);
//     L's permutation without them, flush, fence; L unlocked; then the
//     parent: new inner node(s) flushed, fence, one swing, flush, fence
//     (when the root of a layer below the first splits, the swing is of
//     the layer entry's value word, under the lock of the leaf holding
//     it). A crash before the link leaves R unreachable (tracing reclaims
//     it); after it,
//     recovery CLIPS L (drops its entries >= next's low); after the swing
//     or not, the chain finds R (the B-link rule tolerates a missing parent
//     entry; check() counts such `chain-only` leaves).
//   emptied leaf L (a remove left it no entry; not the first child of its
//     parent; under split_mu_, then L's lock, then its left neighbour P's):
//     L's child words swung to the child on their left, flushed, fence (a
//     descent lands left of L and the chain leads right: valid before and
//     after a crash, L then an empty leaf only the chain holds); P.next =
//     L.next, flush, fence: the COMMIT, L unreachable (after a crash,
//     tracing reclaims it); L marked dead, P's offset left in it (volatile
//     words, under its lock: a reader or writer that reached L through a
//     parent read before the swing, or an old copy of the parent, goes on
//     from P, whose range now holds L's, moving right as ever) and retired
//     through the epochs. 2 + 1 flushes, 2 fences, beside the remove's own.
//   new layer (an insert meets a suffix entry of another key with the same
//     slice): the new layer's leaf (or leaves, one per shared slice) with
//     both records, flushed, fence, the entry's value word swung to the
//     layer's root (tag bit set), flush, fence: one 8-byte commit.
//
// Recovery: instant. Each leaf's first word is its LOCK WORD {generation:32,
// version:32}, never flushed on purpose (it shares the permutation's line,
// so it reaches the pool locked): the root's generation, bumped (persisted)
// at every open, makes every word of an older generation free (a damaged
// word of the new one, held with no writer inside a section, is
// errc::corrupt: lock()). A dirty open
// walks every layer to clip leaves an interrupted split left with copies of
// their right neighbour (the only repair); the pool then rebuilds its
// allocator from trace() (a block allocated but not linked is reclaimed,
// so nothing leaks -- the original's libvmmalloc lost it all).
//
// Threads: writers lock leaves (their lock words, by CAS), readers are
// optimistic (version read before, validated after, restart on a change;
// the lock is held through the flush and fence, so a validated read is
// durable). Lookups and scans take no lock.
//   A writer descends as a reader does, locks the leaf it found and makes
//   the B-link check again UNDER the lock: the leaf may have split between
//   the descent and the lock, and then the key belongs to a leaf on its
//   right (a leaf's low bound never changes, its range only shrinks):
//   unlock, move right, lock. A writer whose leaf is full splits it itself
//   under that lock, unlocks, and only then updates the parent.
//   The inner-node part of a split (copies and the one swing) runs under
//   split_mu_, a mutex only splitters take (1 insert in ~7 at the default
//   width, none of the record writes). Under it no inner node and no
//   layer root word changes but by its holder: it descends again by the
//   new separator (a path read before may be stale) and inserts it where it
//   falls; separators of leaves split meanwhile go in in whatever order
//   their splitters get the mutex (each is its leaf's immutable low bound,
//   and the chain finds a leaf whose separator is not in yet). A layer's
//   root word below the first is a value word in a leaf of the layer above,
//   copied when that leaf splits, so its swing takes that leaf's lock
//   (found again under split_mu_), like any write of the leaf.
//   Deadlock freedom: a thread holds at most one leaf lock, except that
//   split_mu_'s holder may then take one (two when it drops a leaf: the
//   leaf, then leaves on its left); nobody else holding a leaf lock waits
//   for split_mu_ or for another leaf lock. A new layer is made under the
//   leaf's lock only.
//   Writers touch no shared line but their leaves': they pass a writer
//   gate (sync/writer_gate.hpp: one exchange on their own thread slot's
//   line, a read of a flag no writer writes). check(), trace() and stats()
//   close it, so they may run beside writers (Python's len() and check()
//   do) and see the trie still.
//   Every operation runs pinned in an epoch (replaced inner nodes and kv
//   blocks are retired).
//
// Scans: depth first through the layers, leaf by leaf along the chains,
// each leaf one validated snapshot; sorted, no duplicates, a record present
// for the whole scan is returned; not an atomic snapshot. The inner nodes
// of the descent name the leaves that follow (leaf_path): a scan prefetches
// a few leaves ahead of the chain, and keys=bytes asks for a leaf's record
// blocks before it emits the leaf before it (scan.cpp).
//
// Measured (`pmindex bench`, 100k sparse u64 keys, default widths): 3.3
// flushes and 2.5 fences per insert (splits included), 1 + 1 per update,
// 1 + 1 per remove; the same at 1M records and 2 threads, before and after
// writers stopped sharing the structure lock (the loaded 2-core machine gave each run about one core, so the 2-thread
// throughput there is noise, neither the gain nor a loss shown).
//
// Caveats: the inner-node part of splits runs one at a time, in the whole
// trie (split_mu_), while leaf splits and record writes run in parallel --
// Masstree locks the parent path hand over hand instead (its inner nodes
// are mutable); a pool that fills up between a leaf split and its parent's
// copy fails the insert with pool_full and leaves the new leaf found
// through the chain only (records unchanged; check() counts such leaves;
// its own split later inserts its new neighbour's separator, not its own);
// a leaf that is its parent's first child stays when emptied (reused by
// the keys of its range, which grows over dropped neighbours), and so do
// emptied layers (Masstree frees both); keys up to 4096 bytes; generations
// are 32 bits (a leaf last locked exactly 2^32 opens ago would look held).
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/atomics.hpp"
#include "common/kv_block.hpp"
#include "common/mutant.hpp"
#include "common/prefetch.hpp"
#include "common/marker_passes.hpp"
#include "sync/writer_gate.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex::masstree::pmasstree {

// In the order of its mutant list (tests.cpp).
enum class mutant : unsigned {
  none,
  perm_before_flush,  // the permutation names a slot that was never flushed
  sibling_unflushed,  // a split links its new leaf before the leaf is durable
  lock_trusted,       // lock words of an older generation are trusted
  layer_unflushed,    // a new layer is swung in before its leaf is durable
  no_recheck,         // a writer trusts the leaf its descent found (no B-link check under the lock)
  unlink_first,       // an emptied leaf leaves the chain before its parent stops naming it
  dead_trusted,       // a writer writes into a leaf a remove has unlinked
};

// ---------------------------------------------------------------- ikeys

inline constexpr unsigned k_more = 9;  // class of a key that goes on past this slice
// {slice, class} as one ordered number.
using ikey = unsigned __int128;
inline ikey make_ikey(uint64_t slice, unsigned cls) noexcept { return (ikey(slice) << 8) | cls; }
inline uint64_t slice_of(ikey k) noexcept { return uint64_t(k >> 8); }
inline unsigned class_of(ikey k) noexcept { return unsigned(k) & 0xff; }
// The ikey of byte key s in the layer at depth d (s.size() >= 8 d).
inline ikey ikey_at(std::string_view s, size_t d) noexcept {
  size_t off = 8 * d, rem = s.size() - off;
  uint64_t w = 0;
  if (rem) std::memcpy(&w, s.data() + off, rem < 8 ? rem : 8);  // (the empty key's data may be null)
  return make_ikey(__builtin_bswap64(w), rem > 8 ? k_more : unsigned(rem));
}

// ---------------------------------------------------------------- layouts
// Every node is a multiple of 64 bytes (so it starts on a cache line).
// clang-format off
inline constexpr unsigned k_width = 15;
enum node_kind : uint8_t { k_leaf = 1, k_inner = 2 };
struct slot_t {
  uint64_t slice;          //  0
  uint64_t value;          //  8  u64: the value; bytes: kv block offset, or layer root | 1
};
struct leaf {
  uint64_t lock;           //   0  volatile {generation:32, version:32}: bit 0 locked
  uint64_t perm;           //   8  permutation: commit word of insert / remove
  uint8_t cls[k_width];    //  16  per slot: its key's class (0..9); stored before perm (same line)
  uint8_t kind;            //  31  k_leaf, immutable
  uint64_t next;           //  32  right sibling (0: last of the layer): commit word of a split
  uint64_t low_slice;      //  40  immutable low bound {slice, class} (the layer's first leaf: {0, 0})
  uint64_t low_cls;        //  48
  uint64_t dead;           //  56  volatile: dead_mark() once a remove has unlinked the emptied leaf
                           //      (then slot[0].value names the leaf that was on its left)
  slot_t slot[k_width];    //  64  {slice, value}
};                         // 304 bytes (class 320)
static_assert(sizeof(leaf) == 304);

struct inner {
  uint64_t lock;           //   0  unused (0): inner nodes are immutable once published
  uint64_t nkeys;          //   8  separators (children: nkeys + 1)
  uint8_t cls[k_width];    //  16  separator classes
  uint8_t kind;            //  31  k_inner
  uint64_t key[k_width];   //  32  separator slices: key i is the low bound of child i + 1
  uint64_t child[k_width + 1];  // 152  children (leaves or inner nodes); a child word is swung in place
};                         // 280 bytes (class 320)
static_assert(sizeof(inner) == 280);

struct root_block {
  uint64_t magic;          //  0
  uint64_t gen;            //  8  bumped at every open (persisted)
  uint64_t root;           // 16  the first layer's root node: swung when its root splits
  uint64_t leaf_width;     // 24  parameters it was built with
  uint64_t inner_width;    // 32
};
// clang-format on
inline constexpr uint64_t k_layer_tag = 1;  // in a class-9 slot's value word: a layer root

// A permutation word: count in bits 0..3, slot of position i in bits 4i+4.
struct perm_t {
  uint64_t w;
  unsigned size() const noexcept { return unsigned(w & 15); }
  unsigned operator[](unsigned i) const noexcept { return unsigned(w >> (4 * i + 4)) & 15; }
  static perm_t empty() noexcept {
    uint64_t w = 0;
    for (unsigned i = 0; i < k_width; ++i) w |= uint64_t(i) << (4 * i + 4);
    return {w};
  }
  // The slot the next insert takes (the first free one).
  unsigned free_slot() const noexcept { return (*this)[size()]; }
  // With the first free slot placed at position pos.
  perm_t inserted(unsigned pos) const noexcept;
  // Without the slot at position pos (it becomes the first free one).
  perm_t removed(unsigned pos) const noexcept;
};

// ---------------------------------------------------------------- the index

template <bool Bytes>
class tree final : public bytes_index {
  using base = bytes_index;

 public:
  static constexpr uint64_t k_magic = Bytes ? 0x7365747942534d50ull : 0x343675534d50ull;
  static constexpr size_t k_max_key = 4096;
  static constexpr size_t k_max_value = common::k_max_value;
  tree(pm::pool& p, open_kind kind, const index_config& cfg);
  ~tree() override;

  using base::insert, base::update, base::upsert, base::remove, base::lookup, base::scan, base::range;
  bool insert(uint64_t k, uint64_t v) override;
  bool update(uint64_t k, uint64_t v) override;
  bool remove(uint64_t k) override;
  std::optional<uint64_t> lookup(uint64_t k) override;
  size_t scan(uint64_t from, size_t count, record* out) override;
  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override;
  bool insert(std::string_view k, std::string_view v) override;
  bool update(std::string_view k, std::string_view v) override;
  bool remove(std::string_view k) override;
  bool lookup(std::string_view k, std::string* v) override;
  size_t scan(std::string_view from, size_t count, record_buffer& out) override;
  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) override;

  check_result check() override;
  void trace(pm::pool::trace_sink& sink) override;
  index_stats stats() override;

  // For tests: the leaves of the first layer a scan from k is told of, in
  // order: the leaf the descent finds, then every leaf its leaf_path names.
  std::vector<uint64_t> named_leaves(ikey k);

 private:
  // A key being looked for: keys=u64 its value as the one slice; keys=bytes
  // its bytes (the ikey of each layer is taken from them).
  struct probe {
    uint64_t u = 0;
    std::string_view s;
    ikey at(size_t d) const noexcept {
      if constexpr (Bytes)
        return ikey_at(s, d);
      else
        return make_ikey(u, 8);
    }
  };

  // --- lock words (tree.cpp)
  static constexpr uint64_t k_locked = 1, k_step = 2;
  bool current(uint64_t w) const noexcept {
    return uint32_t(w >> 32) == gen_ || mut_.on(mutant::lock_trusted);
  }
  // A leaf's `dead` word once a remove unlinked it, of this generation
  // only: a word from before the open (or a damaged one) marks nothing, so
  // no reader of a reopened pool skips a leaf the structure still holds.
  uint64_t dead_mark() const noexcept { return uint64_t(gen_) << 32 | 0xdeadu; }
  bool is_dead(const leaf* l) const noexcept { return common::load_acq(&l->dead) == dead_mark(); }
  uint64_t read_begin(const leaf* l) const;  // waits while a writer holds it
  static bool validate(const leaf* l, uint64_t v) noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);
    return __atomic_load_n(&l->lock, __ATOMIC_RELAXED) == v;
  }
  // A held lock word is inside a section of passes_, opened just before
  // the CAS that takes it: a word of this generation that stays held while
  // no writer is inside is damage (a clean open trusts the words of its
  // generation), not a writer to wait for (common/marker_passes.hpp).
  void lock(leaf* l);
  void unlock(leaf* l) noexcept {
    __atomic_fetch_add(&l->lock, k_step - k_locked, __ATOMIC_RELEASE);
    passes_.leave(p_.thread_slot());
  }
  // One step of a wait for lock word `w` of l, held by another thread.
  [[gnu::noinline, gnu::cold]] void wait_held(unsigned& spins, const leaf* l, uint64_t w) const;
  struct leaf_guard {  // unlocks however the scope ends (an allocation may throw)
    tree& t;
    leaf* l;
    ~leaf_guard() {
      if (l) t.unlock(l);
    }
    void release() noexcept {
      t.unlock(l);
      l = nullptr;
    }
  };

  // --- nodes (tree.cpp)
  template <class T = leaf>
  T* at(uint64_t off) const noexcept {
    return p_.template ptr<T>(off);
  }
  static uint8_t kind_of(const void* n) noexcept { return static_cast<const uint8_t*>(n)[31]; }
  static ikey low_of(const leaf* l) noexcept { return make_ikey(l->low_slice, unsigned(l->low_cls)); }
  static ikey slot_key(const leaf* l, unsigned s) noexcept {
    return make_ikey(common::load_relaxed(&l->slot[s].slice), common::load_relaxed(&l->cls[s]));
  }
  static ikey sep_of(const inner* n, unsigned i) noexcept { return make_ikey(n->key[i], n->cls[i]); }
  // Children of n, a leaf named again counted once.
  static unsigned distinct_children(const inner* n) noexcept {
    unsigned c = 1;
    for (unsigned j = 1; j <= n->nkeys; ++j) c += std::find(n->child, n->child + j, n->child[j]) == n->child + j;
    return c;
  }
  // The path of a descent under split_mu_: the inner nodes and the child
  // taken in each.
  using path_t = std::vector<std::pair<inner*, unsigned>>;
  // The leaves of a layer after a descent's leaf, in key order, named by
  // the inner nodes the descent passed (a scan's prefetch hints). Inner
  // nodes are immutable once published, so no version is read; a child
  // word swung meanwhile gives the old child or its new copy, both in key
  // order, and both stay readable while the scan is pinned. Every leaf of a
  // layer is at the same depth, so a leaf is named without being read.
  // Leaves only the chain holds (a split whose separator is not in yet)
  // are not named: the names are a subsequence of the chain's leaves.
  class leaf_path {
   public:
    void push(const inner* n, unsigned i) noexcept {
      if (depth_ < k_max) {
        node_[depth_] = n;
        pos_[depth_] = i;
      }
      ++depth_;
    }
    void found(uint64_t leaf) noexcept { last_ = leaf; }  // the descent's leaf
    // The next leaf's offset, 0 when the layer has none (or the descent
    // was deeper than the cursor holds). A run of child words naming one
    // leaf names it once.
    uint64_t next(const tree& t) noexcept;

   private:
    uint64_t step(const tree& t) noexcept;  // the next child word at the leaves' depth
    static constexpr unsigned k_max = 24;  // levels (2^24 leaves at the narrowest width)
    const inner* node_[k_max];
    unsigned pos_[k_max];  // the child taken in node_[i]
    unsigned depth_ = 0;
    uint64_t last_ = 0;  // the leaf named last
  };
  // The leaf the inner nodes of layer `root` name for k (not read), each
  // inner node and child taken recorded in *path.
  uint64_t descend(uint64_t root, ikey k, leaf_path* path) const;
  // From l (at or left of k's leaf) right along the chain to the leaf whose
  // range holds k; v: the version its checks were made at (readers
  // validate it). A dropped leaf (reached through a parent read before it
  // stopped naming it, or an old copy of that parent) sends it to the leaf
  // that was on its left when it was dropped, which took its range.
  leaf* settle(leaf* l, ikey k, uint64_t& v) const;
  // The leaf of layer `root` whose range holds k (moving right along the
  // chain), and the version its checks were made at (readers validate it).
  leaf* locate(uint64_t root, ikey k, uint64_t& v) const { return settle(at(descend(root, k, nullptr)), k, v); }
  // The same leaf, locked: the B-link check is made again under the lock
  // (the leaf may have split between the descent and the lock).
  leaf* lock_leaf(uint64_t root, ikey k);
  // The root of layer d of key k (d >= 1), read through validated leaf
  // snapshots; it may be stale by the time it is used, which a descent
  // tolerates (a layer's first leaf is never freed; what it reads is pinned).
  uint64_t layer_root(const probe& k, size_t d) const;
  // Position in the permutation of the entry with ikey k (-1: none), or
  // where it would go (*ins).
  static int find(const leaf* l, perm_t pm, ikey k, unsigned* ins) noexcept;
  // Entries of l the chain hides (>= next's low) are not l's.
  unsigned visible(const leaf* l, perm_t pm, uint64_t nx) const noexcept;
  uint64_t new_leaf(uint64_t next, ikey low);  // allocated, header written, not flushed

  // --- writes (write.cpp)
  enum op { k_insert, k_update, k_remove };
  bool put_bytes(std::string_view k, std::string_view v, op o);  // the byte insert / update (tree.cpp)
  // 1: done, 0: not done (absent / present), -1: the leaf was full and has
  // been split (retry). `kv`: keys=bytes, the record's block (written and
  // flushed); keys=u64, the value.
  int attempt(const probe& k, uint64_t kv, op o, uint64_t& old);
  bool write(const probe& k, uint64_t kv, op o, uint64_t& old);
  void insert_at(leaf* l, perm_t pm, unsigned pos, ikey k, uint64_t w);  // l locked, not full
  // @pre l locked and full. Moves its upper half to a new leaf linked after
  // it; returns the new leaf, `sep` its low bound. l stays locked.
  uint64_t split_leaf(leaf* l, ikey& sep);
  // Takes split_mu_: unlinks and retires leaf l of layer d of key k if it is
  // still empty and not the first child of its parent (the header's
  // "Emptied leaves").
  void drop_leaf(const probe& k, size_t d, leaf* l);
  // Under split_mu_: adds `sep` -> `right` (a leaf of layer d of key k)
  // to the layer's inner nodes.
  void insert_parent(const probe& k, size_t d, ikey sep, uint64_t right);
  uint64_t rebuild_path(path_t& path, uint64_t root, ikey sep, uint64_t right, std::vector<uint64_t>& blocks,
                        uint64_t*& word);
  uint64_t make_layer(uint64_t kv_old, const probe& k, uint64_t kv_new, size_t d);  // durable, not linked
  void swing(uint64_t* word, uint64_t v);                                           // store, flush, fence

  // --- reads (scan.cpp)
  // `expect`: how many records the caller will likely take (sizes the
  // prefetch; SIZE_MAX: unknown).
  template <class Sink>
  bool scan_layer(uint64_t root, size_t d, const probe* from, size_t expect, Sink& sink);
  template <class Sink>
  void walk(const probe& from, size_t expect, Sink& sink) {
    auto g = p_.pin();
    scan_layer(common::load_acq(&root_->root), 0, &from, expect, sink);
  }
  // Asks for every line of a leaf at once (its live slots are spread over
  // all five, and a scan's leaves are not adjacent in the pool).
  void prefetch_leaf(uint64_t off) const noexcept { common::prefetch_lines(at<char>(off), sizeof(leaf)); }
  // keys=bytes: the record's block if k is present (pinned by the caller).
  uint64_t find_record(const probe& k) const;

  // --- verification (verify.cpp)
  struct census {
    uint64_t records = 0, leaves = 0, inners = 0, layers = 0, chain_only = 0, depth = 0;
  };
  std::string check_layer(uint64_t root, size_t d, std::string& prefix, census& c);
  // `leaves`: the leaves the layer's inner nodes name, in key order, each
  // once (`named`: the same, as a set).
  std::string check_inner(uint64_t off, ikey lo, const ikey* hi, unsigned depth, std::vector<uint64_t>& leaves,
                          std::unordered_set<uint64_t>& named, census& c);
  void trace_layer(pm::pool::trace_sink& sink, uint64_t root, unsigned depth);
  void clip_layer(uint64_t root, unsigned depth);  // recovery
  uint64_t leftmost(uint64_t root) const;
  // A block the heap has handed out (not checked while a dirty open
  // validates the pool: the heap is rebuilt from trace() after it).
  bool allocated(uint64_t off) const { return recovering_ || p_.is_allocated(off); }
  [[noreturn]] void corrupt(const std::string& what) const {
    throw error(errc::corrupt, "pmasstree: " + what);
  }

  pm::pool& p_;
  root_block* root_ = nullptr;
  uint32_t gen_ = 1;
  unsigned leaf_cap_ = k_width, inner_cap_ = k_width + 1;  // params `leaf` (slots), `inner` (children)
  bool recovering_ = false;
  common::mutant_switch<mutant> mut_;
  // Writers pass it; check(), trace() and stats() close it (no writer runs).
  common::writer_gate gate_;
  mutable common::marker_passes passes_;  // sections hold the leaf locks (lock())
  // The inner-node part of a split (copies and the one swing), one at a
  // time; taken by splitters holding no leaf lock. On a line of its own.
  struct alignas(64) {
    std::mutex m;
  } split_mu_;
};

}  // namespace pmindex::masstree::pmasstree
