// PACTree scans (see pactree.hpp, "Scans"): unsafe (each node one validated
// snapshot) or safe (every node read validated again at the end: atomic;
// after a bounded number of failed tries, the nodes locked as it goes).
#include <bit>

#include "hybrid/pactree/pactree.hpp"
#include "common/prefetch.hpp"

namespace pmindex::hybrid::pactree {

using common::load_acq;
using common::store_rel;

// n's used slots in key order, from its permutation array when that was
// built at version v of this generation (an older one's may be torn by a
// crash, or clipped since: nothing rebuilds them at open); otherwise sorted here and, if n can be locked from v
// at once, stored with the version n will have after the unlock (v is then
// that version). An optimistic read: the caller validates v.
template <class K>
unsigned tree<K>::node_order(dnode* n, uint64_t& v, uint8_t* order) {
  if (current(v) && load_acq(&n->perm_version) == v) {
    unsigned c = std::min<unsigned>(load_acq(&n->perm_count), k_slots);
    std::memcpy(order, n->perm, c);
    return c;
  }
  unsigned c = sorted_slots(n, order);
  if (upgrade(n, v)) {
    std::memcpy(n->perm, order, c);
    store_rel(&n->perm_count, uint32_t(c));
    uint64_t after = (load_acq(&n->lock) & ~k_locked) + k_step;
    store_rel(&n->perm_version, after);
    unlock(n);  // the word becomes `after`
    v = after;
  }
  return c;
}

// The smallest key after `last`, as a probe (false: there is none).
template <class K>
bool tree<K>::after(const entry& last, probe& p, std::string& buf) const {
  if constexpr (K::k_blocks) {
    buf.assign(common::kv_key(p_, last.value));
    buf.push_back('\0');
    p = K::make(buf);
    return true;
  } else {
    if (last.key == UINT64_MAX) return false;
    p = last.key + 1;
    return true;
  }
}

template <class K>
void tree<K>::collect(probe_arg from, size_t count, std::vector<entry>& out, const key* hi) {
  if (!safe_scan_) {
    collect_optimistic(from, count, out, hi);
    return;
  }
  for (unsigned t = 0; t < safe_tries_.load(std::memory_order_relaxed); ++t) {
    if (collect_optimistic(from, count, out, hi)) return;
    scan_retries_.fetch_add(1, std::memory_order_relaxed);
  }
  scan_locked_.fetch_add(1, std::memory_order_relaxed);
  collect_locked(from, count, out, hi);
}

// One optimistic walk. scan=unsafe: a node that changed while read is read
// again (or its range found again): always true. scan=safe: false (out is
// void) as soon as a node read changed, else true once the versions of all
// nodes read are validated again at the end (one snapshot).
template <class K>
bool tree<K>::collect_optimistic(probe_arg from, size_t count, std::vector<entry>& out, const key* hi) {
  struct seen {
    const dnode* n;
    uint64_t v;
  };
  thread_local std::vector<seen> visited;
  std::string buf;
  out.clear();
  visited.clear();
  probe lower = from;
  uint64_t v;
  dnode* n = locate(lower, v);
  bool first = true;  // only the first node of a walk holds keys below `lower`
  bool past = false;  // a key above hi was met
  for (;;) {
    // A node is 19 lines; its slots are read in key order, not in place
    // order, and the next node's address is in this one: asked for at
    // once, the node's lines and (while the scan will likely go on) the next
    // node's arrive together instead of one miss after another.
    common::prefetch_lines(n, sizeof(dnode), 64);  // (its first line is read)
    if (const uint64_t ahead = load_acq(&n->next);
        ahead && out.size() + size_t(std::popcount(load_acq(&n->bitmap))) < count)
      common::prefetch_lines(at(ahead), sizeof(dnode));
    uint8_t ord[k_slots];
    unsigned c = node_order(n, v, ord);
    const size_t mark = out.size();
    for (unsigned j = 0; j < c && out.size() < count; ++j) {
      const entry* s = &n->slot[ord[j]];
      entry e{__atomic_load_n(&s->key, __ATOMIC_RELAXED), load_acq(&s->value)};
      if (first && K::less(K::of(p_, e.key, e.value), lower)) continue;
      if (hi && K::less(*hi, K::of(p_, e.key, e.value))) {
        past = true;
        break;
      }
      out.push_back(e);
    }
    const uint64_t nx = load_acq(&n->next);
    if (!validate(n, v)) {  // changed while read: read it again
      if (safe_scan_ && !first) return false;
      out.resize(mark);
      past = false;
      v = read_begin(n);
      if (!first && !obsolete(v)) continue;  // still after everything emitted
      // The first node may have split (lower now further right) or been
      // merged: find lower's node again.
      if (!out.empty() && !after(out.back(), lower, buf)) return true;
      n = locate(lower, v);
      first = true;
      continue;
    }
    if (safe_scan_) visited.push_back({n, v});
    if (past || out.size() >= count || !nx) break;
    n = at(nx);
    v = read_begin(n);
    first = false;
    if (obsolete(v)) {  // merged into the node just read, after it was read
      if (safe_scan_) return false;
      if (!out.empty() && !after(out.back(), lower, buf)) return true;
      n = locate(lower, v);
      first = true;
    }
  }
  if (safe_scan_)
    for (const seen& s : visited)
      if (!validate(s.n, s.v)) return false;  // some node changed: not one snapshot
  return true;
}

// scan=safe after safe_tries_ optimistic walks failed: the nodes are
// locked left to right, each held until the walk ends (two-phase: the
// records read are those of the instant the last lock was taken, an atomic
// snapshot; writers persist before they unlock, so all of it is durable).
// While n is held, n.next stays n's right neighbour (a split or a merge of
// n needs n's lock, and only n can absorb it), so the walk follows links
// only and waits for each next lock as a writer waits for one. It writes
// nothing: each word goes back to what it was, and optimistic readers that
// began before it validate. One such walk at a time (locked_scan_mu_): a
// thread waiting for a lock word while it holds others is inside sections
// (common/marker_passes.hpp), and two of them waiting on one damaged word
// would each take the other for its writer; writers never wait while
// holding a lock (a merge only tries its neighbour's), so a lone walk still
// tells damage from a writer.
template <class K>
void tree<K>::collect_locked(probe_arg from, size_t count, std::vector<entry>& out, const key* hi) {
  struct held {
    dnode* n;
    uint64_t w;  // its word before the lock
  };
  thread_local std::vector<held> locks;
  struct release_all {
    tree& t;
    ~release_all() {
      for (const held& h : locks) {
        store_rel(&h.n->lock, h.w);
        t.passes_.leave(t.p_.thread_slot());
      }
      locks.clear();
    }
  };
  std::lock_guard serial(locked_scan_mu_);
  locks.clear();
  release_all guard{*this};
  // Room for one more before a lock is taken: a bad_alloc never leaves one held.
  auto room = [&] {
    if (locks.size() == locks.capacity()) locks.reserve(2 * locks.size() + 16);
  };
  out.clear();
  dnode* n;
  for (;;) {
    uint64_t v;
    n = locate(from, v);
    room();
    if (upgrade(n, v)) {
      locks.push_back({n, v});
      break;
    }
  }
  for (bool first = true;; first = false) {
    uint8_t ord[k_slots];
    const uint64_t v = locks.back().w;
    unsigned c;
    if (current(v) && n->perm_version == v) {
      c = std::min<unsigned>(n->perm_count, k_slots);
      std::memcpy(ord, n->perm, c);
    } else {
      c = sorted_slots(n, ord);
    }
    bool past = false;
    for (unsigned j = 0; j < c && out.size() < count; ++j) {
      const entry e = n->slot[ord[j]];
      if (first && K::less(K::of(p_, e.key, e.value), from)) continue;
      if (hi && K::less(*hi, K::of(p_, e.key, e.value))) {
        past = true;
        break;
      }
      out.push_back(e);
    }
    const uint64_t nx = n->next;
    if (past || out.size() >= count || !nx) return;
    if (!node_in_heap(nx)) corrupt("a node link outside the heap");
    dnode* m = at(nx);
    for (;;) {
      const uint64_t w = read_begin(m);
      if (obsolete(w)) corrupt("a locked node's next node is obsolete (damaged pool)");
      room();
      if (upgrade(m, w)) {
        locks.push_back({m, w});
        break;
      }
    }
    n = m;
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::pactree
