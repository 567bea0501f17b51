// Optimistic lock coupling for the WORT-family trees (Leis et al., "The ART
// of practical synchronization", ART-OLC), both key layouts.
//
// Every node has a version lock (sync::optimistic_lock: even = free, odd =
// held, +2 per critical section); the root word has one of its own. A
// lookup reads no versions at all ("LOOKUPS" below) unless a writer gets in
// its way; then, as every writer's descent, it descends with lock coupling
// (the validated descent), without writing: it reads a node's version before the node's
// fields, reads the child word, reads the child's version, then validates
// the node (lock coupling), so a child it goes on to was the node's child
// at that moment; its last step validates the node whose word gave the
// answer. A failed validation restarts the operation from the root.
// A writer descends the same way, then takes the locks it needs by UPGRADING
// the versions it read (a CAS from that version; if the node changed since,
// the upgrade fails and the writer restarts): the node it changes in place;
// also the node whose word it swings when it replaces a node (growth,
// copy-on-write) or puts a node above it (prefix split), or the root lock
// for the root word; for a remove, every node it unlinks. It holds them
// around the commit store AND its flush and fence, so a reader that read the
// new word fails validation until it is durable: no reader returns a state a
// crash could take back (what the one reader-writer lock gave before).
// Blocks a writer unlinks are retired through the pool's epochs; every
// operation runs pinned, so what a reader still holds is never reused.
//
// Where the versions live: in DRAM, in a table of stripes a node's offset
// hashes to, not in the node. The persistent layouts (and every existing
// pool) stay as they are, and no lock word survives a crash to be reset.
// Two nodes may share a stripe: a reader then restarts more often than it
// must, never less; a writer that needs both takes the stripe once
// (lock_set, which also checks that both versions agree).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "art/detail/layout.hpp"
#include "sync/writer_gate.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/sync/epoch.hpp"
#include "sync/optimistic_lock.hpp"

namespace pmindex::art::detail {

using sync::optimistic_lock;

// Test hooks (builds with PMINDEX_MUTANTS; tests/unit/wort_race_test.cpp).
// g_before_lock: called once (then cleared) by the next writer between its
// descent and its locks, where another writer's change makes its plan
// stale. g_stale_locks: writers take locks without the version check (the
// bug the check prevents: a change planned on a stale node is committed).
// g_before_unlock: called once (then cleared) by the next writer whose
// commit is stored and durable, before it releases its locks (a reader
// started there must wait for the release). g_unchecked_reads: lookups'
// lock-free walks skip a check (the bug it prevents: a word whose writer
// still holds its lock is returned): bit 0 the gate's (quiet_gate), bit 1
// the locks' (read_path).
inline std::atomic<std::function<void()>*> g_before_lock{nullptr};
inline std::atomic<std::function<void()>*> g_before_unlock{nullptr};
inline std::atomic<bool> g_stale_locks{false};
inline std::atomic<unsigned> g_unchecked_reads{0};
inline void run_hook([[maybe_unused]] std::atomic<std::function<void()>*>& h) {
#ifdef PMINDEX_MUTANTS
  if (auto* f = h.load(std::memory_order_relaxed)) [[unlikely]]
    if (h.exchange(nullptr)) (*f)();
#endif
}
inline void before_lock() { run_hook(g_before_lock); }

// A lock and the version a descent read from it.
struct seen {
  optimistic_lock* lock;
  uint64_t version;
  bool still() const { return lock->validate(version); }
  // For a node whose header depth disagrees with where it was found: false
  // while a writer changes it (a prefix split stores the header, then swings
  // the word above it, holding the node's lock: restart); if nothing moved,
  // the pool is damaged (recovery repairs every split a crash left): a
  // typed error, not an endless restart.
  bool still_or_damaged(const char* index) const {
    if (!still()) return false;
    throw error(errc::corrupt, std::string(index) + ": a node's depth disagrees with its position");
  }
};

// Where a descent for a key ended: the word that names its leaf (or where
// it would hang), the leaf (0: absent), and the lock guarding that word
// with the version read. Holds only while owner.still().
struct found {
  uint64_t* slot;
  uint64_t lw;
  seen owner;
};

// What a descent means to an operation that needs the key present (update,
// remove): go on, return false (absent, validated), or restart.
enum class settled { present, absent, restart };
inline settled settle(bool descended, const found& f) {
  if (!descended) return settled::restart;
  if (f.lw) return settled::present;
  return f.owner.still() ? settled::absent : settled::restart;
}

class node_locks {
 public:
  static constexpr unsigned k_bits = 14;  // 16384 stripes, 128 KiB

  node_locks() : stripes_(new optimistic_lock[size_t{1} << k_bits]()) {}

  // The version of the root word's lock / of node w's, once no writer holds it.
  seen see_root() { return {&root_, root_.read_begin()}; }
  seen see(uint64_t w) {
    optimistic_lock* l = of(w);
    return {l, l->read_begin()};
  }

  optimistic_lock* root() { return &root_; }
  // The lock of the node named by child word w (nodes are 64-byte aligned).
  optimistic_lock* of(uint64_t w) {
    return &stripes_[(off_of(w) >> 6) * 0x9e3779b97f4a7c15ull >> (64 - k_bits)];
  }
  static constexpr size_t dram_bytes() { return (size_t{1} << k_bits) * sizeof(optimistic_lock) + 64; }

 private:
  std::unique_ptr<optimistic_lock[]> stripes_;
  alignas(64) optimistic_lock root_{};  // read by every descent: a line of its own
};

// LOOKUPS read no versions. Lock coupling costs a lookup a load of a lock
// per node, and that measured ~25-30% of a 1-thread WORT lookup (loads on
// the way or all at the end alike). A
// lookup instead walks with plain acquire loads (tree.hpp: walk):
//  - Under the pin every block it meets stays readable, and every commit is
//    one atomic store, so each word it reads is one some writer stored.
//  - What it returns held at a moment during the call: a node is changed
//    only while linked (writers validate the path to it; an unlinked node
//    keeps its last state) and keeps the keys below it for its life, so
//    each node read, at the moment it was read (or unlinked), led to the
//    key if the key was there. The one exception is a WORT/WOART prefix
//    split that has stored the node's new header and not yet swung the word
//    above it: the header's depth then disagrees with the position, and the
//    walk gives up (-1). A slot reused while the walk reads a node (a digit
//    removed, another added in the same slot) leads below the wrong digit,
//    where no leaf has the key: "absent", true at that remove.
//  - Durability: a writer stores a word only under its node's lock (or, in
//    a node not yet published, before the store that publishes it) and
//    holds that lock until the store is durable; so a word read with
//    acquire is durable once its node's lock is seen free afterwards, or
//    once its writer is seen outside the writer gate afterwards (it raised
//    its gate flag before the lock and lowers it after the release).
// So the first walk checks nothing on the way and ends by asking the gate
// whether any writer is inside (quiet_gate: a load per writer slot, lines
// that only writers write); if one is, a second walk checks each node's
// lock after reading its words (read_path); if a lock is held there, the
// validated descent (lock coupling), which waits.
struct quiet_gate {
  const common::writer_gate& g;
  void note(uint64_t) {}
  bool free() const {
#ifdef PMINDEX_MUTANTS
    if (g_unchecked_reads.load(std::memory_order_relaxed) & 1) [[unlikely]]
      return true;
#endif
    return g.quiet();
  }
};
class read_path {
 public:
  explicit read_path(node_locks& l) : l_(l) {}
  // w: the next node, read from the last one noted (whose lock is checked
  // now, after its words were read).
  void note(uint64_t w) {
    if (last_) held_ |= l_.of(last_)->is_locked();
    last_ = w;
  }
  bool free() {
    std::atomic_thread_fence(std::memory_order_acquire);  // (the walk's loads first)
#ifdef PMINDEX_MUTANTS
    if (g_unchecked_reads.load(std::memory_order_relaxed) & 2) [[unlikely]]
      return true;
#endif
    bool held = held_ | l_.root()->is_locked();
    if (last_) held |= l_.of(last_)->is_locked();
    return !held;
  }

 private:
  node_locks& l_;
  uint64_t last_ = 0;
  bool held_ = false;
};

// A lookup's lock-free walks: walk(c) with the gate's check, then, if that
// did not decide, with the locks' (walk: 1 found, 0 absent, -1 undecided).
// -1: the caller takes the validated descent.
template <class Walk>
int lock_free_walks(const common::writer_gate& g, node_locks& l, Walk&& walk) {
  quiet_gate unchecked{g};
  if (int r = walk(unchecked); r >= 0) return r;
  read_path checked(l);
  return walk(checked);
}

// The locks one writer holds, taken by upgrade and released together (each
// unlock bumps the version: a reader that saw the node before fails
// validation). Destruction releases them (an insert that fails for lack of
// space throws before its commit: nothing was changed under them).
class lock_set {
 public:
  lock_set() {
#ifdef PMINDEX_MUTANTS
    ignore_versions_ = g_stale_locks.load(std::memory_order_relaxed);
#endif
  }
  lock_set(const lock_set&) = delete;
  lock_set& operator=(const lock_set&) = delete;
  ~lock_set() { release(); }

  // Takes s.lock if it still shows s.version; false if it does not (the
  // caller restarts). A stripe held already counts if the versions agree.
  bool upgrade(const seen& s) {
    for (unsigned i = 0; i < n_; ++i)
      if (at(i).lock == s.lock) return at(i).version == s.version;
    uint64_t v = s.version;
    if (ignore_versions_) [[unlikely]] {
      if (!s.lock->try_lock()) return false;  // (g_stale_locks: whatever changed meanwhile)
    } else if (!__atomic_compare_exchange_n(&s.lock->word_, &v, v + 1, false, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED)) {
      return false;
    }
    if (n_ < k_inline)
      inline_[n_] = s;
    else
      more_.push_back(s);
    ++n_;
    return true;
  }
  void release() {
    if (n_) run_hook(g_before_unlock);
    for (unsigned i = 0; i < n_; ++i) at(i).lock->unlock();
    n_ = 0;
    more_.clear();
  }
 private:
  // A u64 remove holds at most 17 (WORT: 16 levels and the root); a byte
  // key's remove may unlink a longer chain of nodes: those go to more_.
  static constexpr unsigned k_inline = 20;
  seen& at(unsigned i) { return i < k_inline ? inline_[i] : more_[i - k_inline]; }
  seen inline_[k_inline];
  unsigned n_ = 0;
  std::vector<seen> more_;
  bool ignore_versions_ = false;
};

// The record count kept since the open (for check()): a delta per pool
// thread slot, each on a line only its thread writes (one shared counter
// would be one more line every writer takes in turn). Read with the writer
// gate closed. -1: not known (a clean open does not count).
class record_count {
 public:
  record_count() : per_(new slot_delta[sync::epoch_manager::k_max_slots]) {}
  void add(uint32_t slot, int64_t d) {
    std::atomic<int64_t>& c = per_[slot].n;  // one writer per slot at a time
    c.store(c.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
  }
  int64_t get() const { return base_ < 0 ? -1 : base_ + deltas(); }
  void set(int64_t n) { base_ = n < 0 ? -1 : n - deltas(); }
  static constexpr size_t dram_bytes() { return sync::epoch_manager::k_max_slots * sizeof(slot_delta); }

 private:
  struct alignas(64) slot_delta {
    std::atomic<int64_t> n{0};
  };
  int64_t deltas() const {
    int64_t t = 0;
    for (uint32_t s = 0; s < sync::epoch_manager::k_max_slots; ++s) t += per_[s].n.load(std::memory_order_relaxed);
    return t;
  }
  std::unique_ptr<slot_delta[]> per_;
  int64_t base_ = -1;
};

// What a writer holds for its whole operation: its epoch pin and its pass
// through the writer gate.
struct writer_scope {
  uint32_t slot;  // the thread's pool slot
  sync::epoch_guard pinned;
  common::writer_gate::writer in;
  writer_scope(pm::pool& p, common::writer_gate& g) : slot(p.thread_slot()), pinned(p.epochs(), slot), in(g, slot) {}
};

// DRAM a tree's concurrency control takes beside the tree object (stats()).
inline constexpr size_t k_sync_dram_bytes =
    node_locks::dram_bytes() + record_count::dram_bytes() + common::writer_gate::dram_bytes();

}  // namespace pmindex::art::detail
