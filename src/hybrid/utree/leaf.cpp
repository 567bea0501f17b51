// uTree DRAM leaves (see utree.hpp): search inside a leaf, finding the leaf
// of a key from the search layer's hint, locks, splits, and unlinking an
// emptied leaf (freed two pool epochs later).
#include <cstddef>
#include <new>

#include "hybrid/utree/utree.hpp"
#include "common/prefetch.hpp"

namespace pmindex::hybrid::utree {

using common::load_acq;
using common::load_relaxed;
using common::store_rel;

namespace {
inline void pause_for(unsigned spins) noexcept { sync::optimistic_lock::backoff(spins); }
}  // namespace

// ---------------------------------------------------------------- leaves

template <class K>
typename tree<K>::leaf* tree<K>::new_leaf(const key& low) {
  const size_t bytes = offsetof(leaf, slot) + 2 * sizeof(uint64_t) * cap_;
  void* m = ::operator new(bytes, std::align_val_t{64});  // lines as locate() asks for them
  std::memset(m, 0, bytes);
  leaf* l = static_cast<leaf*>(m);
  if constexpr (K::k_blocks) {
    std::string_view v = low.view();
    if (!v.empty()) {  // the empty key is k_min: no copy
      try {
        l->low_copy = new char[common::kv_block_bytes(v.size(), 0)];
      } catch (...) {
        ::operator delete(m, std::align_val_t{64});
        throw;
      }
      auto* b = reinterpret_cast<common::kv_block*>(l->low_copy);
      b->klen = uint32_t(v.size());
      b->vlen = 0;
      std::memcpy(b->data, v.data(), v.size());
      l->low = {low.pfx, b, {}};
    } else {
      l->low = K::k_min;
    }
  } else {
    l->low = low;
  }
  leaves_.fetch_add(1, std::memory_order_relaxed);
  return l;
}

template <class K>
void tree<K>::free_leaf(leaf* l) noexcept {
  delete[] l->low_copy;
  ::operator delete(static_cast<void*>(l), std::align_val_t{64});
  leaves_.fetch_sub(1, std::memory_order_relaxed);
}

template <class K>
unsigned tree<K>::count_of(const leaf* l) const noexcept {
  unsigned c = __atomic_load_n(&l->count, __ATOMIC_ACQUIRE);
  return c < cap_ ? c : cap_;  // a torn optimistic read never indexes out of the leaf
}

// Optimistic readers may compare against an entry a writer is moving: every
// node offset a slot can hold was live at some moment of the reader's pin,
// so its node (and, bytes, its kv block) is still readable.
template <class K>
bool tree<K>::entry_less(const leaf* l, unsigned i, probe_arg k) const noexcept {
  const uint64_t w = load_relaxed(&kw(l)[i]);
  if constexpr (!K::k_blocks) {
    return w < k;
  } else {
    if (w != k.pfx) return w < k.pfx;
    return common::kv_key(p_, load_acq(&node(load_relaxed(&nd(l)[i]))->value)) < k.view();
  }
}

template <class K>
bool tree<K>::entry_is(const leaf* l, unsigned i, probe_arg k) const noexcept {
  const uint64_t w = load_relaxed(&kw(l)[i]);
  if constexpr (!K::k_blocks) {
    return w == k;
  } else {
    return w == k.pfx && common::kv_key(p_, load_acq(&node(load_relaxed(&nd(l)[i]))->value)) == k.view();
  }
}

template <class K>
typename tree<K>::key tree<K>::entry_key(const leaf* l, unsigned i) const noexcept {
  const uint64_t w = load_relaxed(&kw(l)[i]);
  if constexpr (!K::k_blocks)
    return w;
  else
    return K::of(p_, w, load_acq(&node(load_relaxed(&nd(l)[i]))->value));
}

template <class K>
unsigned tree<K>::lower_bound(const leaf* l, unsigned c, probe_arg k) const noexcept {
  unsigned lo = 0, hi = c;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (entry_less(l, mid, k))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class K>
int tree<K>::find(const leaf* l, probe_arg k) const noexcept {
  const unsigned c = count_of(l), pos = lower_bound(l, c, k);
  return pos < c && entry_is(l, pos, k) ? int(pos) : -1;
}

// ---------------------------------------------------------------- finding, locks

// B-link style: a leaf covers [low, next's low); the search layer's answer
// is a hint (it may lag a split, or name a leaf just unlinked).
template <class K>
typename tree<K>::leaf* tree<K>::locate(probe_arg k, uint64_t& v) const noexcept {
  for (unsigned spins = 0;; ++spins) {
    leaf* l = reinterpret_cast<leaf*>(layer_.find(k));
    // The whole leaf at once (header, key words, node offsets): the
    // search's probes and the node offset they lead to then wait for one
    // miss, not one each.
    if (l) common::prefetch_lines(l, offsetof(leaf, slot) + 2 * sizeof(uint64_t) * cap_);
    while (l) {
      const uint64_t ver = l->lock.read_begin();
      if (__atomic_load_n(&l->dead, __ATOMIC_ACQUIRE) || K::less(k, l->low)) break;  // from the top
      leaf* nx = load_acq(&l->next);
      bool right;
      if constexpr (K::k_blocks)
        right = nx && !K::less(k, nx->low);
      else
        right = nx && k >= load_relaxed(&l->high);  // stored before next: read after it, it is next's
      if (right) {  // a split the search layer has not seen yet
        if (l->lock.validate(ver)) l = nx;
        continue;
      }
      v = ver;
      return l;
    }
    pause_for(spins);
  }
}

template <class K>
typename tree<K>::leaf* tree<K>::lock_leaf(probe_arg k) noexcept {
  for (;;) {
    uint64_t v;
    leaf* l = locate(k, v);
    if (try_upgrade(l, v)) return l;
  }
}

// Right to left, like every lock acquisition here: no deadlock. The left
// neighbour's `next` changes only under its own lock, so once it is locked
// and still points at l, it stays l's left neighbour.
template <class K>
typename tree<K>::leaf* tree<K>::lock_left(leaf* l) noexcept {
  for (unsigned spins = 0;; ++spins) {
    leaf* left = load_acq(&l->prev);
    if (!left) return nullptr;
    left->lock.lock();
    if (!__atomic_load_n(&left->dead, __ATOMIC_RELAXED) && load_acq(&left->next) == l) return left;
    left->lock.unlock();  // split or unlinked meanwhile: l->prev has moved
    pause_for(spins);
  }
}

// ---------------------------------------------------------------- changes

template <class K>
void tree<K>::put_entry(leaf* l, unsigned pos, uint64_t w, uint64_t n) noexcept {
  const unsigned c = l->count;
  PMINDEX_ASSERT(c < cap_ && pos <= c);
  for (unsigned i = c; i > pos; --i) {
    store_rel(&kw(l)[i], kw(l)[i - 1]);
    store_rel(&nd(l)[i], nd(l)[i - 1]);
  }
  store_rel(&kw(l)[pos], w);
  store_rel(&nd(l)[pos], n);
  store_rel(&l->count, c + 1);
}

template <class K>
void tree<K>::erase_entry(leaf* l, unsigned pos) noexcept {
  const unsigned c = l->count;
  PMINDEX_ASSERT(pos < c);
  for (unsigned i = pos; i + 1 < c; ++i) {
    store_rel(&kw(l)[i], kw(l)[i + 1]);
    store_rel(&nd(l)[i], nd(l)[i + 1]);
  }
  store_rel(&l->count, c - 1);
}

// DRAM only: the list does not change. The new leaf is published locked.
// A bad_alloc (new_leaf) comes before any change.
template <class K>
typename tree<K>::leaf* tree<K>::split(leaf* l) {
  const unsigned c = l->count, h = c / 2;
  leaf* r = new_leaf(entry_key(l, h));
  r->lock.word_ = 1;  // locked by this thread
  for (unsigned j = h; j < c; ++j) {
    kw(r)[j - h] = kw(l)[j];
    nd(r)[j - h] = nd(l)[j];
  }
  r->count = c - h;
  leaf* nx = l->next;
  r->next = nx;
  r->prev = l;
  if constexpr (!K::k_blocks) {
    r->high = l->high;
    store_rel(&l->high, r->low + mut_.on(mutant::high_off_by_one));
  }
  if (nx) store_rel(&nx->prev, r);
  store_rel(&l->next, r);
  store_rel(&l->count, h);
  layer_.insert(r->low, reinterpret_cast<uint64_t>(r), true);  // without DRAM it lags: locate() moves right
  splits_.fetch_add(1, std::memory_order_relaxed);
  return r;
}

// l (not the first leaf) became empty: its range goes to `left`.
template <class K>
void tree<K>::unlink_leaf(leaf* l, leaf* left) {
  PMINDEX_ASSERT(l->count == 0 && left->next == l);
  leaf* nx = l->next;
  if constexpr (!K::k_blocks) store_rel(&left->high, l->high);
  store_rel(&left->next, nx);
  if (nx) store_rel(&nx->prev, left);
  layer_.erase(l->low);
  __atomic_store_n(&l->dead, 1u, __ATOMIC_RELEASE);
  unlinks_.fetch_add(1, std::memory_order_relaxed);
}

// Readers and writers pinned before the unlink may still stand on l; every
// operation runs pinned, so after two pool epochs none can.
template <class K>
void tree<K>::bury(leaf* l) {
  std::vector<leaf*> done;
  {
    std::lock_guard lk(grave_mu_);
    const uint64_t g = p_.epochs().global_epoch();
    size_t keep = 0;
    for (auto& [x, e] : grave_) {
      if (e + 2 <= g)
        done.push_back(x);
      else
        grave_[keep++] = {x, e};
    }
    grave_.resize(keep);
    grave_.emplace_back(l, g);
  }
  for (leaf* x : done) free_leaf(x);
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::utree
