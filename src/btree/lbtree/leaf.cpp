#include "btree/lbtree/leaf.hpp"

#include <algorithm>

#include "btree/detail/fingerprint.hpp"

namespace pmindex::btree::lbtree::detail {

using btree::detail::fingerprint;
using btree::detail::load_rlx;
using btree::detail::store_rel;

namespace {
uint64_t bit(uint32_t i) { return uint64_t{1} << i; }
uint8_t fp_of(const leaf* l, uint32_t i) { return reinterpret_cast<const uint8_t*>(l)[2 + i]; }
// Sets slot i's fingerprint in the local images of the meta and fp_hi words.
void put_fp(uint64_t& meta, uint64_t& fp_hi, uint32_t i, uint8_t f) {
  if (i < 6) {
    meta = (meta & ~(uint64_t{0xFF} << (16 + 8 * i))) | uint64_t{f} << (16 + 8 * i);
  } else {
    fp_hi = (fp_hi & ~(uint64_t{0xFF} << (8 * (i - 6)))) | uint64_t{f} << (8 * (i - 6));
  }
}
}  // namespace

leaf_ops::leaf_ops(pm::pool& p, const index_config& cfg)
    : p_(p), locks_(new sync::optimistic_lock[k_stripes]()) {
  inner_cap_ = static_cast<uint32_t>(cfg.u64("inner"));
  // Sibling links hold offset / 64 in 32 bits.
  if (p.size() > (uint64_t{1} << 38))
    throw error(errc::unsupported, "lbtree: pools larger than 256 GiB are not supported");
}

int leaf_ops::slot_of(const leaf* l, uint64_t meta, uint64_t key) const noexcept {
  // One 16-byte compare covers the 14 fingerprints (bytes 2..15).
  uint64_t m = (btree::detail::match_bytes16(reinterpret_cast<const uint8_t*>(l), fingerprint(key)) >> 2) & meta & k_bits;
  for (; m; m &= m - 1) {
    int i = std::countr_zero(m);
    if (load_rlx(&l->kv[i].key) == key) return i;
  }
  return -1;
}

size_t leaf_ops::collect(const leaf* l, uint64_t from, record* out) const noexcept {
  size_t n = 0;
  for (uint64_t m = btree::detail::load_acq(&l->meta) & k_bits; m; m &= m - 1) {
    const entry& e = l->kv[std::countr_zero(m)];
    uint64_t k = load_rlx(&e.key);
    if (k >= from) out[n++] = {k, load_rlx(&e.value)};
  }
  return n;
}

// Entry moving. If line 0 has a free slot, the entry, its fingerprint and the
// bitmap are all in line 0: written in that order and flushed once (a line
// holds a prefix of its stores, so no state has the bit without the entry).
// Otherwise the entry goes to the emptiest other line together with copies
// of line-0 entries (as many as fit); that line is persisted, then one meta
// store sets the new bits and clears the moved line-0 bits, freeing line-0
// slots so the next inserts are single-line again.
ins leaf_ops::insert(leaf* l, uint64_t key, uint64_t value) {
  uint64_t meta = l->meta;
  if (slot_of(l, meta, key) >= 0) return ins::exists;
  uint64_t free = ~meta & k_bits;
  if (!free) return ins::full;
  uint8_t f = fingerprint(key);
  uint64_t fh = l->fp_hi;
  if (free & k_line_mask[0]) {
    uint32_t s = std::countr_zero(free & k_line_mask[0]);
    store_rel(&l->kv[s].key, key);
    store_rel(&l->kv[s].value, value);
    put_fp(meta, fh, s, f);
    store_rel(&l->meta, meta | bit(s));
    p_.persist(l, 64);  // the one line; durable before the unlock
    return ins::done;
  }
  uint32_t k = 1;
  for (uint32_t i = 2; i < 4; ++i)
    if (std::popcount(free & k_line_mask[i]) > std::popcount(free & k_line_mask[k])) k = i;
  uint64_t dst = free & k_line_mask[k];
  uint32_t s = std::countr_zero(dst);
  dst &= dst - 1;
  store_rel(&l->kv[s].key, key);
  store_rel(&l->kv[s].value, value);
  put_fp(meta, fh, s, f);
  meta |= bit(s);
  for (uint32_t j = 0; j < 3 && dst; ++j) {  // line 0 is full: slots 0..2 valid
    uint32_t t = std::countr_zero(dst);
    dst &= dst - 1;
    store_rel(&l->kv[t].key, l->kv[j].key);
    store_rel(&l->kv[t].value, l->kv[j].value);
    put_fp(meta, fh, t, fp_of(l, j));
    meta = (meta | bit(t)) & ~bit(j);
  }
  p_.persist(reinterpret_cast<char*>(l) + 64 * k, 64);  // new entry + copies before the commit
  store_rel(&l->fp_hi, fh);  // same line as meta, stored first
  store_rel(&l->meta, meta);
  p_.persist(l, 64);  // commit: durable before the unlock
  return ins::done;
}

bool leaf_ops::update(leaf* l, uint64_t key, uint64_t value) {
  int i = slot_of(l, l->meta, key);
  if (i < 0) return false;
  // One aligned 8-byte store: failure-atomic in place. Durable before unlock.
  store_rel(&l->kv[i].value, value);
  p_.persist(&l->kv[i].value, 8);
  return true;
}

bool leaf_ops::remove(leaf* l, uint64_t key) {
  int i = slot_of(l, l->meta, key);
  if (i < 0) return false;
  store_rel(&l->meta, l->meta & ~bit(i));
  p_.persist(&l->meta, 8);  // durable before the unlock
  return true;
}

// Logless split with two sibling slots. r (fresh, unreachable) receives the
// upper 7 records (and the new one if key >= the split key s) in slots 3..,
// leaving its line 0 free for single-line inserts, and is persisted whole.
// The spare sibling slot of l, next[!alt], gets r and is persisted; it is
// invisible while alt points at the other slot. Then ONE 8-byte store of
// l.meta clears the moved records' bits and flips alt: before it is durable
// the split never happened (r is unreachable and tracing recovery frees it),
// after it the split is complete. No repair is ever needed.
uint64_t leaf_ops::split(leaf* l, uint64_t r_off, leaf* r, uint64_t key, uint64_t value) {
  uint64_t meta = l->meta;
  uint32_t idx[k_slots];
  for (uint32_t i = 0; i < k_slots; ++i) idx[i] = i;
  std::sort(idx, idx + k_slots, [&](uint32_t a, uint32_t b) { return l->kv[a].key < l->kv[b].key; });
  const uint64_t s = l->kv[idx[k_slots / 2]].key;
  std::memset(static_cast<void*>(r), 0, sizeof(leaf));
  uint64_t rm = 0, rfh = 0, moved = 0;
  uint32_t slot = 3;
  for (uint32_t i = k_slots / 2; i < k_slots; ++i, ++slot) {
    uint32_t j = idx[i];
    r->kv[slot] = l->kv[j];
    put_fp(rm, rfh, slot, fp_of(l, j));
    rm |= bit(slot);
    moved |= bit(j);
  }
  if (key >= s) {
    r->kv[slot] = {key, value};
    put_fp(rm, rfh, slot, fingerprint(key));
    rm |= bit(slot);
  }
  const uint32_t alt = (meta >> 14) & 1;
  r->low = s;
  r->next[0] = l->next[alt];
  r->fp_hi = rfh;
  r->meta = rm;  // alt = 0
  p_.persist(r, sizeof(leaf));  // r complete and durable before it is linked
  store_rel(&l->next[alt ^ 1], static_cast<uint32_t>(r_off / 64));
  p_.persist(&l->next[alt ^ 1], 4);  // the spare link durable before the flip
  store_rel(&l->meta, (meta & ~moved) ^ k_alt);
  p_.persist(&l->meta, 8);  // commit
  return s;
}

std::string leaf_ops::check(const leaf* l, bool has_next, uint64_t next_low) const {
  if (l->meta & bit(15)) return "reserved meta bit set";
  uint64_t keys[k_slots];
  uint32_t n = 0;
  for (uint64_t m = l->meta & k_bits; m; m &= m - 1) {
    int i = std::countr_zero(m);
    uint64_t k = l->kv[i].key;
    if (k < l->low || (has_next && k >= next_low)) return "key " + std::to_string(k) + " outside the leaf fences";
    if (fp_of(l, i) != fingerprint(k)) return "wrong fingerprint for key " + std::to_string(k);
    keys[n++] = k;
  }
  std::sort(keys, keys + n);
  if (std::adjacent_find(keys, keys + n) != keys + n) return "duplicate key in a leaf";
  return {};
}

}  // namespace pmindex::btree::lbtree::detail
