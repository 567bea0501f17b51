// PACTree data layer (see pactree.hpp): version locks, finding the node of a
// key from a search-layer hint, the record operations, split, merge, clip.
#include <algorithm>
#include <bit>
#include <cstddef>

#include "hybrid/pactree/pactree.hpp"
#include "sync/optimistic_lock.hpp"

namespace pmindex::hybrid::pactree {

using common::load_acq;
using common::store_rel;

namespace {
inline void pause_for(unsigned spins) noexcept { sync::optimistic_lock::backoff(spins); }
inline uint64_t bit(unsigned i) noexcept { return uint64_t{1} << i; }
}  // namespace

// ---------------------------------------------------------------- lock words

template <class K>
uint64_t tree<K>::read_begin(const dnode* n) const {
  for (unsigned spins = 0;;) {
    uint64_t w = load_acq(&n->lock);
    if (!current(w) || !(w & k_locked)) return w;  // an older generation's word is free
    wait_held(spins, n, w);
  }
}

template <class K>
void tree<K>::wait_held(unsigned& spins, const dnode* n, uint64_t w) const {
  passes_.wait(spins, [&] { return load_acq(&n->lock) == w; },
               "pactree: a node's lock word is held by no writer (damaged pool)", p_.thread_slot());
}

template <class K>
bool tree<K>::upgrade(dnode* n, uint64_t v) noexcept {
  if (obsolete(v) || (current(v) && (v & k_locked))) return false;
  // Lazy reset: the first writer of a generation restarts the word at it.
  uint64_t mine = (current(v) ? v : uint64_t(gen_) << 32) | k_locked;
  return passes_.take(p_.thread_slot(), [&]() noexcept { return common::cas(&n->lock, v, mine); });
}

// A merge stores r.prev = n (its left neighbour, whose anchor is smaller)
// before it marks r obsolete, and only after n.next no longer names r; r
// is never linked again and not reused while the walk is pinned. So a
// walk that met r obsolete cannot meet it again by links: met twice, it is
// damage, and so is a prev that names no node left of r. The list keeps
// the last k_met met (a legitimate chain of merged nodes, while the SMO
// thread lags, may be longer: the list starts again rather than the walk);
// a damaged cycle through more than k_met obsolete nodes is caught by the
// count: a walk that met more obsolete nodes than the pool can hold met
// one twice.
template <class K>
uint64_t tree<K>::prev_of(const dnode* n, obsolete_met& w) const {
  for (unsigned i = 0; i < w.n; ++i)
    if (w.last[i] == n) corrupt("an obsolete node is still in the list (damaged pool)");
  if (++w.total > p_.size() / sizeof(dnode)) corrupt("a cycle through obsolete nodes (damaged pool)");
  if (w.n == k_met) w.n = 0;
  w.last[w.n++] = n;
  const uint64_t pv = load_acq(&n->prev);
  if (!node_in_heap(pv)) corrupt("an obsolete node names no left neighbour (damaged pool)");
  if constexpr (K::k_blocks)
    if (!K::valid_low(p_, n->low) || !K::valid_low(p_, at(pv)->low)) corrupt("an anchor block outside the heap");
  if (!K::less(low_of(at(pv)), low_of(n))) corrupt("an obsolete node's left neighbour is not on its left (damaged pool)");
  return pv;
}

// ---------------------------------------------------------------- finding

template <class K>
dnode* tree<K>::locate(probe_arg k, uint64_t& v) const {
  char buf[8];
  const std::string_view kb = anchors<K>::of_probe(k, buf);
  for (unsigned spins = 0;; ++spins) {
    uint64_t off = layer_.find(kb);
    obsolete_met met;  // the obsolete nodes this walk met
    while (off) {
      dnode* n = at(off);
      uint64_t ver = read_begin(n);
      if (obsolete(ver)) {  // merged into its left neighbour (prev is final)
        off = prev_of(n, met);
        continue;
      }
      if (K::less(k, low_of(n))) break;  // a hint right of the key (a racing erase): from the top
      uint64_t nx = load_acq(&n->next);
      if (nx && !K::less(k, low_of(at(nx)))) {  // a split the search layer has not seen yet
        if (validate(n, ver)) off = nx;
        continue;
      }
      v = ver;
      return n;
    }
    pause_for(spins);
  }
}

template <class K>
dnode* tree<K>::lock_node(probe_arg k) {
  for (;;) {
    uint64_t v;
    dnode* n = locate(k, v);
    if (upgrade(n, v)) return n;
  }
}

template <class K>
int tree<K>::find_slot(const dnode* n, probe_arg k) const noexcept {
  uint64_t m = detail::match_bytes64(n->fp, K::fp(k)) & __atomic_load_n(&n->bitmap, __ATOMIC_ACQUIRE);
  for (; m; m &= m - 1)
    if (K::matches(p_, &n->slot[std::countr_zero(m)], k)) return std::countr_zero(m);
  return -1;
}

// Sorts copies of the keys, not the slots: under an optimistic read a slot
// may change during the sort, and std::sort must never see a comparison
// change its answer (it would run off the array).
template <class K>
unsigned tree<K>::sorted_slots(const dnode* n, uint8_t* out) const {
  struct item {
    key k;
    uint8_t slot;
  };
  item it[k_slots];
  unsigned c = 0;
  for (uint64_t m = __atomic_load_n(&n->bitmap, __ATOMIC_ACQUIRE); m; m &= m - 1) {
    unsigned i = unsigned(std::countr_zero(m));
    it[c++] = {key_of(n, i), uint8_t(i)};
  }
  std::sort(it, it + c, [](const item& a, const item& b) { return K::less(a.k, b.k); });
  for (unsigned j = 0; j < c; ++j) out[j] = it[j].slot;
  return c;
}

// ---------------------------------------------------------------- records

template <class K>
void tree<K>::put_slot(dnode* n, unsigned i, probe_arg k, uint64_t w) {
  store_rel(&n->slot[i].key, K::key_word(k));
  store_rel(&n->slot[i].value, w);
  store_rel(&n->fp[i], K::fp(k));
  p_.flush(&n->slot[i], sizeof(entry));
  p_.flush(&n->fp[i], 1);
}

template <class K>
bool tree<K>::insert_word(probe_arg k, uint64_t w) {
  dnode* n = lock_node(k);
  if (find_slot(n, k) >= 0) {
    unlock(n);
    return false;
  }
  dnode* target = n;
  smo s{};
  if (std::popcount(n->bitmap) >= int(cap_)) {
    try {
      s = split(n);
    } catch (...) {
      unlock(n);
      throw;
    }
    dnode* m = at(s.right);
    if (!K::less(k, low_of(m))) target = m;  // m is reachable only through n, which is locked
  }
  unsigned i = unsigned(std::countr_zero(~target->bitmap));
  put_slot(target, i, k, w);
  p_.fence();
  store_rel(&target->bitmap, target->bitmap | bit(i));  // commit
  p_.persist(&target->bitmap, 8);
  if (s.kind) queue(s);
  unlock(n);
  return true;
}

template <class K>
bool tree<K>::update_word(probe_arg k, uint64_t w, uint64_t& old) {
  dnode* n = lock_node(k);
  int i = find_slot(n, k);
  if (i >= 0) {
    old = n->slot[i].value;
    store_rel(&n->slot[i].value, w);  // commit
    p_.persist(&n->slot[i].value, 8);
  }
  unlock(n);
  return i >= 0;
}

template <class K>
bool tree<K>::remove_word(probe_arg k, uint64_t& old) {
  dnode* n = lock_node(k);
  int i = find_slot(n, k);
  if (i >= 0) {
    old = n->slot[i].value;
    store_rel(&n->bitmap, n->bitmap & ~bit(unsigned(i)));  // commit
    p_.persist(&n->bitmap, 8);
    if (std::popcount(n->bitmap) < int(cap_ / 2)) try_merge(n);
  }
  unlock(n);
  return i >= 0;
}

// ---------------------------------------------------------------- SMOs

// The upper half of n moves to a new right neighbour m (see the header for
// the commit order and what recovery does with each crash state).
template <class K>
typename tree<K>::smo tree<K>::split(dnode* n) {
  const uint64_t noff = p_.off(n);
  uint8_t ord[k_slots];
  unsigned c = sorted_slots(n, ord), h = c / 2;
  smo s{};
  if (!mut_.on(mutant::split_unlogged)) s = log_begin(k_smo_split, noff, 0);
  // m's block, its anchor block (bytes) and the block the SMO thread's layer
  // insert may need (layer.hpp): all before anything commits, so a full
  // pool fails this insert and nothing else. Each may also throw
  // std::bad_alloc (a new chunk run needs a DRAM node): the log entry goes
  // back then too.
  uint64_t moff = 0, lw = 0, spare = 0;
  try {
    moff = p_.alloc(sizeof(dnode));
    if (!moff) throw error(errc::pool_full, "pactree: the pool is full");
    const key mk = key_of(n, ord[h]);
    char buf[8];
    spare = take_spare(layer_.spare_size(anchors<K>::of_probe(K::probe_of(mk), buf).size()));
    if (!spare) throw error(errc::pool_full, "pactree: the pool is full");
    lw = K::make_low(p_, mk);
  } catch (...) {
    if (moff) p_.free(moff);
    if (spare) stash_spare(spare);
    if (s.e) log_release(s);
    throw;
  }
  dnode* m = at(moff);
  std::memset(static_cast<void*>(m), 0, sizeof(dnode));
  m->lock = uint64_t(gen_) << 32;
  m->low = lw;
  m->next = n->next;
  uint64_t moved = 0;
  for (unsigned j = h; j < c; ++j) {
    m->slot[j - h] = n->slot[ord[j]];
    m->fp[j - h] = n->fp[ord[j]];
    moved |= bit(ord[j]);
  }
  m->bitmap = c - h >= 64 ? ~uint64_t{0} : bit(c - h) - 1;
  if (!mut_.on(mutant::node_unflushed)) p_.flush(m, offsetof(dnode, slot) + (c - h) * sizeof(entry));
  p_.fence();
  store_rel(&n->next, moff);  // commit: m is in the list
  p_.persist(&n->next, 8);
  store_rel(&n->bitmap, n->bitmap & ~moved);  // n forgets the copies
  p_.persist(&n->bitmap, 8);
  ++splits_;
  s.kind = k_smo_split;
  s.left = noff;
  s.right = moff;
  s.spare = spare;
  return s;
}

// n (locked, below half full) absorbs its right neighbour when both fit in
// 3/4 of a node, or whatever the neighbour holds when n is empty: a node
// emptied beside a fuller one has no later remove of its own to merge it,
// and nodes left empty all over the list keep the chunks they sit in from
// serving other sizes (a pool emptied by removes took a tenth of its first
// fill again). Opportunistic: skipped when the neighbour is busy or no log
// entry can be had.
template <class K>
void tree<K>::try_merge(dnode* n) {
  const uint64_t noff = p_.off(n), roff = n->next;
  if (!roff) return;
  dnode* r = at(roff);
  uint64_t rv = load_acq(&r->lock);
  if ((current(rv) && (rv & (k_locked | k_obsolete))) || !upgrade(r, rv)) return;
  if (n->bitmap && std::popcount(n->bitmap) + std::popcount(r->bitmap) > int(cap_ * 3 / 4)) {
    unlock(r);
    return;
  }
  smo s;
  try {
    s = log_begin(k_smo_merge, noff, roff);
  } catch (...) {  // a full pool, or no DRAM for the queue: a merge is optional
    unlock(r);
    return;
  }
  uint64_t added = 0, room = ~n->bitmap;
  for (uint64_t m = r->bitmap; m; m &= m - 1, room &= room - 1) {
    unsigned j = unsigned(std::countr_zero(m)), i = unsigned(std::countr_zero(room));
    n->slot[i] = r->slot[j];
    n->fp[i] = r->fp[j];
    p_.flush(&n->slot[i], sizeof(entry));
    added |= bit(i);
  }
  p_.flush(n->fp, k_slots);
  p_.fence();
  const uint64_t rnext = r->next;
  if (mut_.on(mutant::merge_link_first)) {
    store_rel(&n->next, rnext);
    p_.persist(&n->next, 8);
  }
  store_rel(&n->bitmap, n->bitmap | added);  // the copies count (r still linked: clip drops them)
  p_.persist(&n->bitmap, 8);
  store_rel(&n->next, rnext);  // commit: r leaves the list
  p_.persist(&n->next, 8);
  store_rel(&r->prev, noff);
  unlock_obsolete(r);  // readers inside r go to r->prev == n
  ++merges_;
  queue(s);
}

// Recovery (single-threaded): n's slots whose keys are >= its next node's
// anchor are copies an interrupted split or merge left (the next node holds
// them): dropped. Idempotent; a consistent node is left as it is.
template <class K>
void tree<K>::clip(dnode* n) {
  uint64_t nx = n->next;
  if (!nx) return;
  if (!node_in_heap(nx)) corrupt("a node link outside the heap");
  if constexpr (K::k_blocks)
    if (!K::valid_low(p_, at(nx)->low)) corrupt("an anchor block outside the heap");
  key hi = low_of(at(nx));
  uint64_t keep = n->bitmap;
  for (uint64_t m = keep; m; m &= m - 1) {
    unsigned i = unsigned(std::countr_zero(m));
    if constexpr (K::k_blocks)
      if (!K::valid_record(p_, n->slot[i].value)) corrupt("a record block outside the heap");
    if (!K::less(key_of(n, i), hi)) keep &= ~bit(i);
  }
  if (keep != n->bitmap) {
    n->bitmap = keep;
    p_.persist(&n->bitmap, 8);
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::pactree
