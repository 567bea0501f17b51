#include "btree/lbtree/leaf.hpp"

#include <algorithm>
#include <vector>

namespace pmindex::btree::lbtree::detail {

using btree::detail::load_relaxed;
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

template <class K>
leaf_ops<K>::leaf_ops(pm::pool& p, const index_config& cfg)
    : p_(p), locks_(new sync::optimistic_lock[k_stripes]()) {
  inner_cap_ = static_cast<uint32_t>(cfg.u64("inner"));
  // Sibling links hold offset / 64 in 32 bits.
  if (p.size() > (uint64_t{1} << 38))
    throw error(errc::unsupported, "lbtree: pools larger than 256 GiB are not supported");
}

template <class K>
int leaf_ops<K>::slot_of(const leaf* l, uint64_t meta, probe_arg key) const noexcept {
  // One 16-byte compare covers the 14 fingerprints (bytes 2..15).
  uint64_t m = (btree::detail::match_bytes16(reinterpret_cast<const uint8_t*>(l), K::fp(key)) >> 2) & meta & k_bits;
  for (; m; m &= m - 1) {
    int i = std::countr_zero(m);
    if (K::matches(p_, &l->kv[i], key)) return i;
  }
  return -1;
}

// Entry moving. If line 0 has a free slot, the entry, its fingerprint and the
// bitmap are all in line 0: written in that order and flushed once (a line
// holds a prefix of its stores, so no state has the bit without the entry).
// Otherwise the entry goes to the emptiest other line together with copies
// of line-0 entries (as many as fit); that line is persisted, then one meta
// store sets the new bits and clears the moved line-0 bits, freeing line-0
// slots so the next inserts are single-line again.
// Bytes: the record block (written and flushed by the caller) lies outside
// the leaf, so the single-line insert fences it before its line-0 stores
// (one more fence than u64); the entry-moving insert's first fence covers it.
template <class K>
ins leaf_ops<K>::insert(leaf* l, probe_arg key, uint64_t value) {
  uint64_t meta = l->meta;
  if (slot_of(l, meta, key) >= 0) return ins::exists;
  uint64_t free = ~meta & k_bits;
  if (!free) return ins::full;
  uint8_t f = K::fp(key);
  uint64_t fh = l->fp_hi;
  if (free & k_line_mask[0]) {
    uint32_t s = std::countr_zero(free & k_line_mask[0]);
    if constexpr (K::k_blocks) p_.fence();
    store_rel(&l->kv[s].key, K::key_word(key));
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
  store_rel(&l->kv[s].key, K::key_word(key));
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

template <class K>
bool leaf_ops<K>::update(leaf* l, probe_arg key, uint64_t value, uint64_t& old) {
  int i = slot_of(l, l->meta, key);
  if (i < 0) return false;
  // One aligned 8-byte store (the value, or a record block the caller made
  // durable): failure-atomic in place. Durable before unlock.
  old = l->kv[i].value;
  store_rel(&l->kv[i].value, value);
  p_.persist(&l->kv[i].value, 8);
  return true;
}

template <class K>
bool leaf_ops<K>::remove(leaf* l, probe_arg key, uint64_t& old) {
  int i = slot_of(l, l->meta, key);
  if (i < 0) return false;
  old = l->kv[i].value;
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
// after it the split is complete. No repair is ever needed. Bytes: records
// never move (r's slots name l's record blocks); r's fence key block is made
// first (the one allocation that can fail, l unchanged) and fenced with r.
template <class K>
typename leaf_ops<K>::key leaf_ops<K>::split(leaf* l, uint64_t r_off, leaf* r, probe_arg key, uint64_t value) {
  uint64_t meta = l->meta;
  uint32_t idx[k_slots];
  for (uint32_t i = 0; i < k_slots; ++i) idx[i] = i;
  std::sort(idx, idx + k_slots, [&](uint32_t a, uint32_t b) { return K::less(key_at(l, a), key_at(l, b)); });
  const auto s = key_at(l, idx[k_slots / 2]);
  const uint64_t low = K::make_low(p_, s);  // bytes: may throw pool_full
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
  if (!K::less(key, s)) {
    r->kv[slot] = {K::key_word(key), value};
    put_fp(rm, rfh, slot, K::fp(key));
    rm |= bit(slot);
  }
  const uint32_t alt = (meta >> 14) & 1;
  r->low = low;
  r->next[0] = l->next[alt];
  r->fp_hi = rfh;
  r->meta = rm;  // alt = 0
  p_.persist(r, sizeof(leaf));  // r complete and durable before it is linked
  store_rel(&l->next[alt ^ 1], static_cast<uint32_t>(r_off / 64));
  p_.persist(&l->next[alt ^ 1], 4);  // the spare link durable before the flip
  store_rel(&l->meta, (meta & ~moved) ^ k_alt);
  p_.persist(&l->meta, 8);  // commit
  return K::low(p_, low);
}

// Bytes: the caller has checked every valid slot's record block.
template <class K>
std::string leaf_ops<K>::check(const leaf* l, bool has_next, const key& next_low) const {
  if (l->meta & bit(15)) return "reserved meta bit set";
  const key lo = low(l);
  // A vector, not key[k_slots]: GCC 12 warns (-Warray-bounds) that std::sort's
  // insertion sort, written for 16 or more elements, reads past a 14-key array.
  std::vector<key> keys;
  keys.reserve(k_slots);
  for (uint64_t m = l->meta & k_bits; m; m &= m - 1) {
    int i = std::countr_zero(m);
    key k = key_at(l, i);
    if (K::less(k, lo) || (has_next && !K::less(k, next_low)))
      return K::describe(k) + " outside the leaf fences";
    if (fp_of(l, i) != K::fp_of(k)) return "wrong fingerprint for " + K::describe(k);
    keys.push_back(k);
  }
  std::sort(keys.begin(), keys.end(), K::less);
  for (size_t i = 1; i < keys.size(); ++i)
    if (!K::less(keys[i - 1], keys[i])) return "duplicate key in a leaf";
  return {};
}

template class leaf_ops<btree::detail::u64_keys>;
template class leaf_ops<btree::detail::byte_keys>;

}  // namespace pmindex::btree::lbtree::detail
