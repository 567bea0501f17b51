// PermART machinery shared by both layouts (keys=u64: tree.hpp, keys=bytes:
// bytes_tree.hpp): the root, slot reads at the current version or at a
// snapshot stamp, the commit of one slot (replace), version links, the
// locking patterns of an install and of a node's growth, 2-Log entry commit
// and views, and the slot repairs of recovery. Nothing here knows how keys
// are stored.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "art/permart/full.hpp"
#include "art/permart/node.hpp"
#include "art/permart/permart.hpp"
#include "art/permart/listed.hpp"
#include "common/atomics.hpp"
#include "common/marker_passes.hpp"
#include "common/mutant.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/sync/version_lock.hpp"
#include "sync/versioned_ptr.hpp"

namespace pmindex::art::permart::detail {

using common::load_acq;
using common::store_rel;

// A child of an inner node while building one: key byte and slot value.
struct entry {
  unsigned byte;
  uint64_t value;
};

// Blocks allocated for one write: freed again unless the write commits
// (a full pool then fails the operation and changes nothing).
class fresh_blocks {
 public:
  explicit fresh_blocks(pm::pool& p) : p_(p) {}
  ~fresh_blocks() {
    for (unsigned i = 0; i < n_; ++i) p_.free(offs_[i]);
  }
  uint64_t alloc(size_t size) { return keep(p_.alloc_or_throw(size)); }
  uint64_t try_alloc(size_t size) { return keep(p_.alloc(size)); }  // 0: the pool is full
  // A remove's block: from the free space, else from the pool's remove
  // reserve; throws pool_full when that is empty too (write_retry waits).
  uint64_t alloc_for_remove(size_t size) {
    if (uint64_t o = p_.alloc_for_remove(size)) return keep(o);
    throw error(errc::pool_full, "pool " + p_.path() + " is full (no block for a remove)");
  }
  void commit() { n_ = 0; }
  bool any() const { return n_ != 0; }

 private:
  uint64_t keep(uint64_t o) {
    if (o) offs_[n_++] = o;
    return o;
  }
  pm::pool& p_;
  uint64_t offs_[24];  // a split: up to 17 leaves and a node; bytes: + a key and a value block
  unsigned n_ = 0;
};

// Removes on a full pool: each takes from the pool's remove reserve one
// block of the class of the leaf it replaces (a copy of that leaf's shape,
// or a version link of that size), and retires that leaf, which pays the
// block back once reclaimed. So the reserve needs one class per leaf shape
// and only as many blocks as removes run between two grace periods; a
// remove that finds it empty waits (unpinned) for one (write_retry).
inline constexpr uint32_t k_remove_reserve = 16;  // blocks per leaf class

// The size of an inner kind's struct (0 for other kinds).
inline uint64_t inner_kind_size(uint8_t k) {
  switch (static_cast<kind>(k)) {
    case kind::sparse: return sizeof(sparse);
    case kind::indirect: return sizeof(indirect);
    case kind::full: return sizeof(full);
    default: return 0;
  }
}

class core {
 protected:
  core(pm::pool& p, const index_config& cfg, bool log) : p_(p), mut_(cfg), log_(log) {}

  // Creates the root (created pools) or attaches and checks it (a root of
  // the layout before, old_magic: errc::bad_version); a dirty open
  // also clears its lock. The layout's recovery runs between the two calls.
  void open_root(open_kind k, uint64_t magic, uint64_t old_magic, const char* name);
  // Numbers this run (persisted) and starts the clock above every earlier stamp.
  void finish_open(open_kind k);

  header* hdr(uint64_t v) const { return p_.ptr<header>(untag(v)); }
  static uint64_t inner_size(uint8_t k) { return inner_kind_size(k); }

  // Children of an inner node in key order: f(byte, slot) -> false stops.
  // each_child_from starts at key byte `from` (a scan's start skips the
  // children below it without looking at them: up to 255 in a full node).
  template <class F>
  static bool each_child(header* n, F&& f) { return each_child_from(n, 0, f); }
  template <class F>
  static bool each_child_from(header* n, unsigned from, F&& f);
  static uint64_t* find_child(header* n, unsigned b);

  // --- scans (read.cpp, bytes_read.cpp)
  // What a slot likely holds, told by a sibling (`model`, read racily: a
  // hint): how many records to count on below it and how many of its lines
  // to ask for. A node's children were made alike (a dense or a sparse key
  // range), so a sibling tells. A leaf or a listed node counts half its
  // sibling's pairs or children (a leaf counted 1 beside big leaves asked for
  // 23 slots a scan100 never read at 1M; the fewest children, 2, asks for
  // many nodes never read; all of them cuts more walks); a full node half
  // the fewest it has (65). No sibling: a leaf's first line. leaf_bytes(
  // logged, cap): the lines of such a leaf to ask for; end_slot: the bytes
  // of an inner node's end slot, which follows its struct (keys=bytes: 8; a
  // full node's is asked for apart, at `tail`).
  struct slot_guess {
    size_t records, bytes;
    size_t tail = 0;  // a line past `bytes` to ask for too (0: none)
  };
  template <class LeafBytes>
  static slot_guess guess_from(const header* model, uint64_t end_slot, LeafBytes&& leaf_bytes) {
    if (!model) return {1, 64};
    const uint8_t k = __atomic_load_n(&model->kind, __ATOMIC_RELAXED);
    const unsigned cnt = __atomic_load_n(&model->count, __ATOMIC_RELAXED);
    if (k == uint8_t(kind::leaf)) {
      const bool logged = __atomic_load_n(&model->depth, __ATOMIC_RELAXED) == k_leaf_logged;
      return {std::max(1u, cnt / 2), leaf_bytes(logged, __atomic_load_n(&model->cap, __ATOMIC_RELAXED))};
    }
    if (k == uint8_t(kind::full))  // its slots are read in order
      return {k_indirect_cap / 2, sizeof(sparse), end_slot ? sizeof(full) : 0};
    return {std::max(2u, cnt / 2), (k == uint8_t(kind::indirect) ? sizeof(indirect) : sizeof(sparse)) + end_slot};
  }

  // --- slot reads
  uint64_t load_current(uint64_t* slot) const;          // raw value, stamp settled
  uint64_t load_at(uint64_t* slot, uint64_t ts) const;  // node at ts, or 0
  // A scan's read of a slot: at its snapshot (scan_not_atomic: current).
  uint64_t load_snap(uint64_t* slot, uint64_t ts) const {
    if (!mut_.on(mutant::scan_not_atomic)) return load_at(slot, ts);
    uint64_t c = load_current(slot);
    return is_link(c) ? 0 : c;
  }
  // A scan's start: takes its stamp (the caller is pinned) and reads the root.
  uint64_t snapshot_root(uint64_t& ts) {
    ts = clock_.snapshot_stamp();
    return load_snap(&root_->slot, ts);
  }

  // --- writes
  // Runs try_write() (-1: restart, else the result) pinned; on a full pool
  // reclaims this thread's retired blocks once and tries again; a remove
  // waits for the remove reserve instead (it cannot fail for lack of room).
  template <class F>
  bool write_retry(bool remove, F&& try_write);
  // A node's version lock (sync::version_lock), held inside a marker
  // section (opened once the word was seen free: a writer waits outside
  // it, so two writers waiting on one damaged word do not keep each other
  // waiting). A dirty open clears every lock word, a clean one trusts them,
  // so a damaged clean pool may hold a word locked or obsolete that no
  // writer will ever change; the first writer to reach that node waited or
  // restarted forever. Now errc::corrupt: a lock held while no other writer
  // is inside a section (common/marker_passes.hpp), or the same node found
  // obsolete twice under one pin (a node is unlinked before it is marked
  // obsolete, and a pinned writer's new walk cannot reach it again).
  class node_lock {
   public:
    node_lock(core& c, header* n);
    ~node_lock() {
      if (!ok_) return;
      sync::version_lock(n_->lock).unlock();
      markers_.leave(slot_);
    }
    node_lock(const node_lock&) = delete;
    node_lock& operator=(const node_lock&) = delete;
    bool ok() const { return ok_; }  // false: the node is obsolete (restart)
    void unlock_obsolete() {
      if (!ok_) return;
      sync::version_lock(n_->lock).unlock_obsolete();
      markers_.leave(slot_);
      ok_ = false;
    }

   private:
    // The writer section covers the time the lock is held, not the wait
    // for it (common/marker_passes.hpp).
    common::marker_passes& markers_;
    uint32_t slot_;
    header* n_;
    bool ok_ = false;
  };
  // Sets the pool's remove reserve aside: k_remove_reserve blocks of each
  // leaf shape of layout L (small, big, log leaf with 2-Log).
  template <class L>
  void keep_remove_reserve();
  // Under the parent's lock, if `slot` still holds `raw`: build(fb) makes
  // the new value, which replaces `raw`. Returns 1, or -1 to restart.
  template <class Build>
  int install(header* parent, uint64_t* slot, uint64_t raw, bool retire_old, Build&& build);
  // Growth of inner node `raw` by key byte b: in place while it has room
  // (add_child); else, under the parent's and the
  // node's locks, its children (without empty slots; links are collected)
  // and leaf(fb) at b go to build(fb, entries, n, links, nlinks&), whose
  // node replaces it. The old node and the dropped links (build may add
  // some) are retired.
  template <class Leaf, class Build>
  int grow(header* parent, uint64_t* slot, uint64_t raw, unsigned b, Leaf&& leaf, Build&& build);
  // Adds key byte b with leaf(fb) to listed node n in place, under n's lock.
  // 1: added; -1: restart (n replaced, or b added meanwhile); 0: no room.
  template <class Leaf>
  int add_child(header* n, unsigned b, Leaf&& leaf);
  // A new leaf of layout L (leaf.hpp, bytes_node.hpp) holding kv[0, n),
  // flushed (the publisher fences): small or big, a log leaf when 2-Log.
  template <class L>
  uint64_t new_leaf_of(fresh_blocks& fb, const typename L::pair_t* kv, unsigned n);
  // A remove's copy of leaf `old` without one pair (kv[0, n), n >= 1): of
  // the size n needs while the pool has room; else of old's own shape
  // (capacity, log entries), whatever n, from the remove reserve.
  template <class L>
  uint64_t removal_leaf(fresh_blocks& fb, const typename L::pair_t* kv, unsigned n, const header* old);
  // The leaf shape that fits n pairs, its block size, and a leaf of a
  // shape written at `off` (flushed, not fenced).
  template <class L>
  void shape_for(unsigned n, unsigned& cap, bool& logged) const {
    cap = n <= L::k_small ? L::k_small : L::k_big;
    logged = log_ && cap == L::k_big;
  }
  template <class L>
  static uint64_t leaf_bytes(unsigned cap, bool logged) {
    return logged ? sizeof(typename L::log_leaf_t) : L::size(cap);
  }
  template <class L>
  uint64_t write_leaf_at(uint64_t off, const typename L::pair_t* kv, unsigned n, unsigned cap, bool logged);
  // A new inner node of the smallest kind for n children, with header h
  // (depth, prefix) and `extra` bytes after the kind's struct, not flushed.
  uint64_t build_inner(fresh_blocks& fb, header h, const entry* e, unsigned n, uint64_t extra);
  // A version link standing for null, for a remove that replaces a block
  // of `gives_back` bytes (its leaf): 16 bytes while the pool has room,
  // else a reserve block of that leaf's class.
  uint64_t new_link(fresh_blocks& fb, uint64_t gives_back);
  void replace(uint64_t* slot, uint64_t old_raw, uint64_t new_raw, bool retire_old);

  // --- version links back to null
  // A remove that empties a slot leaves a version link there (its previous
  // version, for older snapshots). Once no snapshot can be older than the
  // link (a grace period after its stamp settled) it means null to every
  // reader, and holds a block: a note of its key lets a later write find it
  // and null the slot (clear_link), so removes give their space back. The
  // notes are DRAM; after a crash recovery nulls every link anyway.
  struct link_note {
    uint64_t stamp;    // the link's settled stamp
    uint64_t epoch;    // the pool's global epoch read after it settled
    uint64_t key;      // keys=u64: the key whose slot it is
    std::string bkey;  // keys=bytes
  };
  // After the remove that installed link `raw` (stamp settled by replace).
  void note_link(uint64_t raw, uint64_t key, std::string_view bkey) noexcept;
  // Runs clear(note) -> write result for up to 2 notes whose grace period
  // has passed (after each write), or for every note (`all`: at close, no
  // other thread runs).
  template <class Clear>
  void clear_links(bool all, Clear&& clear);
  // Under the parent's lock: *slot, still link `raw` stamped <= `stamp`,
  // becomes null and the link is retired. 1, 0 (a younger link), -1: restart.
  int clear_link(header* parent, uint64_t* slot, uint64_t raw, uint64_t stamp);
  bool links_noted() const { return nnotes_.load(std::memory_order_relaxed) != 0; }

  // --- 2-Log (E: a log entry type with `stamp` and `meta`)
  // Commits entry e, whose key and value are written: meta with UNPERSISTED,
  // flush its line, fence, clear the bit, settle its stamp.
  template <class E>
  void commit_log(E* e, uint64_t meta);
  // Applies the settled entries (current) or those stamped <= ts to the n
  // pairs in out: apply(out, n, entry, is_delete) -> new n. Waits while an
  // entry is UNPERSISTED (it may still be lost).
  template <class E, class P, class Apply>
  unsigned apply_logs(E (&log)[2], P* out, unsigned n, uint64_t ts, bool current, Apply&& apply) const;
  // A leaf's pairs with its log entries applied (see apply_logs), into out.
  template <class L, class Apply>
  unsigned view_of(header* h, typename L::pair_t* out, uint64_t ts, bool current, Apply&& apply) const;

  // --- recovery
  // Makes *slot a plain durable pointer (version links become null) and
  // resets the node's volatile fields; the node, or null. Checks only that
  // the node's first 64 bytes lie in the heap.
  header* recover_node(uint64_t* slot);
  // Keeps the durable (VALID) entries, bit cleared, and drops the rest.
  template <class E>
  void recover_log(E (&log)[2]);
  // Every block reachable from the root for tracing: the root and its
  // spare link (older versions), each node (size(h) bytes), version links
  // (none after recovery: it nulls them), and what
  // leaf(h) adds; slots(h, f) calls f(slot) for each slot of an inner node.
  template <class Size, class Slots, class Leaf>
  void trace_tree(pm::pool::trace_sink& sink, Size&& size, Slots&& slots, Leaf&& leaf);
  // An inner node a recovery can trust: check()'s shape rule (a listed
  // node's count within its capacity, its key bytes distinct).
  static bool inner_sane(header* h) { return check_inner_shape(h).empty(); }
  // A leaf of layout L whose capacity and count a recovery can trust.
  template <class L>
  static bool leaf_sane(const header* h) {
    return (h->cap == L::k_small || h->cap == L::k_big) && h->count != 0 && h->count <= h->cap &&
           (!leaf_logged(h) || h->cap == L::k_big);
  }

  // --- check() and stats() (quiescent tree)
  // The root (magic, lock), then walk() -> the first violation ("": none).
  template <class Walk>
  check_result check_root(uint64_t magic, Walk&& walk);
  // The slot word: untagged, allocated, settled, unlocked; `node` is set to
  // the node to check further (null for an empty slot or a link).
  std::string check_word(uint64_t* slot, header*& node) const;
  // A leaf's capacity for its count, its log entries well formed.
  template <class L>
  std::string check_leaf_shape(header* h) const;
  static std::string check_inner_shape(header* h);  // listed nodes: count, distinct key bytes
  // Figures of the current tree: node kinds, version links, log entries,
  // and records(leaf) summed over the leaves; slots(node, f) calls f(slot)
  // for each slot of an inner node.
  template <class L, class Slots, class Records>
  index_stats stats_of(Slots&& slots, Records&& records, size_t dram_self);

  // A reader's wait on a tagged slot or log entry: errc::corrupt if no
  // writer will untag it (common/marker_passes.hpp). Out of line and cold:
  // every level of every read inlines the test before it (core.cpp).
  [[gnu::noinline, gnu::cold]] void wait_tag(unsigned& spins, uint64_t* slot) const;
  [[gnu::noinline, gnu::cold]] void wait_log(unsigned& spins, uint64_t* meta) const;
  // node_lock's wait for a held lock, and its check of an obsolete node.
  [[gnu::noinline, gnu::cold]] void wait_lock(unsigned& spins, header* n);
  [[gnu::noinline, gnu::cold]] static void met_obsolete(const header* n);
  static void forget_obsolete() { t_obsolete_ = nullptr; }  // at each pin of write_retry
  static inline thread_local const header* t_obsolete_ = nullptr;  // the last one this thread met

  pm::pool& p_;
  root* root_ = nullptr;
  mutable sync::stamp_clock clock_;
  // Writers' passes through the sections that hold a tag or a lock: every
  // node_lock (each tag is set and cleared under the lock of the slot's or
  // the log entry's owner); mutable: const readers wait on it.
  mutable common::marker_passes markers_;
  common::mutant_switch<mutant> mut_;
  bool log_ = false;  // PermART (2-Log): big leaves carry two log entries
  std::mutex notes_mu_;
  std::deque<link_note> notes_;  // oldest first
  std::atomic<size_t> nnotes_{0};
};

template <class F>
bool core::each_child_from(header* n, unsigned from, F&& f) {
  switch (static_cast<kind>(n->kind)) {
    case kind::sparse: return listed_each_from(reinterpret_cast<sparse*>(n), from, f);
    case kind::indirect: return listed_each_from(reinterpret_cast<indirect*>(n), from, f);
    case kind::full: {
      auto* s = reinterpret_cast<full*>(n);
      for (unsigned b = from; b < 256; ++b)
        if (!f(b, &s->slots[b])) return false;
      return true;
    }
    default: return true;
  }
}

// Inline: every level of every lookup and scan calls them (out of line they
// cost PermART reads a call per level).
inline uint64_t core::load_current(uint64_t* slot) const {
  uint64_t v;
  // A tagged slot may still be lost by a crash: wait for its writer.
  for (unsigned spins = 0; (v = load_acq(slot)) & k_unpersisted;) wait_tag(spins, slot);
  if (v) sync::settle_stamp(&hdr(v)->stamp, clock_);
  return v;
}

inline uint64_t core::load_at(uint64_t* slot, uint64_t ts) const {
  uint64_t v;
  for (unsigned spins = 0; (v = load_acq(slot)) & k_unpersisted;) wait_tag(spins, slot);
  while (v) {
    header* h = hdr(v);
    if (sync::settle_stamp(&h->stamp, clock_) <= ts) return is_link(v) ? 0 : v;
    v = load_acq(&h->prev);  // the slot's value before h was installed
  }
  return 0;
}

inline uint64_t* core::find_child(header* n, unsigned b) {
  switch (static_cast<kind>(n->kind)) {
    case kind::sparse: return listed_find(reinterpret_cast<sparse*>(n), b);
    case kind::indirect: return listed_find(reinterpret_cast<indirect*>(n), b);
    case kind::full: return full_find(reinterpret_cast<full*>(n), b);
    default: return nullptr;
  }
}

template <class F>
bool core::write_retry(bool remove, F&& try_write) {
  for (int attempt = 0;; ++attempt) {
    try {
      auto g = p_.pin();  // every block seen stays allocated (no ABA on slots)
      forget_obsolete();
      for (;;) {
        int r = try_write();
        if (r >= 0) return r;
      }
    } catch (const error& e) {
      if (e.code() != errc::pool_full) throw;
      // Copy-on-write needs a block even to remove. A remove found the
      // reserve empty: the blocks it lent come back as the leaves their
      // borrowers replaced are reclaimed, which needs this thread unpinned.
      if (remove) {
        if (p_.wait_for_reserve()) continue;
        throw;
      }
      // An insert: first get back the blocks this thread retired (waiting
      // for the grace period a lagging pinned thread holds up).
      if (attempt == 1) throw;
      p_.reclaim_before_full();
    }
  }
}

template <class Clear>
void core::clear_links(bool all, Clear&& clear) {
  const uint64_t g = p_.epochs().global_epoch();
  for (unsigned done = 0; all || done < 2; ++done) {
    link_note n;
    {
      std::unique_lock lk(notes_mu_, std::try_to_lock);
      if (!lk.owns_lock() && !all) return;  // another writer is at it
      if (!lk.owns_lock()) lk.lock();
      if (notes_.empty()) return;
      // The notes' epochs grow from front to back, so the front expires first.
      if (!all && notes_.front().epoch + 2 > g && !mut_.on(mutant::link_nulled_early)) return;
      n = std::move(notes_.front());
      notes_.pop_front();
      nnotes_.store(notes_.size(), std::memory_order_relaxed);
    }
    write_retry(true, [&] { return clear(n); });
  }
}

template <class L>
void core::keep_remove_reserve() {
  p_.keep_for_removes(L::size(L::k_small), k_remove_reserve);
  p_.keep_for_removes(L::size(L::k_big), k_remove_reserve);
  if (log_) p_.keep_for_removes(sizeof(typename L::log_leaf_t), k_remove_reserve);
}

template <class Build>
int core::install(header* parent, uint64_t* slot, uint64_t raw, bool retire_old, Build&& build) {
  node_lock lk(*this, parent);
  if (!lk.ok() || load_acq(slot) != raw) return -1;
  fresh_blocks fb(p_);
  uint64_t v = build(fb);
  replace(slot, raw, v, retire_old);
  fb.commit();
  return 1;
}

template <class Leaf>
int core::add_child(header* n, unsigned b, Leaf&& leaf) {
  uint8_t* keys;
  uint64_t* slots;
  unsigned cap;
  if (n->kind == uint8_t(kind::sparse)) {
    auto* s = reinterpret_cast<sparse*>(n);
    keys = s->keys, slots = s->slots, cap = k_sparse_cap;
  } else if (n->kind == uint8_t(kind::indirect)) {
    auto* s = reinterpret_cast<indirect*>(n);
    keys = s->keys, slots = s->slots, cap = k_indirect_cap;
  } else {
    return 0;  // a full node has a slot for every byte
  }
  node_lock ln(*this, n);
  if (!ln.ok() || find_child(n, b)) return -1;
  const unsigned c = n->count;
  if (c >= cap) return 0;
  fresh_blocks fb(p_);
  const uint64_t l = leaf(fb);  // flushed, not fenced
  header* lh = hdr(l);
  lh->stamp = sync::k_stamp_tbd;
  store_rel(&lh->prev, uint64_t{0});  // before it, the slot was empty for every snapshot
  // Position c is past the count: no reader looks at it yet, recovery
  // neither. Tagged, so a reader that sees the count before it is durable
  // waits (as for replace's swing).
  keys[c] = uint8_t(b);
  store_rel(&slots[c], l | k_unpersisted);
  p_.flush(&keys[c], 1);
  p_.flush(&slots[c], 8);
  if (!mut_.on(mutant::publish_before_flush) && !mut_.on(mutant::count_before_child))
    p_.fence();  // leaf, byte, slot durable before the count
  __atomic_store_n(&n->count, uint8_t(c + 1), __ATOMIC_RELEASE);
  p_.flush(&n->count, 1);
  if (!mut_.on(mutant::flush_without_fence)) p_.fence();  // the count commits the child
  store_rel(&slots[c], l);
  p_.flush(&slots[c], 8);  // so a clean close keeps no tag
  sync::settle_stamp(&lh->stamp, clock_);
  fb.commit();
  return 1;
}

template <class Leaf, class Build>
int core::grow(header* parent, uint64_t* slot, uint64_t raw, unsigned b, Leaf&& leaf, Build&& build) {
  header* n = hdr(raw);
  if (int r = add_child(n, b, leaf); r != 0) return r;
  node_lock lp(*this, parent);
  if (!lp.ok() || load_acq(slot) != raw) return -1;
  node_lock ln(*this, n);
  if (!ln.ok()) return -1;
  if (find_child(n, b)) return -1;  // another writer added it: look again
  entry e[257];
  unsigned ne = 0;
  uint64_t links[257];
  unsigned nl = 0;
  fresh_blocks fb(p_);
  uint64_t l = leaf(fb);
  bool placed = false;
  each_child(n, [&](unsigned cb, uint64_t* s) {
    uint64_t v = load_acq(s);  // no tag: installers untag before unlocking
    if (!placed && cb > b) e[ne++] = {b, l}, placed = true;
    if (is_link(v))
      links[nl++] = v;
    else if (v)
      e[ne++] = {cb, v};
    return true;
  });
  if (!placed) e[ne++] = {b, l};
  uint64_t c = build(fb, e, ne, links, nl);  // may add links
  replace(slot, raw, c, false);
  fb.commit();
  ln.unlock_obsolete();
  // The old node and the links it held are reachable only by snapshots
  // older than the new node's (settled) stamp.
  p_.retire(untag(raw));
  for (unsigned i = 0; i < nl; ++i) p_.retire(untag(links[i]));
  return 1;
}

template <class L>
uint64_t core::new_leaf_of(fresh_blocks& fb, const typename L::pair_t* kv, unsigned n) {
  unsigned cap;
  bool logged;
  shape_for<L>(n, cap, logged);
  return write_leaf_at<L>(fb.alloc(leaf_bytes<L>(cap, logged)), kv, n, cap, logged);
}

template <class L>
uint64_t core::write_leaf_at(uint64_t off, const typename L::pair_t* kv, unsigned n, unsigned cap, bool logged) {
  const uint64_t size = leaf_bytes<L>(cap, logged);
  auto* h = p_.ptr<header>(off);
  std::memset(static_cast<void*>(h), 0, logged ? offsetof(typename L::log_leaf_t, kv) : sizeof(header));
  h->kind = uint8_t(kind::leaf);
  h->count = uint8_t(n);
  h->cap = uint8_t(cap);
  h->depth = logged ? k_leaf_logged : 0;
  std::memcpy(static_cast<void*>(L::pairs(h)), kv, n * sizeof(*kv));
  // Durable before it is published (the fence is in replace()).
  p_.flush(h, size);
  return off;
}

template <class L>
uint64_t core::removal_leaf(fresh_blocks& fb, const typename L::pair_t* kv, unsigned n, const header* old) {
  unsigned cap;
  bool logged;
  shape_for<L>(n, cap, logged);
  if (uint64_t off = fb.try_alloc(leaf_bytes<L>(cap, logged))) return write_leaf_at<L>(off, kv, n, cap, logged);
  // A full pool: old's shape holds n (fewer pairs than its view), and its
  // block pays the reserve back once reclaimed.
  cap = old->cap;
  logged = leaf_logged(old);
  return write_leaf_at<L>(fb.alloc_for_remove(leaf_bytes<L>(cap, logged)), kv, n, cap, logged);
}

template <class L, class Apply>
unsigned core::view_of(header* h, typename L::pair_t* out, uint64_t ts, bool current, Apply&& apply) const {
  unsigned n = h->count;
  std::memcpy(static_cast<void*>(out), L::pairs(h), n * sizeof(*out));
  if (!leaf_logged(h)) return n;
  return apply_logs(reinterpret_cast<typename L::log_leaf_t*>(h)->log, out, n, ts, current, apply);
}

template <class E>
void core::commit_log(E* e, uint64_t meta) {
  e->stamp = sync::k_stamp_tbd;
  store_rel(&e->meta, meta | k_log_unpersisted);  // after key and value (release)
  p_.flush(e, sizeof(E));
  if (!mut_.on(mutant::flush_without_fence)) p_.fence();
  store_rel(&e->meta, meta);
  p_.flush(e, sizeof(E));  // so a clean close keeps no tag
  sync::settle_stamp(&e->stamp, clock_);
}

template <class E, class P, class Apply>
unsigned core::apply_logs(E (&log)[2], P* out, unsigned n, uint64_t ts, bool current, Apply&& apply) const {
  for (auto& e : log) {
    uint64_t m;
    // An entry not yet durable may still be lost: wait for its writer.
    for (unsigned spins = 0; (m = load_acq(&e.meta)) & k_log_unpersisted;)
      wait_log(spins, &e.meta);
    if (!(m & k_log_valid)) break;  // entry 1 is used only after entry 0
    uint64_t s = sync::settle_stamp(&e.stamp, clock_);
    if (!current && s > ts) break;  // later than the snapshot (and so is entry 1)
    n = apply(out, n, e, (m & k_log_delete) != 0);
  }
  return n;
}

template <class Size, class Slots, class Leaf>
void core::trace_tree(pm::pool::trace_sink& sink, Size&& size, Slots&& slots, Leaf&& leaf) {
  sink.add(p_.off(root_), sizeof(root));
  if (root_->spare) sink.add(root_->spare, k_link_size);
  auto walk = [&](auto&& self, uint64_t v) -> void {
    if (!v) return;
    if (is_link(v)) {
      sink.add(untag(v), k_link_size);
      return;
    }
    header* h = hdr(v);
    sink.add(untag(v), size(h));
    if (h->kind == uint8_t(kind::leaf)) return leaf(h);
    slots(h, [&](uint64_t* s) { self(self, load_acq(s) & ~k_unpersisted); });
  };
  walk(walk, load_acq(&root_->slot) & ~k_unpersisted);
}

template <class Walk>
check_result core::check_root(uint64_t magic, Walk&& walk) {
  auto g = p_.pin();
  if (root_->magic != magic) return check_result::fail("root magic");
  if (root_->h.lock & 1) return check_result::fail("root lock held");
  std::string e = walk();
  if (!e.empty()) return check_result::fail("permart: " + e);
  return {};
}

template <class L>
std::string core::check_leaf_shape(header* h) const {
  // A small leaf holds at most k_small pairs; a big one (log leaf or not)
  // holds any count: a remove on a full pool keeps the replaced leaf's
  // shape (removal_leaf).
  if (!leaf_sane<L>(h) || (leaf_logged(h) && !log_)) return "bad leaf count/capacity";
  if (!leaf_logged(h)) return {};
  auto& log = reinterpret_cast<typename L::log_leaf_t*>(h)->log;
  for (unsigned j = 0; j < 2; ++j) {
    uint64_t m = log[j].meta;
    if (m & ~(k_log_valid | k_log_delete)) return "log entry with UNPERSISTED or unknown bits";
    if (m && !(m & k_log_valid)) return "log entry with bits but not VALID";
    if (j == 1 && m && !log[0].meta) return "log entry 1 used before entry 0";
    if (m && log[j].stamp == sync::k_stamp_tbd) return "unsettled log entry";
  }
  return {};
}

template <class L, class Slots, class Records>
index_stats core::stats_of(Slots&& slots, Records&& records, size_t dram_self) {
  uint64_t counts[6] = {}, recs = 0, log_entries = 0, links = 0;
  auto g = p_.pin();
  // Out of line, both: the walk recurses once per level (thousands of
  // levels for long byte keys), so its frame holds neither a leaf's view nor
  // the prefetch loop.
  auto leaf = [&](header* h) __attribute__((noinline)) {
    recs += records(h);
    if (leaf_logged(h))
      for (auto& e : reinterpret_cast<typename L::log_leaf_t*>(h)->log) log_entries += (e.meta & k_log_valid) ? 1 : 0;
  };
  // The children lie anywhere in the pool: asking for all their headers
  // before visiting the first overlaps the misses (a walk of 10M records
  // took 4 s waiting on one miss at a time, 0.5 s with the prefetches).
  auto prefetch = [&](header* h) __attribute__((noinline)) {
    slots(h, [&](uint64_t* c) {
      if (uint64_t w = load_acq(c)) __builtin_prefetch(hdr(w));
    });
  };
  auto walk = [&](auto&& self, uint64_t v) -> void {
    links += is_link(v);
    if (!v || is_link(v)) return;
    header* h = hdr(v);
    ++counts[h->kind];
    if (h->kind == uint8_t(kind::leaf)) return leaf(h);
    prefetch(h);
    slots(h, [&](uint64_t* c) { self(self, load_current(c)); });
  };
  walk(walk, load_current(&root_->slot));
  index_stats s;
  s.records = recs;
  auto u = p_.usage();
  s.pm_bytes_used = u.used_bytes;
  s.pm_bytes_reserved = u.reserved_bytes;
  s.dram_bytes = u.dram_bytes + dram_self;
  s.alloc_dram_bytes = u.dram_bytes;
  s.extra = {{"leaves", double(counts[uint8_t(kind::leaf)])},
             {"sparse_nodes", double(counts[uint8_t(kind::sparse)])},
             {"indirect_nodes", double(counts[uint8_t(kind::indirect)])},
             {"full_nodes", double(counts[uint8_t(kind::full)])},
             {"version_links", double(links)}};  // blocks, dropped by recovery
  if (log_) s.extra.push_back({"log_entries", double(log_entries)});
  return s;
}

template <class E>
void core::recover_log(E (&log)[2]) {
  // An entry is valid only if durable: its line held key and value before meta.
  bool valid = true;
  for (auto& e : log) {
    uint64_t m = e.meta;
    valid = valid && (m & k_log_valid);
    uint64_t w = valid ? m & ~k_log_unpersisted : 0;
    e.stamp = 0;
    if (w != m) {
      e.meta = w;
      p_.flush(&e.meta, 8);
    }
  }
}

}  // namespace pmindex::art::permart::detail
