// PermART keys=bytes writes: the copy-and-swing of write.cpp over byte keys.
// The descent compares the key with each inner node's prefix (from where the
// path already agrees); a key that ends at a node's depth lives in its end
// slot. New kv blocks are flushed with the leaf that names them and made
// durable by the same fence, before the slot swings (or the log entry
// commits). Blocks a leaf stops naming are retired when the leaf is
// replaced, after the swing is durable.
#include <algorithm>

#include "art/permart/bytes_tree.hpp"

namespace pmindex::art::permart::detail {

bool bytes_tree::write(op o, std::string_view key, std::string_view value) {
  check_key(key);
  if (o != op::remove) check_value(value);
  const bkey k(key);
  bool r = write_retry(o == op::remove, [&] { return try_write(o, k, value); });
  if (links_noted()) clear_noted_links(false);
  return r;
}

void bytes_tree::clear_noted_links(bool all) {
  clear_links(all, [&](const link_note& n) {
    const bkey k(n.bkey);
    return try_write(op::clear_link, k, {}, n.stamp);
  });
}

void bytes_tree::close() {
  clear_noted_links(true);
  index::close();
}

int bytes_tree::try_write(op o, const bkey& key, std::string_view value, uint64_t clear_stamp) {
  const bool must_exist = o == op::update || o == op::remove || o == op::clear_link;
  const std::string_view k = key.s;
  auto one_leaf = [&](fresh_blocks& fb) {
    bpair kv = new_pair(fb, key, value);
    return new_leaf(fb, &kv, 1);
  };
  header* parent = &root_->h;
  uint64_t* slot = &root_->slot;
  size_t agreed = 0;  // key bytes known to agree with the path
  for (;;) {
    uint64_t raw = load_current(slot);
    if (raw == 0 || is_link(raw)) {  // empty slot: a one-pair leaf goes in
      if (o == op::clear_link && raw) return clear_link(parent, slot, raw, clear_stamp);
      if (must_exist) return 0;
      return install(parent, slot, raw, true, one_leaf);
    }
    header* n = hdr(raw);
    if (n->kind == uint8_t(kind::leaf))
      return o == op::clear_link ? 0 : write_leaf(o, parent, slot, raw, key, value);
    const uint64_t d = bdepth(n);
    const char* pre = btail(n)->prefix;
    const size_t m = std::min<uint64_t>(d, k.size());
    size_t p = agreed;
    while (p < m && pre[p] == k[p]) ++p;
    if (p < d) {
      // The key leaves the node's path at byte p, or ends there: a new node
      // at depth p takes the old one (not copied) and a new leaf, at byte p
      // or in its end slot.
      if (must_exist) return 0;
      return install(parent, slot, raw, false, [&](fresh_blocks& fb) {
        uint64_t l = one_leaf(fb);
        entry e[2] = {{uint8_t(pre[p]), raw}, {0, l}};
        if (p == k.size()) return new_inner(fb, p, pre, e, 1, l);
        e[1].byte = uint8_t(k[p]);
        if (e[0].byte > e[1].byte) std::swap(e[0], e[1]);
        return new_inner(fb, p, pre, e, 2, 0);
      });
    }
    agreed = d + 1;
    uint64_t* cs;
    if (k.size() == d) {
      cs = &btail(n)->end;
    } else if (!(cs = find_child(n, uint8_t(k[d])))) {
      // Growth (as in write.cpp); the end slot moves to the copy.
      if (must_exist) return 0;
      return grow(parent, slot, raw, uint8_t(k[d]), one_leaf,
                  [&](fresh_blocks& fb, const entry* e, unsigned ne, uint64_t* links, unsigned& nl) {
                    uint64_t end = load_acq(&btail(n)->end);
                    if (is_link(end)) links[nl++] = end, end = 0;
                    return new_inner(fb, d, pre, e, ne, end);
                  });
    }
    parent = n;
    slot = cs;
  }
}

int bytes_tree::write_leaf(op o, header* parent, uint64_t* slot, uint64_t raw, const bkey& key,
                           std::string_view value) {
  header* lh = hdr(raw);
  bpair cur[k_bmax_view + 1];  // the leaf's pairs, log entries applied
  unsigned cnt, i;
  bool found;
  auto decide = [&] {
    cnt = leaf_view(lh, cur, 0, true);
    i = rd_.lower_bound(cur, cnt, key.s);
    found = i < cnt && rd_.is(cur[i], key);
    return !(o == op::insert && found) && !((o == op::update || o == op::remove) && !found);
  };
  if (!decide()) return 0;  // nothing to do (no lock needed)
  node_lock lk(*this, parent);
  if (!lk.ok() || load_acq(slot) != raw) return -1;
  // Under the lock: a log leaf may have changed in place since; look again.
  if (leaf_logged(lh) && !decide()) return 0;
  const int ret = o == op::upsert && found ? 0 : 1;  // upsert: true iff inserted
  const bool del = o == op::remove;
  fresh_blocks fb(p_);
  // The pair the write puts in (a removal names the pair it takes out).
  bpair kv = found ? cur[i] : new_pair(fb, key, value);
  if (found && !del) set_value(fb, kv, value);
  if (leaf_logged(lh)) {
    // 2-Log: append in place when an entry is free and the result still
    // fits a leaf. Recovery keeps an entry whose meta reached the pool, even
    // with its UNPERSISTED bit: the kv blocks it names must be durable
    // before meta is stored (a fence of their own, when there are any).
    auto* ll = reinterpret_cast<blog_leaf*>(lh);
    unsigned j = (ll->log[0].meta & k_log_valid) ? ((ll->log[1].meta & k_log_valid) ? 2 : 1) : 0;
    bool fits = del ? cnt > 1 : (found || cnt < k_bbig_leaf);
    if (j < 2 && fits) {
      if (fb.any() && !mut_.on(mutant::publish_before_flush)) p_.fence();
      ll->log[j].kv = kv;
      commit_log(&ll->log[j], k_log_valid | (del ? k_log_delete : 0));
      fb.commit();
      return ret;
    }
  }
  unsigned n = apply_entry(cur, cnt, i, found, kv, del);
  // A remove allocates nothing else, so it is never refused for lack of
  // room (see removal_leaf, new_link).
  uint64_t neu = n == 0  ? new_link(fb, bleaf_block_size(lh))
                 : del    ? removal_leaf<bytes_leaves>(fb, cur, n, lh)
                 : n <= k_bbig_leaf ? new_leaf(fb, cur, n)
                                    : split(fb, cur, n);
  replace(slot, raw, neu, true);
  fb.commit();
  retire_dropped(lh, cur, n);
  if (n == 0) note_link(neu, 0, key.s);
  return ret;
}

// Split of a sorted run of more pairs than a leaf holds: a node at the
// length p of their longest common prefix, the key equal to it (the first,
// if any) in the end slot, the others in one leaf per byte p (at least two
// groups, or the end key and one group: each fits).
uint64_t bytes_tree::split(fresh_blocks& fb, const bpair* kv, unsigned n) {
  const std::string_view first = rd_.key(kv[0]), last = rd_.key(kv[n - 1]);
  const size_t p = std::mismatch(first.begin(), first.end(), last.begin(), last.end()).first - first.begin();
  entry e[k_bmax_view + 1];
  unsigned ne = 0, s = 0;
  uint64_t end = 0;
  if (first.size() == p) end = new_leaf(fb, kv, 1), s = 1;
  while (s < n) {
    unsigned b = uint8_t(rd_.key(kv[s])[p]), t = s + 1;
    while (t < n && uint8_t(rd_.key(kv[t])[p]) == b) ++t;
    e[ne++] = {b, new_leaf(fb, kv + s, t - s)};
    s = t;
  }
  return new_inner(fb, p, first.data(), e, ne, end);
}

uint64_t bytes_tree::new_leaf(fresh_blocks& fb, const bpair* kv, unsigned n) {
  return new_leaf_of<bytes_leaves>(fb, kv, n);
}

uint64_t bytes_tree::new_inner(fresh_blocks& fb, uint64_t depth, const char* prefix, const entry* e, unsigned n,
                               uint64_t end) {
  header h{};
  h.prefix = depth;
  uint64_t off = build_inner(fb, h, e, n, 8 + depth);
  header* nh = p_.ptr<header>(off);
  inner_tail* t = btail(nh);
  t->end = end;
  if (depth) std::memcpy(t->prefix, prefix, depth);
  p_.flush(nh, binner_size(nh->kind, depth));  // fenced by the publisher
  return off;
}

// A kv block (common/kv_block.hpp), flushed: durable by the fence before
// the store that publishes the pair naming it.
uint64_t bytes_tree::new_block(fresh_blocks& fb, std::string_view key, std::string_view value) {
  const uint64_t size = common::kv_block_bytes(key.size(), value.size());
  const uint64_t off = fb.alloc(size);
  auto* b = p_.ptr<common::kv_block>(off);
  b->klen = uint32_t(key.size());
  b->vlen = uint32_t(value.size());
  if (!key.empty()) std::memcpy(b->data, key.data(), key.size());
  if (!value.empty()) std::memcpy(b->data + key.size(), value.data(), value.size());
  if (!mut_.on(mutant::block_unflushed)) p_.flush(b, size);
  return off;
}

bpair bytes_tree::new_pair(fresh_blocks& fb, const bkey& key, std::string_view value) {
  bpair kv{};
  kv.klen = uint32_t(key.s.size());
  kv.key[0] = kv.klen <= k_inline_key ? key.w[0] : new_block(fb, key.s, {});
  kv.key[1] = key.w[1];
  set_value(fb, kv, value);
  return kv;
}

void bytes_tree::set_value(fresh_blocks& fb, bpair& kv, std::string_view value) {
  kv.vlen = uint32_t(value.size());
  kv.value = 0;
  if (value.size() > k_inline_value)
    kv.value = new_block(fb, {}, value);
  else if (!value.empty())
    std::memcpy(&kv.value, value.data(), value.size());
}

// After `old_leaf` was replaced (durably) by leaves holding kept[0, n):
// the blocks it named that none of them names are retired.
void bytes_tree::retire_dropped(header* old_leaf, const bpair* kept, unsigned n) {
  each_block(old_leaf, [&](uint64_t b) {
    for (unsigned i = 0; i < n; ++i)
      if (pair_reader::key_block(kept[i]) == b || pair_reader::value_block(kept[i]) == b) return;
    p_.retire(b);
  });
}

}  // namespace pmindex::art::permart::detail
