#include "btree/fptree/leaf.hpp"

#include "btree/detail/fingerprint.hpp"

namespace pmindex::btree::fptree::detail {

using btree::detail::fingerprint;
using btree::detail::load_rlx;
using btree::detail::store_rel;

leaf_ops::leaf_ops(pm::pool& p, const index_config& cfg) : p_(p) {
  cap_ = static_cast<uint32_t>(cfg.u64("leaf"));
  inner_cap_ = static_cast<uint32_t>(cfg.u64("inner"));
  ent_off_ = 32 + (cap_ + 15) / 16 * 16;
}

int leaf_ops::slot_of(const leaf* l, uint64_t bitmap, uint64_t key) const noexcept {
  uint64_t m = btree::detail::match_bytes64(l->fp, fingerprint(key)) & bitmap;
  for (; m; m &= m - 1) {
    int i = std::countr_zero(m);
    if (load_rlx(&ent(l, i)->key) == key) return i;
  }
  return -1;
}

size_t leaf_ops::collect(const leaf* l, uint64_t from, record* out) const noexcept {
  size_t n = 0;
  for (uint64_t m = btree::detail::load_acq(&l->bitmap) & all_slots(); m; m &= m - 1) {
    const entry* e = ent(l, std::countr_zero(m));
    uint64_t k = load_rlx(&e->key);
    if (k >= from) out[n++] = {k, load_rlx(&e->value)};
  }
  return n;
}

ins leaf_ops::insert(leaf* l, uint64_t key, uint64_t value) {
  uint64_t bm = l->bitmap;
  if (slot_of(l, bm, key) >= 0) return ins::exists;
  uint64_t free = ~bm & all_slots();
  if (!free) return ins::full;
  int i = std::countr_zero(free);
  entry* e = ent(l, i);
  store_rel(&e->key, key);
  store_rel(&e->value, value);
  l->fp[i] = fingerprint(key);
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

bool leaf_ops::update(leaf* l, uint64_t key, uint64_t value) {
  int i = slot_of(l, l->bitmap, key);
  if (i < 0) return false;
  // Values are one aligned 8-byte word: the in-place store is failure-atomic
  // (the paper's out-of-place slot + bitmap flip is needed only for values
  // wider than 8 bytes). Durable before the unlock.
  store_rel(&ent(l, i)->value, value);
  p_.persist(&ent(l, i)->value, 8);
  return true;
}

bool leaf_ops::remove(leaf* l, uint64_t key) {
  int i = slot_of(l, l->bitmap, key);
  if (i < 0) return false;
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
// cannot happen (the link is stored first).
uint64_t leaf_ops::split(leaf* l, uint64_t r_off, leaf* r, uint64_t key, uint64_t value) {
  uint64_t bm = l->bitmap;
  uint64_t keys[64] = {};
  uint32_t n = 0;
  for (uint64_t m = bm; m; m &= m - 1) keys[n++] = ent(l, std::countr_zero(m))->key;
  std::nth_element(keys, keys + n / 2, keys + n);
  const uint64_t s = keys[n / 2];
  uint64_t moved = 0;
  uint32_t j = 0;
  for (uint64_t m = bm; m; m &= m - 1) {
    int i = std::countr_zero(m);
    if (ent(l, i)->key < s) continue;
    *ent(r, j) = *ent(l, i);
    r->fp[j++] = l->fp[i];
    moved |= uint64_t{1} << i;
  }
  if (key >= s) {
    *ent(r, j) = {key, value};
    r->fp[j++] = fingerprint(key);
  }
  r->bitmap = j == 64 ? ~uint64_t{0} : (uint64_t{1} << j) - 1;
  r->next = l->next;
  r->low = s;
  r->lock.reset();
  p_.persist(r, ent_off_ + 16 * uint64_t{j});  // r complete and durable before it is linked
  store_rel(&l->next, r_off);
  store_rel(&l->bitmap, bm & ~moved);
  p_.persist(l, 16);  // link and bitmap: one line, one flush
  return s;
}

void leaf_ops::recover(leaf* l, const leaf* next, bool dirty) {
  l->lock.reset();
  if (!dirty) return;
  uint64_t bm = l->bitmap & all_slots();
  if (next)
    for (uint64_t m = bm; m; m &= m - 1) {
      int i = std::countr_zero(m);
      if (ent(l, i)->key >= next->low) bm &= ~(uint64_t{1} << i);  // stale copy of an interrupted split
    }
  if (bm != l->bitmap) {
    l->bitmap = bm;
    p_.flush(&l->bitmap, 8);  // the caller fences once for the whole chain
  }
}

std::string leaf_ops::check(const leaf* l, bool has_next, uint64_t next_low) const {
  if (l->bitmap & ~all_slots()) return "bitmap bit beyond the leaf capacity";
  uint64_t keys[64];
  uint32_t n = 0;
  for (uint64_t m = l->bitmap; m; m &= m - 1) {
    int i = std::countr_zero(m);
    uint64_t k = ent(l, i)->key;
    if (k < l->low || (has_next && k >= next_low)) return "key " + std::to_string(k) + " outside the leaf fences";
    if (l->fp[i] != fingerprint(k)) return "wrong fingerprint for key " + std::to_string(k);
    keys[n++] = k;
  }
  std::sort(keys, keys + n);
  if (std::adjacent_find(keys, keys + n) != keys + n) return "duplicate key in a leaf";
  return {};
}

}  // namespace pmindex::btree::fptree::detail
