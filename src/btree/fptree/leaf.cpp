#include "btree/fptree/leaf.hpp"

namespace pmindex::btree::fptree::detail {

using btree::detail::load_relaxed;
using btree::detail::store_rel;

template <class K>
leaf_ops<K>::leaf_ops(pm::pool& p, const index_config& cfg) : p_(p) {
  cap_ = static_cast<uint32_t>(cfg.u64("leaf"));
  inner_cap_ = static_cast<uint32_t>(cfg.u64("inner"));
  ent_off_ = 32 + (cap_ + 15) / 16 * 16;
  order_off_ = ent_off_ + 16 * cap_;  // a multiple of 16
}

template <class K>
int leaf_ops<K>::slot_of(const leaf* l, uint64_t bitmap, probe_arg key) const noexcept {
  uint64_t m = btree::detail::match_bytes64(l->fp, K::fp(key)) & bitmap;
  for (; m; m &= m - 1) {
    int i = std::countr_zero(m);
    if (K::matches(p_, ent(l, i), key)) return i;
  }
  return -1;
}

// Bytes: the record block was written and flushed by the caller; the fence
// below orders it with the entry, before the bitmap commits both.
template <class K>
ins leaf_ops<K>::insert(leaf* l, probe_arg key, uint64_t value) {
  uint64_t bm = l->bitmap;
  if (slot_of(l, bm, key) >= 0) return ins::exists;
  uint64_t free = ~bm & all_slots();
  if (!free) return ins::full;
  int i = std::countr_zero(free);
  entry* e = ent(l, i);
  store_rel(&e->key, K::key_word(key));
  store_rel(&e->value, value);
  l->fp[i] = K::fp(key);
  // Entry and fingerprint durable before the bit that makes them valid.
  p_.flush(e, sizeof(entry));
  p_.flush(&l->fp[i], 1);
  p_.fence();
  // Commit: one 8-byte store; durable before the caller unlocks, so no
  // reader sees an insert a crash could undo.
  store_rel(&l->bitmap, bm | uint64_t{1} << i);
  p_.persist(&l->bitmap, 8);
  return ins::done;
}

template <class K>
bool leaf_ops<K>::update(leaf* l, probe_arg key, uint64_t value, uint64_t& old) {
  int i = slot_of(l, l->bitmap, key);
  if (i < 0) return false;
  // Values (u64) and record block offsets (bytes; the new block is durable
  // already) are one aligned 8-byte word: the in-place store is failure-
  // atomic (the paper's out-of-place slot + bitmap flip is needed only for
  // values wider than 8 bytes). Durable before the unlock.
  old = ent(l, i)->value;
  store_rel(&ent(l, i)->value, value);
  p_.persist(&ent(l, i)->value, 8);
  return true;
}

template <class K>
bool leaf_ops<K>::remove(leaf* l, probe_arg key, uint64_t& old) {
  int i = slot_of(l, l->bitmap, key);
  if (i < 0) return false;
  old = ent(l, i)->value;
  store_rel(&l->bitmap, l->bitmap & ~(uint64_t{1} << i));
  p_.persist(&l->bitmap, 8);  // durable before the unlock
  return true;
}

// Logless split (replaces the paper's split micro-log). r is fresh and
// unreachable. 1) r gets the upper half (keys >= the median s) and, if
// key >= s, the new record; r is persisted whole. 2) l.next = r, then
// l.bitmap drops the moved slots: two stores to l's first line, persisted
// together. A crash leaves one of: nothing (r unreachable: tracing recovery
// frees it), both (done), or the link without the bitmap change (the moved
// records are in both leaves, identical, since l was locked); recover()
// repairs the last case by dropping from l every key >= low(next). Under the
// crash model a line holds a prefix of its stores, so "bitmap without link"
// cannot happen (the link is stored first). Bytes: the moved slots' record
// blocks are shared by l and r until the bitmap store; records never move.
// The fence key block of r is made first (the one allocation that can fail
// here, leaving l unchanged) and flushed; r's persist fences it too.
template <class K>
typename leaf_ops<K>::key leaf_ops<K>::split(leaf* l, uint64_t r_off, leaf* r, probe_arg key, uint64_t value) {
  uint64_t bm = l->bitmap;
  uint8_t idx[64] = {};
  uint32_t n = 0;
  for (uint64_t m = bm; m; m &= m - 1) idx[n++] = static_cast<uint8_t>(std::countr_zero(m));
  std::nth_element(idx, idx + n / 2, idx + n,
                   [&](uint8_t a, uint8_t b) { return K::less(key_at(l, a), key_at(l, b)); });
  const auto s = key_at(l, idx[n / 2]);
  const uint64_t low = K::make_low(p_, s);  // bytes: may throw pool_full
  uint64_t moved = 0;
  uint32_t j = 0;
  for (uint64_t m = bm; m; m &= m - 1) {
    int i = std::countr_zero(m);
    if (K::less(key_at(l, i), s)) continue;
    *ent(r, j) = *ent(l, i);
    r->fp[j++] = l->fp[i];
    moved |= uint64_t{1} << i;
  }
  if (!K::less(key, s)) {
    *ent(r, j) = {K::key_word(key), value};
    r->fp[j++] = K::fp(key);
  }
  r->bitmap = j == 64 ? ~uint64_t{0} : (uint64_t{1} << j) - 1;
  r->next = l->next;
  r->low = low;
  r->lock.reset();
  p_.persist(r, ent_off_ + 16 * uint64_t{j});  // r complete and durable before it is linked
  store_rel(&l->next, r_off);
  store_rel(&l->bitmap, bm & ~moved);
  p_.persist(l, 16);  // link and bitmap: one line, one flush
  return K::low(p_, low);
}

template <class K>
void leaf_ops<K>::recover(leaf* l, const leaf* next, bool dirty) {
  l->lock.reset();
  if (!dirty) return;
  uint64_t bm = l->bitmap & all_slots();
  if (next) {
    const key nlow = K::low(p_, next->low);
    for (uint64_t m = bm; m; m &= m - 1) {
      int i = std::countr_zero(m);
      if (!K::less(key_at(l, i), nlow)) bm &= ~(uint64_t{1} << i);  // stale copy of an interrupted split
    }
  }
  if (bm != l->bitmap) {
    l->bitmap = bm;
    p_.flush(&l->bitmap, 8);  // the caller fences once for the whole chain
  }
}

// Bytes: the caller has checked every valid slot's record block.
template <class K>
std::string leaf_ops<K>::check(const leaf* l, bool has_next, const key& next_low) const {
  if (l->bitmap & ~all_slots()) return "bitmap bit beyond the leaf capacity";
  const key lo = low(l);
  key keys[64];
  uint32_t n = 0;
  for (uint64_t m = l->bitmap; m; m &= m - 1) {
    int i = std::countr_zero(m);
    key k = key_at(l, i);
    if (K::less(k, lo) || (has_next && !K::less(k, next_low)))
      return K::describe(k) + " outside the leaf fences";
    if (l->fp[i] != K::fp_of(k)) return "wrong fingerprint for " + K::describe(k);
    keys[n++] = k;
  }
  std::sort(keys, keys + n, K::less);
  for (uint32_t i = 1; i < n; ++i)
    if (!K::less(keys[i - 1], keys[i])) return "duplicate key in a leaf";
  return {};
}

template class leaf_ops<btree::detail::u64_keys>;
template class leaf_ops<btree::detail::byte_keys>;

}  // namespace pmindex::btree::fptree::detail
