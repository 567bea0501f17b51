// The part FPTree and LB+-Tree share: a B+-tree whose leaves live in the
// pool as a singly linked chain (the only durable structure) and whose inner
// nodes live in DRAM (detail/inner_layer.hpp) and are rebuilt from the chain
// at every open. The leaf format and its persistence protocol come from a
// leaf policy `Ops` (fptree/detail/leaf.hpp, lbtree/detail/leaf.hpp):
//
//   using leaf;  k_name; k_magic;  Ops(pm::pool&, const index_config&)
//   leaf_bytes(), max_entries(), inner_capacity(), dram_bytes()
//   init(l, low)                      empty leaf, no sibling (caller persists)
//   low(l), next(l)                   fence key (immutable), live sibling offset
//   lock(off, l) -> sync::optimistic_lock&
//   find(l, key, v&), collect(l, from, out)   optimistic reads (caller validates)
//   insert(l, key, v) -> ins, update, remove   lock held; durable on return
//   split(l, r_off, r, key, v) -> low of r    lock held on a full l; r fresh;
//        links and commits r durably; inserts key into r when key >= low of r
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
// layer's mutex (lock order: leaf, then inner layer). Leaves are never freed
// while the index is open, and inner nodes never before it is destroyed, so
// no epoch protection is needed: nothing is ever retired.
//
// Scans: forward, count-bounded, in key order. Each leaf is read as one
// validated snapshot (its entries sorted on the way out); the scan as a whole
// is not atomic: every returned record was present at the moment its leaf was
// read, keys are strictly increasing, and a record present for the whole
// scan is returned.
//
// Empty leaves stay in the chain (removes never free a leaf) and take later
// inserts of their key range; nothing leaks, but space of emptied ranges is
// not given back.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "btree/detail/fingerprint.hpp"
#include "common/root_block.hpp"
#include "btree/detail/inner_layer.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/sync/optimistic_lock.hpp"

namespace pmindex::btree::detail {

enum class ins : uint8_t { done, exists, full };

// clang-format off
// The pool root: one 64-byte block, written once at creation.
struct anchor {
  uint64_t magic;       //  0  Ops::k_magic
  uint64_t head;        //  8  offset of the leftmost leaf (low key 0; never changes)
  uint64_t leaf_bytes;  // 16  allocation size of every leaf
  uint64_t reserved[5]; // 24
};
// clang-format on
inline constexpr uint64_t k_anchor_bytes = 64;

template <class Ops>
class hybrid_tree final : public u64_index {
  using leaf = typename Ops::leaf;

 public:
  hybrid_tree(pm::pool& p, open_kind kind, const index_config& cfg)
      : u64_index(p), p_(p), ops_(p, cfg), inner_(ops_.inner_capacity()) {
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
      inner_.build({{0, h}});
      return;
    }
    anchor_ = common::attach_root<anchor>(p_, Ops::k_magic, Ops::k_name, k_anchor_bytes);
    if (anchor_->leaf_bytes != ops_.leaf_bytes())
      throw error(errc::corrupt, std::string(Ops::k_name) + ": leaf size in the pool does not match its parameters");
    rebuild(kind == open_kind::dirty);
  }

  bool insert(uint64_t key, uint64_t value) override {
    uint64_t off = lock_leaf(key);
    leaf* l = at(off);
    auto& lk = ops_.lock(off, l);
    ins r = ops_.insert(l, key, value);
    if (r == ins::full) {
      uint64_t roff = p_.alloc(ops_.leaf_bytes());
      if (!roff) {
        lk.unlock();  // nothing changed
        throw error(errc::pool_full, std::string(Ops::k_name) + ": the pool is full");
      }
      uint64_t low = ops_.split(l, roff, at(roff), key, value);
      inner_.insert(low, roff);
      r = key < low ? ops_.insert(l, key, value) : ins::done;  // split() placed it in r otherwise
      PMINDEX_ASSERT(r == ins::done);
    }
    lk.unlock();
    return r == ins::done;
  }

  bool update(uint64_t key, uint64_t value) override {
    uint64_t off = lock_leaf(key);
    leaf* l = at(off);
    bool ok = ops_.update(l, key, value);
    ops_.lock(off, l).unlock();
    return ok;
  }

  bool remove(uint64_t key) override {
    uint64_t off = lock_leaf(key);
    leaf* l = at(off);
    bool ok = ops_.remove(l, key);
    ops_.lock(off, l).unlock();
    return ok;
  }

  std::optional<uint64_t> lookup(uint64_t key) override {
    uint64_t v = 0;
    bool found = false;
    read_leaf(key, [&](leaf* l) { found = ops_.find(l, key, v); });
    if (!found) return std::nullopt;
    return v;
  }

  size_t scan(uint64_t from, size_t count, record* out) override {
    if (!count) return 0;
    uint64_t off = read_leaf(from, [](leaf*) {});
    record buf[64];  // >= Ops::max_entries()
    size_t got = 0;
    uint64_t lower = from;
    while (off) {
      leaf* l = at(off);
      auto& lk = ops_.lock(off, l);
      uint64_t v = lk.read_begin();
      size_t m = ops_.collect(l, lower, buf);
      uint64_t n = ops_.next(l);
      if (!lk.validate(v)) continue;  // a writer changed the leaf: read it again
      std::sort(buf, buf + m, [](const record& a, const record& b) { return a.key < b.key; });
      for (size_t i = 0; i < m && got < count; ++i) out[got++] = buf[i];
      if (got == count) break;
      if (got) {
        if (out[got - 1].key == UINT64_MAX) break;
        lower = std::max(lower, out[got - 1].key + 1);
      }
      off = n;
    }
    return got;
  }

  // No concurrent writers.
  check_result check() override {
    std::vector<std::pair<uint64_t, uint64_t>> leaves;
    const uint64_t lo = p_.header().heap_offset;
    for (uint64_t off = anchor_->head; off;) {
      if (off < lo || off % 64 || off + ops_.leaf_bytes() > p_.size()) return check_result::fail("leaf link outside the heap");
      if (!p_.is_allocated(off)) return check_result::fail("leaf " + std::to_string(off) + " is not allocated");
      leaf* l = at(off);
      uint64_t n = ops_.next(l);
      if (leaves.empty() && ops_.low(l) != 0) return check_result::fail("head leaf with a nonzero low key");
      if (!leaves.empty() && ops_.low(l) <= leaves.back().first)
        return check_result::fail("leaf low keys out of order at " + std::to_string(ops_.low(l)));
      if (ops_.lock(off, l).is_locked()) return check_result::fail("leaf left locked");
      auto e = ops_.check(l, n != 0, n ? ops_.low(at(n)) : 0);
      if (!e.empty()) return check_result::fail("leaf " + std::to_string(off) + ": " + e);
      leaves.emplace_back(ops_.low(l), off);
      if (leaves.size() > p_.size() / ops_.leaf_bytes()) return check_result::fail("leaf chain has a cycle");
      off = n;
    }
    auto e = inner_.check(leaves);
    if (!e.empty()) return check_result::fail(e);
    return {};
  }

  void trace(pm::pool::trace_sink& sink) override {
    sink.add(p_.off(anchor_), k_anchor_bytes);
    for (uint64_t off = anchor_->head; off; off = ops_.next(at(off))) sink.add(off, ops_.leaf_bytes());
  }

  index_stats stats() override {
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
    s.extra = {{"leaves", double(leaves)},
               {"leaf_bytes", double(ops_.leaf_bytes())},
               {"inner_nodes", double(inner_.nodes())},
               {"inner_height", double(inner_.height())},
               {"inner_dram_bytes", double(inner_.dram_bytes())},
               {"rebuild_seconds", rebuild_seconds_},
               {"rebuild_leaves", double(rebuild_leaves_)}};
    return s;
  }

 private:
  leaf* at(uint64_t off) const noexcept { return p_.ptr<leaf>(off); }

  // True if the leaf reached directly from an inner_.find() that started at
  // inner version gv is certainly the right one (no split since: see
  // inner_layer::version()). Call after locking / snapshotting the leaf.
  bool exact(uint64_t gv) const noexcept { return !(gv & 1) && inner_.version() == gv; }

  // Finds and locks the leaf whose fences hold key; returns its offset.
  uint64_t lock_leaf(uint64_t key) {
    for (;;) {
      uint64_t gv = inner_.version();
      uint64_t off = inner_.find(key);
      for (bool direct = true; off; direct = false) {
        leaf* l = at(off);
        auto& lk = ops_.lock(off, l);
        lk.lock();
        if (direct && exact(gv)) return off;
        if (key < ops_.low(l)) {  // stale hint from the inner layer: restart
          lk.unlock();
          break;
        }
        uint64_t n = ops_.next(l);
        if (n && key >= ops_.low(at(n))) {  // a split moved the range right
          lk.unlock();
          off = n;
          continue;
        }
        return off;
      }
      sync::optimistic_lock::backoff(0);
    }
  }

  // Runs f(leaf*) on the leaf whose fences hold key, as an optimistic read
  // repeated until it validates; returns the leaf's offset.
  template <class F>
  uint64_t read_leaf(uint64_t key, F&& f) {
    for (;;) {
      uint64_t gv = inner_.version();
      uint64_t off = inner_.find(key);
      for (bool direct = true; off;) {
        leaf* l = at(off);
        auto& lk = ops_.lock(off, l);
        uint64_t v = lk.read_begin();
        if (!(direct && exact(gv))) {
          uint64_t lo = ops_.low(l), n = ops_.next(l);
          // n is 0 or a leaf offset even when torn with a writer (next words
          // only ever hold leaf offsets), so reading its low key is safe.
          uint64_t nlow = n ? ops_.low(at(n)) : 0;
          if (key < lo) {
            if (lk.validate(v)) break;  // restart from the top
            continue;
          }
          if (n && key >= nlow) {
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

  // Every open: walk the chain (validating links), let the policy repair
  // and reset each leaf, and build the inner layer. Allocates no PM.
  void rebuild(bool dirty) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::pair<uint64_t, uint64_t>> leaves;
    const uint64_t lo = p_.header().heap_offset, hi = p_.size();
    auto valid = [&](uint64_t off) { return off >= lo && off % 64 == 0 && off + ops_.leaf_bytes() <= hi; };
    uint64_t off = anchor_->head;
    if (!valid(off)) throw error(errc::corrupt, std::string(Ops::k_name) + ": head leaf outside the heap");
    while (off) {
      leaf* l = at(off);
      uint64_t n = ops_.next(l);
      if (n && !valid(n)) throw error(errc::corrupt, std::string(Ops::k_name) + ": leaf link outside the heap");
      uint64_t low = ops_.low(l);
      if (leaves.empty() ? low != 0 : low <= leaves.back().first)
        throw error(errc::corrupt, std::string(Ops::k_name) + ": leaf fence keys out of order");
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
  inner_layer inner_;
  anchor* anchor_ = nullptr;
  double rebuild_seconds_ = 0;
  uint64_t rebuild_leaves_ = 0;
};

}  // namespace pmindex::btree::detail
