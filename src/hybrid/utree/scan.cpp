// uTree scans (see utree.hpp, "Scans"): a start node from the DRAM leaves,
// then a walk of the persistent list, flushing any line a writer has not
// made durable yet (DIRTY) before using what was read from it.
#include <algorithm>

#include "hybrid/utree/utree.hpp"

namespace pmindex::hybrid::utree {

using common::load_acq;
using common::load_relaxed;

// A node that was in the list when its leaf was validated (so it stays
// readable while pinned, and its next word leads on even if it is removed
// meanwhile): the predecessor of `from`, or the first key >= from when
// from's leaf holds nothing below it, or the head. *l: that leaf.
template <class K>
uint64_t tree<K>::start_node(probe_arg from, const leaf** at) const {
  for (unsigned spins = 0;; ++spins) {
    uint64_t v;
    const leaf* l = locate(from, v);
    const unsigned c = count_of(l), pos = lower_bound(l, c, from);
    uint64_t s = head_;
    bool ok = true;
    if (pos > 0)
      s = load_relaxed(&nd(l)[pos - 1]);
    else if (c > 0)
      s = load_relaxed(&nd(l)[0]);
    else
      ok = !load_acq(&l->prev);  // an empty leaf is the first one, or being unlinked
    if (ok && l->lock.validate(v)) return *at = l, s;
    sync::optimistic_lock::backoff(spins);
  }
}

// Asks for the list nodes leaf l lists, all at once; returns how many. Read
// one after another along the list they are one miss after another (perf:
// most of a scan). A hint: read without the leaf's lock, the walk itself
// reads the list. (Pinned: a leaf unlinked meanwhile is not freed yet.)
template <class K>
unsigned tree<K>::prefetch_nodes(const leaf* l) const {
  const unsigned c = count_of(l);
  for (unsigned i = 0; i < c; ++i) __builtin_prefetch(node(load_relaxed(&nd(l)[i])));
  return c;
}

template <class K>
void tree<K>::collect(probe_arg from, size_t count, std::vector<entry>& out, const key* hi) {
  out.clear();
  bool below = true;  // still skipping keys < from
  const leaf* ahead = nullptr;  // the last leaf whose nodes were asked for
  size_t walked = 0, asked = 0;
  const size_t horizon = count > SIZE_MAX - cap_ ? SIZE_MAX : count + cap_;  // a range: no count
  uint64_t cur = start_node(from, &ahead);
  asked = prefetch_nodes(ahead);
  for (; cur && out.size() < count; ++walked) {
    // Keep about a leaf's worth of nodes asked for ahead of the walk.
    while (ahead && asked < walked + cap_ && asked < horizon)
      if ((ahead = load_acq(&ahead->next))) asked += prefetch_nodes(ahead);
    lnode* x = node(cur);
    const uint64_t kw = load_relaxed(&x->key);
    const uint64_t vw = load_acq(&x->value);
    const uint64_t w = load_acq(&x->next);  // after the value: see utree.hpp, "Why DIRTY"
    if (w & k_dirty) {
      p_.flush(x, sizeof(lnode));
      p_.fence();
      helps_.fetch_add(1, std::memory_order_relaxed);
    }
    if (cur != head_) {
      const key k = K::of(p_, kw, vw);
      if (below && K::less(k, from)) {
      } else {
        below = false;
        if (hi && K::less(*hi, k)) break;
        out.push_back({kw, vw});
      }
    }
    cur = w & ~k_flag_bits;
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::utree
