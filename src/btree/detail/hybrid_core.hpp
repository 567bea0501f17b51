// The part FPTree and LB+-Tree share: a B+-tree whose leaves live in the
// pool as a singly linked chain (the only durable structure) and whose inner
// nodes live in DRAM (detail/inner_layer.hpp) and are rebuilt from the chain
// at every open. The leaf format and its persistence protocol come from a
// leaf policy `Ops` (fptree/leaf.hpp, lbtree/leaf.hpp), a template over the
// key kind `Ops::keys` (detail/keys.hpp: u64_keys or byte_keys):
//
//   using leaf, keys;  k_name; k_magic;  Ops(pm::pool&, const index_config&)
//   leaf_bytes(), max_entries(), inner_capacity(), dram_bytes()
//   init(l, low)                      empty leaf, no sibling (caller persists)
//   low(l), low_word(l), next(l)      fence key (immutable), live sibling offset
//   live(l), slot(l, i)               valid-slot bitmap (acquire load), slot i's words
//   lock(off, l) -> sync::optimistic_lock&
//   find(l, key, w&)                  optimistic read (caller validates)
//   insert(l, key, w) -> ins, update(l, key, w, old&), remove(l, key, old&)
//        lock held; durable on return (w: the value, or a record block)
//   split(l, r_off, r, key, w) -> low of r    lock held on a full l; r fresh;
//        links and commits r durably; inserts key into r when key >= low of r
//   relink(l, n), link_word(l)        lock held: l's live link = n (one 8-byte store,
//                                     not flushed); the 8-byte word that holds it
//   recover(l, next_leaf_or_null, dirty), count(l), check(l, has_next, next_low)
//
// Fence keys make the (lock-free, possibly stale) inner layer a hint: leaf L
// covers [low(L), low(next(L))); low never changes and next(L) changes only
// under L's lock, so a leaf whose fences hold the key under a validated
// version is the right one (B-link style: move right when the key is beyond
// the right fence, restart when it is left of the low fence). The fence
// check costs a read of the sibling leaf, so it is skipped when the inner
// layer's seqlock version did not move between the find() and the moment
// the leaf is locked or snapshotted (no split happened: the hint is exact).
//
// Synchronisation (the originals use HTM, which this machine lacks): one
// optimistic version lock per leaf. Writers lock the leaf, make the change
// durable (flush + fence) and only then unlock, so a reader, which validates
// the leaf's version after reading, never returns anything a crash could
// still undo (durable linearizability). Split writers also take the inner
// layer's mutex (lock order: leaf, then inner layer). Inner nodes are never
// freed before the layer is destroyed; leaves are retired through the
// pool's epochs once unlinked (EMPTY LEAVES below), and the byte layout
// retires record blocks (hybrid_bytes.hpp), so every operation of either
// layout runs pinned.
//
// Scans: forward, count-bounded, in key order. Each leaf is read as one
// validated snapshot (its entries sorted on the way out, or read in the
// order of its scan order hint if the policy keeps one: see "SCAN ORDER
// HINT" below, and the optional Ops calls k_order_hint, load_order(l, ord),
// store_order(l, ord), k_magic_v1 + k_layout_v1); the scan as a whole
// is not atomic: every returned record was present at the moment its leaf was
// read, keys are strictly increasing, and a record present for the whole
// scan is returned.
//
// Recovery (every open): the chain is walked from the anchor, every link
// checked to lie in the heap and (bytes) every fence key block and, on a
// dirty open, every record block validated before it is read (errc::corrupt
// otherwise); the policy repairs each leaf; the inner layer is built from
// the (low key, leaf) pairs. Nothing is allocated.
//
// EMPTY LEAVES. A remove that empties a leaf L (not the head) unlinks it,
// as a B+-tree's delete merges an empty node into its neighbour: the left
// neighbour P, whose range then grows to L's right fence, takes over L's
// range. After the remove has unlocked L (its empty bitmap durable), the
// remover locks P (found through the inner layer by the keys just below
// low(L), then moving right), then L (a try: LB+-Tree's striped locks give
// no global order; a miss lets P go and starts again), and, if L is still
// P's successor and still empty:
//   1. P's link = L's successor: ONE 8-byte store, persisted (the commit;
//      Ops::relink / link_word). Before it is durable L is an empty leaf
//      of the chain, after it L is unreachable: recovery's tracing frees
//      L (and its fence key block). No log is needed: FPTree's delete
//      micro-log exists to free the leaf in the allocator's own
//      transaction, which tracing replaces.
//   2. L's link = P (L forwards, in DRAM only: L is unreachable in any
//      crash image from here on, which is why this store must follow the
//      durable commit). A reader or writer that reaches L later (a stale
//      route, a scan that read P's old link) finds key >= low(L) > low(P)
//      = low(next(L)) and moves "right" to P, which holds L's range now,
//      as a stale B-link hint would; a scan walks on from P, dropping what
//      it already returned (its lower bound), so it neither skips nor
//      repeats. A forwarded leaf never passes a fence check, and a chain
//      of them ends at a live leaf (each forwards to one that was live
//      when it died, and so dies later, if ever).
//   3. inner_layer::erase(low(L)), while L is locked: the layer's version
//      moves, so nobody who routed to L before counts the route exact.
//   4. Unlock; L (and, bytes, its fence key block) is retired through the
//      epochs: nobody pinned can see the block reused.
// A remover that cannot take L's lock after k_drop_attempts tries leaves
// the empty leaf in the chain (it takes later inserts of its range, as
// every leaf did before removes unlinked them).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "btree/detail/inner_layer.hpp"
#include "btree/detail/keys.hpp"
#include "btree/detail/rank_sort.hpp"
#include "common/kv_block.hpp"
#include "common/mutant.hpp"
#include "common/prefetch.hpp"
#include "common/root_block.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "sync/optimistic_lock.hpp"

namespace pmindex::btree::detail {

enum class ins : uint8_t { done, exists, full };

// The mutants of both indexes' lists (tests.hpp), in their order; only
// FPTree's list goes on to scan_order_unchecked (LB+-Tree keeps no hint).
enum class hybrid_mutant : unsigned {
  none,
  kv_block_unflushed,
  leaf_unlink_unpersisted,
  scan_order_unchecked,
};

// clang-format off
// The pool root: one 64-byte block, written once at creation.
struct anchor {
  uint64_t magic;       //  0  Ops::k_magic
  uint64_t head;        //  8  offset of the leftmost leaf (low key: the smallest; never changes)
  uint64_t leaf_bytes;  // 16  allocation size of every leaf
  uint64_t reserved[5]; // 24
};
// clang-format on
inline constexpr uint64_t k_anchor_bytes = 64;

template <class Ops>
class hybrid_core {
 public:
  using K = typename Ops::keys;
  using leaf = typename Ops::leaf;
  using key = typename K::key;
  using probe_arg = typename K::probe_arg;

  hybrid_core(pm::pool& p, open_kind kind, const index_config& cfg)
      : p_(p), ops_(p, cfg), inner_(ops_.inner_capacity()), mut_(cfg) {
    if (kind == open_kind::created) {
      uint64_t h = p_.alloc_or_throw(ops_.leaf_bytes());
      leaf* hl = at(h);
      std::memset(static_cast<void*>(hl), 0, ops_.leaf_bytes());
      ops_.init(hl, 0);
      p_.persist(hl, ops_.leaf_bytes());  // the head leaf, durable before the anchor names it
      anchor_ = common::create_root<anchor>(p_, Ops::k_magic, [&](anchor& a) {
        a.head = h;
        a.leaf_bytes = ops_.leaf_bytes();
      }, k_anchor_bytes);
      inner_.build({{K::k_min, h}});
      return;
    }
    if constexpr (requires { Ops::k_magic_v1; }) {
      const uint64_t ro = p_.root();
      if (p_.valid_block(ro, k_anchor_bytes) && p_.template ptr<anchor>(ro)->magic == Ops::k_magic_v1)
        throw error(errc::bad_version, std::string(Ops::k_name) + ": the pool has " + Ops::k_layout_v1 +
                                           " (an older pmindex); recreate it with this version");
    }
    anchor_ = common::attach_root<anchor>(p_, Ops::k_magic, Ops::k_name, k_anchor_bytes);
    if (anchor_->leaf_bytes != ops_.leaf_bytes())
      throw error(errc::corrupt, std::string(Ops::k_name) + ": leaf size in the pool does not match its parameters");
    rebuild(kind == open_kind::dirty);
  }

  Ops& ops() noexcept { return ops_; }
  leaf* at(uint64_t off) const noexcept { return p_.ptr<leaf>(off); }

  // Inserts (key, w); a full leaf splits. Throws error(pool_full) with
  // nothing changed when no leaf (or fence key block) can be allocated.
  ins insert(probe_arg key, uint64_t w) {
    uint64_t off = lock_leaf(key);
    leaf* l = at(off);
    auto& lk = ops_.lock(off, l);
    ins r = ops_.insert(l, key, w);
    if (r == ins::full) {
      uint64_t roff = 0;
      typename K::key low;
      try {
        roff = p_.alloc(ops_.leaf_bytes());  // may also throw std::bad_alloc (a new chunk run's DRAM node)
        if (!roff) throw error(errc::pool_full, std::string(Ops::k_name) + ": the pool is full");
        low = ops_.split(l, roff, at(roff), key, w);
      } catch (...) {  // no leaf or no fence key block: l untouched, r never linked
        if (roff) p_.free(roff);
        lk.unlock();
        throw;
      }
      inner_.insert(low, roff, true);  // without DRAM it lags: r is linked, readers move right to it
      r = K::less(key, low) ? ops_.insert(l, key, w) : ins::done;  // split() placed it in r otherwise
      PMINDEX_ASSERT(r == ins::done);
    }
    lk.unlock();
    return r;
  }

  // Stores w in key's slot; `old` gets the word it replaced.
  bool update(probe_arg key, uint64_t w, uint64_t& old) {
    uint64_t off = lock_leaf(key);
    leaf* l = at(off);
    bool ok = ops_.update(l, key, w, old);
    ops_.lock(off, l).unlock();
    return ok;
  }

  // `old` gets the removed slot's value word. A remove that empties a leaf
  // (not the head) unlinks it (EMPTY LEAVES). The caller is pinned.
  bool remove(probe_arg key, uint64_t& old) {
    uint64_t off = lock_leaf(key);
    leaf* l = at(off);
    bool ok = ops_.remove(l, key, old);
    const bool emptied = ok && !ops_.live(l) && off != anchor_->head;
    ops_.lock(off, l).unlock();
    if (emptied) [[unlikely]] drop_leaf(off);
    return ok;
  }

  // Called unpinned after an allocation failed: the blocks retired before
  // (emptied leaves, record blocks) reach the allocator once no thread is
  // pinned in an older epoch (pool::reclaim_before_full waits for that).
  void reclaim() { p_.reclaim_before_full(); }

  // Runs f(leaf*) on the leaf whose fences hold key, as an optimistic read
  // repeated until it validates; returns the leaf's offset.
  template <class F>
  uint64_t read_leaf(probe_arg key, F&& f) {
    return read_leaf(key, std::forward<F>(f), [&](uint64_t& gv) {
      gv = inner_.version();
      return inner_.find(key);
    });
  }
  // The same, the first descent made by find(gv) (it sets gv to the inner
  // layer's version read before it), a scan's, which lists hints on its way.
  template <class F, class Find>
  uint64_t read_leaf(probe_arg key, F&& f, Find&& find) {
    for (bool first = true;; first = false) {
      uint64_t gv;
      uint64_t off;
      if (first) {
        off = find(gv);
      } else {
        gv = inner_.version();
        off = inner_.find(key);
      }
      for (bool direct = true; off;) {
        leaf* l = at(off);
        // A small leaf's lines are asked for together: the slot a lookup
        // reads is known only once the header (fingerprints) has arrived.
        if (ops_.leaf_bytes() <= k_prefetch_leaf_bytes) prefetch_leaf(l);
        auto& lk = ops_.lock(off, l);
        uint64_t v = lk.read_begin();
        if (!(direct && exact(gv))) {
          // n is 0 or a leaf offset even when torn with a writer (next words
          // only ever hold leaf offsets), so reading its low key is safe.
          uint64_t n = ops_.next(l);
          if (K::less(key, ops_.low(l))) {
            if (lk.validate(v)) break;  // restart from the top
            continue;
          }
          if (n && !K::less(key, ops_.low(at(n)))) {
            if (lk.validate(v)) {
              off = n;
              direct = false;
            }
            continue;
          }
        }
        f(l);
        if (lk.validate(v)) return off;
        direct = false;  // the leaf changed: a split may have moved the key
      }
      sync::optimistic_lock::backoff(0);
    }
  }

  // Byte keys (u64 keys: collect_ranked below): the valid slots of l whose
  // key is >= from, as {key, value} words, unsorted; with `slots`, every
  // valid slot (from is not looked at) and slot numbers in slots[]. An
  // optimistic read: the caller validates.
  template <class Rec>
  size_t collect(const leaf* l, const typename K::probe& from, Rec* out, uint8_t* slots = nullptr) const noexcept {
    size_t n = 0;
    for (uint64_t m = ops_.live(l); m; m &= m - 1) {
      const unsigned i = unsigned(std::countr_zero(m));
      const entry* e = ops_.slot(l, i);
      uint64_t k = load_relaxed(&e->key), v = load_acq(&e->value);
      if (slots)
        slots[n] = uint8_t(i);
      else if (K::less(K::of(p_, k, v), from))
        continue;
      out[n++] = {k, v};
    }
    return n;
  }

  // SCAN ORDER HINT (Ops::k_order_hint: FPTree). Leaves are unsorted, so a
  // scan must order every leaf it reads; ranking 64 slots was half of an
  // FPTree scan100. A leaf with a hint
  // keeps, after its entries, the slot numbers in key order as the last scan
  // that sorted it found them. Nothing else maintains it: writers never touch
  // it (no cost on inserts), it is never flushed, recovery ignores it, a
  // crash image or a fresh leaf may hold any bytes there. A scan trusts it
  // only when its first popcount(live) entries are live slots with strictly
  // increasing keys, in the same validated snapshot as the records: such a
  // list names distinct slots (a leaf's keys are distinct), so every live
  // slot, in key order. Bytes that pass are the order, whoever wrote them.
  // Otherwise the scan sorts the leaf and stores the order it found (stale
  // by then, perhaps: the next reader checks it again).
  static constexpr bool k_hinted = requires { Ops::k_order_hint; };
  static constexpr size_t k_stale = ~size_t{0};

  // l's records >= from in key order through its hint, or k_stale when the
  // hint is not l's order. An optimistic read: the caller validates.
  template <class Rec>
  size_t collect_hinted(const leaf* l, const typename K::probe& from, Rec* out) const noexcept {
    const uint64_t live = ops_.live(l);
    const unsigned n = unsigned(std::popcount(live));
    uint8_t ord[64];
    ops_.load_order(l, ord);
    size_t got = 0;
    uint64_t pk = 0, pv = 0;  // the previous slot's words
    for (unsigned i = 0; i < n; ++i) {
      const unsigned s = ord[i];
      if (s >= 64 || !(live >> s & 1)) return k_stale;
      const entry* e = ops_.slot(l, s);
      const uint64_t k = load_relaxed(&e->key), v = load_acq(&e->value);
      const auto key = K::of(p_, k, v);
      if (i && !K::less(K::of(p_, pk, pv), key) && !mut_.on(hybrid_mutant::scan_order_unchecked)) return k_stale;
      pk = k;
      pv = v;
      if (!K::less(key, from)) out[got++] = {k, v};
    }
    return got;
  }

  // u64 keys, a leaf without a usable order: its keys are ranked where they
  // are collected, and each record is copied once, from the leaf straight
  // to its place in out (the caller's output when it has room), in the same
  // optimistic snapshot (the caller validates). Collecting {key, value}
  // into a buffer, ranking a copy of its keys and then moving the records
  // copied each one three times. Returns how many records out holds; with
  // `ord` (a hinted leaf) every live slot is ranked, ord gets the slots in
  // key order and `skip` the records below `from` at the front of out.
  template <class Rec>
  size_t collect_ranked(const leaf* l, uint64_t from, Rec* out, uint8_t* ord, size_t& skip) const noexcept {
    alignas(64) uint64_t keys[64];
    uint8_t slot[64], rank[64];
    size_t n = 0;
    for (uint64_t m = ops_.live(l); m; m &= m - 1) {
      const unsigned i = unsigned(std::countr_zero(m));
      const uint64_t k = load_relaxed(&ops_.slot(l, i)->key);
      if (!ord && k < from) continue;
      keys[n] = k;
      slot[n++] = uint8_t(i);
    }
    key_ranks(keys, n, rank);
    for (size_t i = 0; i < n; ++i) out[rank[i]] = {keys[i], load_acq(&ops_.slot(l, slot[i])->value)};
    skip = 0;
    if (ord) {
      for (size_t i = 0; i < n; ++i) ord[rank[i]] = slot[i];
      while (skip < n && out[skip].key < from) ++skip;
    }
    return n;
  }

  // Byte keys: the m records of buf (one validated snapshot of l) in key
  // order, in out or (no hint) sorted where they are; returns where they
  // start. A hinted leaf's buf holds every live record (slots[i]: buf[i]'s
  // slot): its order is stored as the hint, and the records below `from`
  // are left out of the m returned.
  template <class Rec>
  Rec* sort_leaf(leaf* l, Rec* buf, size_t& m, [[maybe_unused]] const uint8_t* slots,
                 [[maybe_unused]] const typename K::probe& from, Rec* out) {
    auto less = [&](const Rec& x, const Rec& y) {
      return K::less(K::of(p_, x.key, x.value), K::of(p_, y.key, y.value));
    };
    if constexpr (!k_hinted) {  // no order to keep: the records themselves are sorted
      std::sort(buf, buf + m, less);
      return buf;
    } else {
      uint8_t idx[64], ord[64] = {};
      for (size_t i = 0; i < m; ++i) idx[i] = uint8_t(i);
      std::sort(idx, idx + m, [&](uint8_t a, uint8_t b) { return less(buf[a], buf[b]); });
      for (size_t j = 0; j < m; ++j) {
        out[j] = buf[idx[j]];
        ord[j] = slots[idx[j]];
      }
      ops_.store_order(l, ord);
      size_t skip = 0;
      while (skip < m && K::less(K::of(p_, out[skip].key, out[skip].value), from)) ++skip;
      m -= skip;
      return out + skip;
    }
  }

  // Walks the leaves from the one holding `lower`: emit(buf, m) gets each
  // leaf's records >= lower in key order (one validated snapshot) and
  // returns false to stop; it may raise `lower` (read again for every
  // leaf). `expect`: how many records the caller will likely take (sizes
  // the prefetch below). place() names where the next leaf's records may
  // be written (room for max_entries()), so that they are not copied again
  // (the caller's output), or returns nullptr (they go to buf or an array
  // of the walk's).
  template <class Rec, class Emit, class Place>
  void scan_leaves(const typename K::probe& lower, size_t expect, Rec* buf, Emit&& emit, Place&& place) {
    // The leaves the scan will likely read next are listed, in order, in the
    // DRAM inner layer, across its bottom nodes (inner_layer::cursor):
    // asking for them early overlaps their misses, which the chain alone
    // would take one leaf at a time (each next offset sits in the leaf
    // before it). Hints stopping at the end of the first leaf's bottom node
    // (LB+-Tree: ~14 leaves under one, ~10 read by a scan100) left half the
    // leaves to the chain: crossing into the next ones made its scan100
    // 1.24x faster. The scan keeps up to
    // k_hints_ahead leaves asked for beyond the one it reads, while they
    // likely hold records it will take (leaves are at least half full after
    // a split; then the mean fill of the leaves read so far). Asking for more
    // at once (LB+-Tree: 8 leaves, 32 lines) queued the later ones behind
    // full line-fill buffers, and the scan waited on its prefetch
    // instructions. The hints a scan likely needs are listed while the first
    // leaf's miss is pending; a longer one lists more as it goes (scan1000:
    // ~100 LB+-Tree leaves).
    typename inner_layer<K>::cursor cur;
    uint64_t hint[k_hint_ring];  // hint[i % k_hint_ring]: leaf i + 1, if no writer moved it
    unsigned known = 0;          // hints listed so far
    unsigned ahead = 0;          // hints asked for so far
    auto ask = [&] {
      if (ahead == known) {  // a long scan: list one more
        if (!cur.list(&hint[known % k_hint_ring], 1)) return false;
        ++known;
      }
      prefetch_leaf(at(hint[ahead++ % k_hint_ring]));
      return true;
    };
    uint64_t off = read_leaf(lower, [](leaf*) {}, [&](uint64_t& gv) {
      gv = inner_.version();
      const size_t half = std::max<uint32_t>(1, ops_.max_entries() / 2);
      const uint64_t first = cur.seek(inner_, lower);
      known = cur.list(hint, unsigned(std::min<size_t>(k_hints_listed, expect / half)));
      if (first) prefetch_leaf(at(first));
      while (ahead < k_hints_ahead && ahead < known) prefetch_leaf(at(hint[ahead++]));
      return first;
    });
    Rec ordered[64];  // a sorted leaf's records
    size_t taken = 0;   // records emitted so far
    uint64_t live = 0;  // live slots in the leaves read so far
    for (unsigned j = 0; off; ++j) {  // j: leaves read so far; hint[j] names the next if right
      leaf* l = at(off);
      auto& lk = ops_.lock(off, l);
      Rec* dst = place();
      uint64_t v = lk.read_begin();
      size_t m = k_stale;
      size_t skip = 0;    // u64 keys, hinted leaf: records below lower at the front
      uint8_t slots[64];  // hinted leaf: byte keys, buf's slots; u64 keys, the order found
      Rec* const into = dst ? dst : ordered;
      if constexpr (k_hinted) m = collect_hinted(l, lower, dst ? dst : buf);
      const bool sorted = m != k_stale;
      if (!sorted) {
        if constexpr (K::k_blocks) {
          m = collect(l, lower, buf, k_hinted ? slots : nullptr);
        } else {
          if constexpr (k_hinted) std::fill(slots, slots + 64, uint8_t{0});
          m = collect_ranked(l, lower, into, k_hinted ? slots : nullptr, skip);
        }
      }
      uint64_t nx = ops_.next(l);
      if (!lk.validate(v)) {  // a writer changed the leaf: read it again
        --j;
        continue;
      }
      // Records this leaf gives and, at the leaves' mean fill so far, those
      // of the leaves already asked for: the scan asks for no leaf it will
      // likely not read. LB+-Tree's scan100 asked for ~4 leaves past its
      // end (16 of ~56 lines), which only delayed the misses that matter;
      // without them it ran 1.16x.
      taken += m - skip;
      live += uint64_t(std::popcount(ops_.live(l)));
      if constexpr (K::k_blocks) {
        // The caller reads each record's block, a miss of its own. The next
        // leaf's blocks are asked for before this leaf's records are
        // emitted (its lines were asked for leaves ago), so that they
        // arrive while these are read: asked for only when their own leaf
        // was read, the first blocks of every leaf waited a whole miss. A
        // hint, unvalidated: a torn word only wastes the prefetch.
        if (j == 0) {
          const Rec* got = sorted && dst ? dst : buf;
          for (size_t i = 0; i < m; ++i) __builtin_prefetch(common::kv_at(p_, got[i].value));
        }
        if (nx && taken < expect) {
          const leaf* n = at(nx);
          for (uint64_t b = ops_.live(n); b; b &= b - 1)
            __builtin_prefetch(common::kv_at(p_, load_relaxed(&ops_.slot(n, unsigned(std::countr_zero(b)))->value)));
        }
      }
      // The next leaf's lines arrive while this one is sorted and emitted;
      // a hint already asked for them (a second ask of a line in flight
      // still takes a load-queue slot, the scan's bottleneck).
      if (nx && taken < expect && !(j < ahead && hint[j % k_hint_ring] == nx)) prefetch_leaf(at(nx));
      if (ahead > j && ahead < j + 1 + k_hints_ahead && taken + (ahead - j) * live / (j + 1) < expect) ask();
      Rec* recs = dst ? dst : buf;
      if (!sorted) {
        if constexpr (K::k_blocks) {
          recs = sort_leaf(l, buf, m, k_hinted ? slots : nullptr, lower, into);
        } else {
          if constexpr (k_hinted) ops_.store_order(l, slots);
          recs = into + skip;
          m -= skip;
        }
      }
      if (!emit(recs, m)) return;
      off = nx;
    }
  }

  static constexpr unsigned k_hints_ahead = 4;
  static constexpr unsigned k_hints_listed = 16;  // at most, before the first leaf
  static constexpr unsigned k_hint_ring = 32;     // > k_hints_listed + k_hints_ahead + 1
  // Every line of a leaf at once: live slots are spread over the whole leaf
  // and a scan's leaves are not adjacent in the pool.
  void prefetch_leaf(const leaf* l) const noexcept { common::prefetch_lines(l, ops_.leaf_bytes()); }
  // read_leaf prefetches the leaves up to this size (LB+-Tree's 4 lines;
  // an FPTree leaf of 64 slots is 17 lines, most of which a lookup skips).
  static constexpr uint64_t k_prefetch_leaf_bytes = 256;

  // No concurrent writers.
  check_result check() {
    std::vector<std::pair<key, uint64_t>> leaves;
    for (uint64_t off = anchor_->head; off;) {
      if (!leaf_in_heap(off)) return check_result::fail("leaf link outside the heap");
      if (!p_.is_allocated(off)) return check_result::fail("leaf " + std::to_string(off) + " is not allocated");
      leaf* l = at(off);
      uint64_t n = ops_.next(l);
      if (n && !leaf_in_heap(n)) return check_result::fail("leaf link outside the heap");
      if constexpr (K::k_blocks) {
        for (uint64_t b : {ops_.low_word(l), n ? ops_.low_word(at(n)) : 0})
          if (!K::valid_low(p_, b) || (b && !p_.is_allocated(b)))
            return check_result::fail("leaf " + std::to_string(off) + ": bad fence key block");
        auto e = check_records(l);
        if (!e.empty()) return check_result::fail("leaf " + std::to_string(off) + ": " + e);
      }
      key low = ops_.low(l);
      if (leaves.empty() && K::less(K::k_min, low)) return check_result::fail("head leaf with a nonzero low key");
      if (!leaves.empty() && !K::less(leaves.back().first, low))
        return check_result::fail("leaf low keys out of order at " + K::describe(low));
      if (ops_.lock(off, l).is_locked()) return check_result::fail("leaf left locked");
      auto e = ops_.check(l, n != 0, n ? ops_.low(at(n)) : K::k_min);
      if (!e.empty()) return check_result::fail("leaf " + std::to_string(off) + ": " + e);
      leaves.emplace_back(low, off);
      if (leaves.size() > p_.size() / ops_.leaf_bytes()) return check_result::fail("leaf chain has a cycle");
      off = n;
    }
    auto e = inner_.check(leaves);
    if (!e.empty()) return check_result::fail(e);
    return {};
  }

  void trace(pm::pool::trace_sink& sink) {
    sink.add(p_.off(anchor_), k_anchor_bytes);
    for (uint64_t off = anchor_->head; off; off = ops_.next(at(off))) {
      sink.add(off, ops_.leaf_bytes());
      if constexpr (K::k_blocks) {
        const leaf* l = at(off);
        if (uint64_t b = ops_.low_word(l)) sink.add(b, common::kv_block_size(p_, b));
        for (uint64_t m = ops_.live(l); m; m &= m - 1) {
          uint64_t b = ops_.slot(l, std::countr_zero(m))->value;
          sink.add(b, common::kv_block_size(p_, b));
        }
      }
    }
  }

  index_stats stats() {
    index_stats s;
    uint64_t leaves = 0;
    for (uint64_t off = anchor_->head; off; off = ops_.next(at(off))) {
      s.records += ops_.count(at(off));
      ++leaves;
    }
    auto u = p_.usage();
    s.pm_bytes_used = u.used_bytes;
    s.pm_bytes_reserved = u.reserved_bytes;
    s.dram_bytes = u.dram_bytes + sizeof(*this) + inner_.dram_bytes() + ops_.dram_bytes();
    s.alloc_dram_bytes = u.dram_bytes;
    s.extra = {{"leaves", double(leaves)},
               {"leaf_bytes", double(ops_.leaf_bytes())},
               {"inner_nodes", double(inner_.nodes())},
               {"inner_height", double(inner_.height())},
               {"inner_dram_bytes", double(inner_.dram_bytes())},
               {"rebuild_seconds", rebuild_seconds_},
               {"rebuild_leaves", double(rebuild_leaves_)},
               {"leaves_unlinked", double(dropped_.load(std::memory_order_relaxed))}};
    return s;
  }

 private:
  // True if the leaf reached directly from an inner_.find() that started at
  // inner version gv is certainly the right one (no split since: see
  // inner_layer::version()). Call after locking / snapshotting the leaf.
  bool exact(uint64_t gv) const noexcept { return !(gv & 1) && inner_.version() == gv; }

  bool leaf_in_heap(uint64_t off) const noexcept {
    return off >= p_.header().heap_offset && off % 64 == 0 && off + ops_.leaf_bytes() <= p_.size();
  }

  // Finds and locks the leaf whose fences hold key; returns its offset.
  uint64_t lock_leaf(probe_arg key) {
    for (;;) {
      uint64_t gv = inner_.version();
      uint64_t off = inner_.find(key);
      for (bool direct = true; off; direct = false) {
        leaf* l = at(off);
        // As read_leaf: the leaf's lines arrive while the lock is taken.
        if (ops_.leaf_bytes() <= k_prefetch_leaf_bytes) prefetch_leaf(l);
        auto& lk = ops_.lock(off, l);
        lk.lock();
        if (direct && exact(gv)) return off;
        if (K::less(key, ops_.low(l))) {  // stale hint from the inner layer: restart
          lk.unlock();
          break;
        }
        uint64_t n = ops_.next(l);
        if (n && !K::less(key, ops_.low(at(n)))) {  // a split moved the range right
          lk.unlock();
          off = n;
          continue;
        }
        return off;
      }
      sync::optimistic_lock::backoff(0);
    }
  }

  // Locks the leaf whose range holds the keys just below `low` (a leaf's low
  // key): low(P) < low <= low(next(P)), or P has no successor. A forwarded
  // leaf never qualifies (its link names a leaf left of it).
  uint64_t lock_before(const key& low) {
    const auto probe = K::probe_of(low);
    for (;;) {
      for (uint64_t off = inner_.find_before(probe); off;) {
        leaf* l = at(off);
        auto& lk = ops_.lock(off, l);
        lk.lock();
        if (!K::less(ops_.low(l), low)) {  // a stale route, right of the keys: restart
          lk.unlock();
          break;
        }
        uint64_t n = ops_.next(l);
        if (n && K::less(ops_.low(at(n)), low)) {
          lk.unlock();
          off = n;
          continue;
        }
        return off;
      }
      sync::optimistic_lock::backoff(0);
    }
  }

  // EMPTY LEAVES: unlinks the leaf at off if it is still in the chain and
  // empty. The caller is pinned (off stays a leaf, or a retired one, until
  // it unpins) and holds no lock.
  void drop_leaf(uint64_t off) {
    leaf* l = at(off);
    const key low = ops_.low(l);  // immutable (bytes: its block is retired only with the leaf)
    for (unsigned attempt = 0; attempt < k_drop_attempts; ++attempt) {
      const uint64_t poff = lock_before(low);
      leaf* pl = at(poff);
      auto& pk = ops_.lock(poff, pl);
      if (ops_.next(pl) != off) {  // unlinked by another remover
        pk.unlock();
        return;
      }
      auto& lk = ops_.lock(off, l);
      const bool shared = &lk == &pk;  // one lock stripe (LB+-Tree)
      if (!shared && !lk.try_lock()) {
        pk.unlock();
        sync::optimistic_lock::backoff(attempt);
        continue;
      }
      const bool empty = !ops_.live(l);
      uint64_t fence = 0;
      if (empty) {
        if constexpr (K::k_blocks) fence = ops_.low_word(l);
        ops_.relink(pl, ops_.next(l));
        if (!mut_.on(hybrid_mutant::leaf_unlink_unpersisted))
          p_.persist(ops_.link_word(pl), 8);  // the commit
        ops_.relink(l, poff);  // forward, after the commit: l is unreachable in every crash image now
        inner_.erase(low);
      }
      if (!shared) lk.unlock();
      pk.unlock();
      if (empty) {
        if (fence) p_.retire(fence);
        p_.retire(off);
        dropped_.fetch_add(1, std::memory_order_relaxed);
      }
      return;
    }
  }
  static constexpr unsigned k_drop_attempts = 256;

  // Bytes: each valid slot names an allocated record block whose key starts
  // with the slot's prefix word (fences and fingerprints: ops_.check()).
  std::string check_records(const leaf* l) const {
    for (uint64_t m = ops_.live(l); m; m &= m - 1) {
      const entry* e = ops_.slot(l, std::countr_zero(m));
      if (!K::valid_record(p_, e->value) || !p_.is_allocated(e->value))
        return "slot " + std::to_string(std::countr_zero(m)) + ": bad record block";
      if (key_prefix(common::kv_key(p_, e->value)) != e->key)
        return "slot " + std::to_string(std::countr_zero(m)) + ": record block does not match its slot";
    }
    return {};
  }

  // Every open: walk the chain (validating links and, for byte keys, the
  // blocks recovery reads), let the policy repair and reset each leaf, and
  // build the inner layer. Allocates no PM.
  void rebuild(bool dirty) {
    auto t0 = std::chrono::steady_clock::now();
    auto corrupt = [](const char* what) { return error(errc::corrupt, std::string(Ops::k_name) + ": " + what); };
    std::vector<std::pair<key, uint64_t>> leaves;
    uint64_t off = anchor_->head;
    if (!leaf_in_heap(off)) throw corrupt("head leaf outside the heap");
    while (off) {
      leaf* l = at(off);
      uint64_t n = ops_.next(l);
      if (n && !leaf_in_heap(n)) throw corrupt("leaf link outside the heap");
      if constexpr (K::k_blocks) {
        if (!K::valid_low(p_, ops_.low_word(l)) || (n && !K::valid_low(p_, ops_.low_word(at(n)))))
          throw corrupt("fence key block outside the heap or too long");
        if (dirty)
          for (uint64_t m = ops_.live(l); m; m &= m - 1)
            if (!K::valid_record(p_, ops_.slot(l, std::countr_zero(m))->value))
              throw corrupt("record block outside the heap or too long");
      }
      key low = ops_.low(l);
      if (leaves.empty() ? K::less(K::k_min, low) : !K::less(leaves.back().first, low))
        throw corrupt("leaf fence keys out of order");
      ops_.recover(l, n ? at(n) : nullptr, dirty);
      leaves.emplace_back(low, off);
      off = n;
    }
    if (dirty) p_.fence();  // repairs durable before the index is used
    inner_.build(leaves);
    rebuild_leaves_ = leaves.size();
    rebuild_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  pm::pool& p_;
  Ops ops_;
  inner_layer<K> inner_;
  anchor* anchor_ = nullptr;
  common::mutant_switch<hybrid_mutant> mut_;
  double rebuild_seconds_ = 0;
  uint64_t rebuild_leaves_ = 0;
  std::atomic<uint64_t> dropped_{0};  // leaves unlinked by removes since the open
};

// What both layouts' index classes share: the core, and check(), trace(),
// stats() (Base: u64_index or bytes_index).
template <class Base, class Ops>
class hybrid_index : public Base {
 public:
  check_result check() override { return core_.check(); }
  void trace(pm::pool::trace_sink& sink) override { core_.trace(sink); }
  index_stats stats() override { return core_.stats(); }

 protected:
  hybrid_index(pm::pool& p, open_kind kind, const index_config& cfg) : Base(p), core_(p, kind, cfg) {}
  hybrid_core<Ops> core_;
};

}  // namespace pmindex::btree::detail
