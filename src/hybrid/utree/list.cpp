// uTree record operations (see utree.hpp, "Commits"): the persistent list
// changes under the DRAM leaf locks, each made durable before the unlock.
#include "hybrid/utree/utree.hpp"

namespace pmindex::hybrid::utree {

using common::load_acq;
using common::load_relaxed;
using common::store_rel;

// The node before position `pos` of l: l's own entry pos - 1, else the last
// entry of its left neighbour `left` (locked by the caller), else the head
// (l is the first leaf, or left is and it is empty).
template <class K>
uint64_t tree<K>::pred_of(leaf* l, unsigned pos, leaf* left) const noexcept {
  if (pos > 0) return nd(l)[pos - 1];
  if (left && left->count) return nd(left)[left->count - 1];
  PMINDEX_ASSERT(!left || !left->prev);  // only the first leaf is ever empty
  return head_;
}

// pred.next = target: the 8-byte commit of an insert or a remove. The DIRTY
// bit tells lock-free scans that the word may not be durable yet (they flush
// it themselves); it is cleared once the word is.
template <class K>
void tree<K>::link(lnode* pred, uint64_t target) {
  store_rel(&pred->next, target | k_dirty);
  if (!mut_.on(mutant::pred_unflushed)) p_.flush(&pred->next, 8);
  p_.fence();
  store_rel(&pred->next, target);
}

template <class K>
bool tree<K>::insert_word(probe_arg k, uint64_t w) {
  // The node is filled before any lock is taken; only `next` waits for it.
  const uint64_t n = p_.alloc(sizeof(lnode));
  if (!n) throw error(errc::pool_full, "utree: the pool is full");
  PMINDEX_ASSERT(n % sizeof(lnode) == 0);  // one line
  lnode* x = node(n);
  x->key = K::key_word(k);
  x->value = w;
  x->reserved = 0;

  leaf* l = lock_leaf(k);
  unsigned pos = lower_bound(l, l->count, k);
  if (pos < l->count && entry_is(l, pos, k)) {  // nvm-datastructure#1: present, nothing changes
    l->lock.unlock();
    p_.free(n);  // never published
    return false;
  }
  leaf *r = nullptr, *t = l, *left = nullptr;
  if (l->count == cap_) {
    try {
      r = split(l);
    } catch (...) {  // no DRAM for the leaf: nothing changed
      l->lock.unlock();
      p_.free(n);
      throw;
    }
    if (!K::less(k, r->low)) t = r;
    pos = lower_bound(t, t->count, k);
  }
  uint64_t pred;
  if (t == r && pos == 0) {
    pred = nd(l)[l->count - 1];
  } else {
    if (pos == 0) left = lock_left(t);
    pred = pred_of(t, pos, left);
  }
  lnode* pr = node(pred);
  PMINDEX_ASSERT(!(pr->next & k_flag_bits));
  x->next = pr->next;
  if (!mut_.on(mutant::node_unflushed)) p_.flush(x, sizeof(lnode));
  p_.fence();  // the node (and, bytes, its kv block) durable before it is reachable
  link(pr, n);
  put_entry(t, pos, K::key_word(k), n);
  if (left) left->lock.unlock();
  if (r) r->lock.unlock();
  l->lock.unlock();
  return true;
}

// In place: one 8-byte store of the value word (see utree.hpp).
template <class K>
bool tree<K>::update_word(probe_arg k, uint64_t w, uint64_t& old) {
  leaf* l = lock_leaf(k);
  const int i = find(l, k);
  if (i >= 0) {
    lnode* x = node(nd(l)[i]);
    old = x->value;
    const uint64_t nx = x->next;
    __atomic_store_n(&x->next, nx | k_dirty, __ATOMIC_RELAXED);
    store_rel(&x->value, w);  // after DIRTY: a scan that reads w then sees DIRTY
    p_.flush(x, sizeof(lnode));
    p_.fence();
    store_rel(&x->next, nx);
  }
  l->lock.unlock();
  return i >= 0;
}

template <class K>
bool tree<K>::remove_word(probe_arg k, uint64_t& old) {
  leaf* l = lock_leaf(k);
  const int i = find(l, k);
  if (i < 0) {
    l->lock.unlock();
    return false;
  }
  leaf* left = i == 0 ? lock_left(l) : nullptr;
  const uint64_t n = nd(l)[i];
  lnode* x = node(n);
  old = x->value;
  link(node(pred_of(l, unsigned(i), left)), x->next);  // x's next stays: a scan on x goes on from it
  erase_entry(l, unsigned(i));
  const bool unlinked = l->count == 0 && left;
  if (unlinked) unlink_leaf(l, left);
  if (left) left->lock.unlock();
  l->lock.unlock();
  if (unlinked) bury(l);
  if (mut_.on(mutant::free_no_epoch))
    p_.free(n);
  else
    p_.retire(n);
  return true;
}

// Pinned by the caller. Writers persist before they unlock: a validated read
// is durable.
template <class K>
bool tree<K>::lookup_word(probe_arg k, uint64_t& w) const {
  for (;;) {
    uint64_t v;
    const leaf* l = locate(k, v);
    const int i = find(l, k);
    const uint64_t val = i >= 0 ? load_acq(&node(load_relaxed(&nd(l)[i]))->value) : 0;
    if (l->lock.validate(v)) {
      w = val;
      return i >= 0;
    }
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::utree
