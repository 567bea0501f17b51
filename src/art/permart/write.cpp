// PermART writes: ROWEX copy-and-swing. Every change builds new nodes, makes
// them durable, and commits by one 8-byte store into a slot of the locked
// parent (`replace`). Lock order is always top-down (grandparent, parent),
// so writers cannot deadlock; a writer that finds its parent changed or
// obsolete after locking restarts from the root.
#include <algorithm>

#include "pmindex/error.hpp"
#include "tree.hpp"

namespace pmindex::art::permart::detail {

using sync::version_guard;

bool tree::write(op o, uint64_t key, uint64_t value) {
  if (o == op::remove && !load_acq(&root_->spare)) [[unlikely]] refill_spare();
  for (int attempt = 0;; ++attempt) {
    try {
      auto g = p_.pin();  // every block seen stays allocated (no ABA on slots)
      for (;;) {
        int r = try_write(o, key, value);
        if (r >= 0) return r;
      }
    } catch (const error& e) {
      // Copy-on-write needs a block even to remove: on a full pool, first
      // give back the blocks this thread retired (grace periods permitting).
      if (e.code() != errc::pool_full || attempt == 1) throw;
      for (int i = 0; i < 3; ++i) p_.collect();
    }
  }
}

int tree::try_write(op o, uint64_t key, uint64_t value) {
  const bool must_exist = o == op::update || o == op::remove;
  header* parent = &root_->h;
  uint64_t* slot = &root_->slot;
  for (;;) {
    uint64_t raw = load_current(slot);
    if (raw == 0 || is_link(raw)) {  // empty slot: a one-pair leaf goes in
      if (must_exist) return 0;
      version_guard lk(parent->lock);
      if (!lk.ok() || load_acq(slot) != raw) return -1;
      fresh_blocks fb(p_);
      pair kv{key, value};
      uint64_t l = new_leaf(fb, &kv, 1);
      replace(slot, raw, l, true);
      fb.commit();
      return 1;
    }
    header* n = hdr(raw);
    if (n->kind == uint8_t(kind::leaf)) return write_leaf(o, parent, slot, raw, key, value);
    unsigned d = n->depth;
    if ((key ^ n->prefix) & prefix_mask(d)) {
      // Prefix split: a new sparse node at the first differing byte takes
      // the old node and a new leaf; the old node itself is not copied.
      if (must_exist) return 0;
      version_guard lk(parent->lock);
      if (!lk.ok() || load_acq(slot) != raw) return -1;
      unsigned p = first_diff_byte(key, n->prefix);
      fresh_blocks fb(p_);
      pair kv{key, value};
      uint64_t l = new_leaf(fb, &kv, 1);
      entry e[2] = {{key_byte(n->prefix, p), raw}, {key_byte(key, p), l}};
      if (e[0].byte > e[1].byte) std::swap(e[0], e[1]);
      uint64_t s = new_inner(fb, p, key & prefix_mask(p), e, 2);
      replace(slot, raw, s, false);
      fb.commit();
      return 1;
    }
    unsigned b = key_byte(key, d);
    uint64_t* cs = find_child(n, b);
    if (!cs) {
      // Growth: copy the node with the new key byte (and without its empty
      // slots), possibly into a bigger kind; the grandparent's slot swings.
      if (must_exist) return 0;
      version_guard lp(parent->lock);
      if (!lp.ok() || load_acq(slot) != raw) return -1;
      version_guard ln(n->lock);
      if (!ln.ok()) return -1;
      if (find_child(n, b)) return -1;  // cannot happen (key set fixed), be safe
      entry e[257];
      unsigned ne = 0;
      uint64_t links[256];
      unsigned nl = 0;
      fresh_blocks fb(p_);
      pair kv{key, value};
      uint64_t l = new_leaf(fb, &kv, 1);
      bool placed = false;
      each_child(n, [&](unsigned cb, uint64_t* s) {
        uint64_t v = load_acq(s);  // no tag: installers untag before unlocking
        if (!placed && cb > b) e[ne++] = {b, l}, placed = true;
        if (is_link(v))
          links[nl++] = v;
        else if (v)
          e[ne++] = {cb, v};
        return true;
      });
      if (!placed) e[ne++] = {b, l};
      uint64_t c = new_inner(fb, d, n->prefix, e, ne);
      replace(slot, raw, c, false);
      fb.commit();
      ln.unlock_obsolete();
      // The old node and the links it held are reachable only by snapshots
      // older than the new node's (settled) stamp.
      p_.retire(untag(raw));
      for (unsigned i = 0; i < nl; ++i) p_.retire(untag(links[i]));
      return 1;
    }
    parent = n;
    slot = cs;
  }
}

int tree::write_leaf(op o, header* parent, uint64_t* slot, uint64_t raw, uint64_t key, uint64_t value) {
  header* lh = hdr(raw);
  pair cur[k_max_view + 1];  // the leaf's pairs, log entries applied
  auto decide = [&](unsigned& cnt, unsigned& i, bool& found) {
    cnt = leaf_view(lh, cur, 0, true);
    i = lower_bound(cur, cnt, key);
    found = i < cnt && cur[i].key == key;
    return !(o == op::insert && found) && !((o == op::update || o == op::remove) && !found);
  };
  unsigned cnt, i;
  bool found;
  if (!decide(cnt, i, found)) return 0;  // nothing to do (no lock needed)
  version_guard lk(parent->lock);
  if (!lk.ok() || load_acq(slot) != raw) return -1;
  // Under the lock: a log leaf may have changed in place since; look again.
  if (leaf_logged(lh) && !decide(cnt, i, found)) return 0;
  int ret = o == op::upsert && found ? 0 : 1;  // upsert: true iff inserted
  if (leaf_logged(lh)) {
    // 2-Log: append in place when a log entry is free and the result still
    // fits a leaf (non-empty, at most 14 pairs); otherwise reconcile below.
    auto* ll = reinterpret_cast<log_leaf*>(lh);
    unsigned j = (ll->log[0].meta & k_log_valid) ? ((ll->log[1].meta & k_log_valid) ? 2 : 1) : 0;
    bool fits = o == op::remove ? cnt > 1 : (found || cnt < k_big_leaf);
    if (j < 2 && fits) {
      append_log(ll, j, key, value, o == op::remove);
      return ret;
    }
  }
  fresh_blocks fb(p_, o == op::remove);
  uint64_t neu;
  if (o == op::remove) {
    if (cnt == 1) {
      neu = new_link(fb);  // the slot becomes null, with its own version
    } else {
      std::copy(cur + i + 1, cur + cnt, cur + i);
      neu = new_leaf(fb, cur, cnt - 1);
    }
  } else if (found) {
    cur[i].value = value;
    neu = new_leaf(fb, cur, cnt);
  } else {
    std::copy_backward(cur + i, cur + cnt, cur + cnt + 1);
    cur[i] = {key, value};
    unsigned n = cnt + 1;
    if (n <= k_big_leaf) {
      neu = new_leaf(fb, cur, n);
    } else {
      // Split: a sparse node at the first byte where the keys differ, with
      // one leaf per distinct byte (15 keys in >= 2 groups: each fits; a
      // log leaf's view never exceeds 14 pairs, so reconciliation too).
      unsigned p = first_diff_byte(cur[0].key, cur[n - 1].key);
      entry e[k_max_view + 1];
      unsigned ne = 0;
      for (unsigned s = 0; s < n;) {
        unsigned b = key_byte(cur[s].key, p), t = s + 1;
        while (t < n && key_byte(cur[t].key, p) == b) ++t;
        e[ne++] = {b, new_leaf(fb, cur + s, t - s)};
        s = t;
      }
      neu = new_inner(fb, p, cur[0].key & prefix_mask(p), e, ne);
    }
  }
  replace(slot, raw, neu, true);
  fb.commit();
  return ret;
}

// 2-Log append (parent locked, entry j free, entry j-1 durable): key and
// value, then meta with UNPERSISTED, all in one cache line, so one flush and
// one fence make the entry durable; readers wait while the bit is set.
void tree::append_log(log_leaf* l, unsigned j, uint64_t key, uint64_t value, bool del) {
  log_entry* e = &l->log[j];
  e->key = key;
  e->value = value;
  e->stamp = sync::k_stamp_tbd;
  uint64_t meta = k_log_valid | (del ? k_log_delete : 0);
  store_rel(&e->meta, meta | k_log_unpersisted);  // after key and value (release)
  p_.flush(e, sizeof(log_entry));
  if (!mut_.on(mutant::flush_without_fence)) p_.fence();
  store_rel(&e->meta, meta);
  p_.flush(e, sizeof(log_entry));  // so a clean close keeps no tag
  sync::settle_stamp(&e->stamp, clock_);
}

uint64_t tree::new_leaf(fresh_blocks& fb, const pair* kv, unsigned n) {
  unsigned cap = leaf_cap_for(n);
  bool logged = log_ && cap == k_big_leaf;
  uint64_t size = logged ? sizeof(log_leaf) : leaf_size(cap);
  uint64_t off = fb.alloc(size);
  auto* h = p_.ptr<header>(off);
  std::memset(static_cast<void*>(h), 0, logged ? 96 : sizeof(header));
  h->kind = uint8_t(kind::leaf);
  h->count = uint8_t(n);
  h->cap = uint8_t(cap);
  h->depth = logged ? k_leaf_logged : 0;
  std::memcpy(static_cast<void*>(leaf_pairs(h)), kv, n * sizeof(pair));
  // Durable before it is published (the fence is in replace()).
  p_.flush(h, size);
  return off;
}

uint64_t tree::new_inner(fresh_blocks& fb, unsigned depth, uint64_t prefix, const entry* e, unsigned n) {
  header h{};
  h.depth = uint8_t(depth);
  h.prefix = prefix & prefix_mask(depth);
  uint64_t off;
  if (n <= k_sparse_cap) {
    off = fb.alloc(sizeof(sparse));
    auto* s = p_.ptr<sparse>(off);
    std::memset(static_cast<void*>(s), 0, sizeof(sparse));
    h.kind = uint8_t(kind::sparse);
    h.count = uint8_t(n);
    s->h = h;
    for (unsigned i = 0; i < n; ++i) s->keys[i] = uint8_t(e[i].byte), s->slots[i] = e[i].value;
  } else if (n <= k_indirect_cap) {
    off = fb.alloc(sizeof(indirect));
    auto* s = p_.ptr<indirect>(off);
    std::memset(static_cast<void*>(s), 0, sizeof(indirect));
    h.kind = uint8_t(kind::indirect);
    h.count = uint8_t(n);
    s->h = h;
    for (unsigned i = 0; i < n; ++i) {
      s->bits[e[i].byte >> 6] |= uint64_t{1} << (e[i].byte & 63);
      s->slots[i] = e[i].value;
    }
  } else {
    off = fb.alloc(sizeof(full));
    auto* s = p_.ptr<full>(off);
    std::memset(static_cast<void*>(s), 0, sizeof(full));
    h.kind = uint8_t(kind::full);
    s->h = h;
    for (unsigned i = 0; i < n; ++i) s->slots[e[i].byte] = e[i].value;
  }
  p_.flush(p_.ptr<void>(off), block_size(p_.ptr<header>(off)));
  return off;
}

uint64_t tree::new_link(fresh_blocks& fb) {
  // Volatile by nature: recovery resets a link without reading it, so its
  // contents are never flushed.
  if (uint64_t off = fb.try_alloc(k_link_size)) return off | k_link;
  // Pool full: take the root's spare (the caller holds a lock, but two
  // removers may hold different ones: claim it atomically). Its slot in the
  // root is cleared durably first, so no crash leaves it referenced twice.
  uint64_t spare = __atomic_exchange_n(&root_->spare, 0, __ATOMIC_ACQ_REL);
  if (!spare) throw error(errc::pool_full, "pool " + p_.path() + " is full (no block for a version link)");
  p_.persist(&root_->spare, 8);
  return spare | k_link;
}

void tree::refill_spare() {
  if (load_acq(&root_->spare)) return;
  uint64_t off = p_.alloc(k_link_size);
  if (!off) return;
  uint64_t zero = 0;
  if (!__atomic_compare_exchange_n(&root_->spare, &zero, off, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    p_.free(off);  // another thread refilled it; nobody saw ours
    return;
  }
  // Unfenced: a crash before it is durable leaves the block unreachable,
  // and tracing reclaims it.
  p_.flush(&root_->spare, 8);
}

// Commits a write: `new_raw` (a built, flushed node, or a link) replaces
// `old_raw` in `slot`, whose owner the caller has locked.
//  1. stamp "to be decided", previous version = old value (volatile fields)
//  2. fence: the new node's flushed lines are durable before the pointer is
//  3. store the pointer with UNPERSISTED, flush, fence: now durable
//  4. untag (readers may follow it), flush so a clean close keeps no tag
//  5. settle the stamp (the write's linearization point), then retire the
//     old value: no snapshot taken from now on can walk back to it.
void tree::replace(uint64_t* slot, uint64_t old_raw, uint64_t new_raw, bool retire_old) {
  header* h = hdr(new_raw);  // a link shares the {stamp, prev} prefix
  h->stamp = sync::k_stamp_tbd;
  store_rel(&h->prev, old_raw);
  if (!mut_.on(mutant::publish_before_flush)) p_.fence();
  store_rel(slot, new_raw | k_unpersisted);
  p_.flush(slot, 8);
  bool fence = !mut_.on(mutant::flush_without_fence);
  if (mut_.on(mutant::free_before_durable) && retire_old && old_raw) {
    p_.free(untag(old_raw));  // the next write reuses it before this swing is fenced
    retire_old = false;
    fence = false;
  }
  if (fence) p_.fence();
  store_rel(slot, new_raw);
  p_.flush(slot, 8);
  sync::settle_stamp(&h->stamp, clock_);
  if (retire_old && old_raw) p_.retire(untag(old_raw));
}

}  // namespace pmindex::art::permart::detail
