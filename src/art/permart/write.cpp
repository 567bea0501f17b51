// PermART writes: ROWEX copy-and-swing. Every change builds new nodes, makes
// them durable, and commits by one 8-byte store into a slot of the locked
// parent (`replace`). Lock order is always top-down (grandparent, parent),
// so writers cannot deadlock; a writer that finds its parent changed or
// obsolete after locking restarts from the root.
#include <algorithm>

#include "pmindex/error.hpp"
#include "tree.hpp"

namespace pmindex::art::permart::detail {

bool tree::write(op o, uint64_t key, uint64_t value) {
  bool r = write_retry(o == op::remove, [&] { return try_write(o, key, value); });
  if (links_noted()) clear_noted_links(false);
  return r;
}

void tree::clear_noted_links(bool all) {
  clear_links(all, [&](const link_note& n) { return try_write(op::clear_link, n.key, n.stamp); });
}

void tree::close() {
  clear_noted_links(true);
  index::close();
}

int tree::try_write(op o, uint64_t key, uint64_t value) {
  const bool must_exist = o == op::update || o == op::remove || o == op::clear_link;
  header* parent = &root_->h;
  uint64_t* slot = &root_->slot;
  for (;;) {
    uint64_t raw = load_current(slot);
    if (raw == 0 || is_link(raw)) {  // empty slot: a one-pair leaf goes in
      if (o == op::clear_link && raw) return clear_link(parent, slot, raw, value);
      if (must_exist) return 0;
      return install(parent, slot, raw, true, [&](fresh_blocks& fb) {
        pair kv{key, value};
        return new_leaf(fb, &kv, 1);
      });
    }
    header* n = hdr(raw);
    if (n->kind == uint8_t(kind::leaf))
      return o == op::clear_link ? 0 : write_leaf(o, parent, slot, raw, key, value);
    unsigned d = n->depth;
    if ((key ^ n->prefix) & prefix_mask(d)) {
      // Prefix split: a new sparse node at the first differing byte takes
      // the old node and a new leaf; the old node itself is not copied.
      if (must_exist) return 0;
      return install(parent, slot, raw, false, [&](fresh_blocks& fb) {
        unsigned p = first_diff_byte(key, n->prefix);
        pair kv{key, value};
        uint64_t l = new_leaf(fb, &kv, 1);
        entry e[2] = {{key_byte(n->prefix, p), raw}, {key_byte(key, p), l}};
        if (e[0].byte > e[1].byte) std::swap(e[0], e[1]);
        return new_inner(fb, p, key & prefix_mask(p), e, 2);
      });
    }
    unsigned b = key_byte(key, d);
    uint64_t* cs = find_child(n, b);
    if (!cs) {
      // Growth: copy the node with the new key byte (and without its empty
      // slots), possibly into a bigger kind; the grandparent's slot swings.
      if (must_exist) return 0;
      return grow(
          parent, slot, raw, b,
          [&](fresh_blocks& fb) {
            pair kv{key, value};
            return new_leaf(fb, &kv, 1);
          },
          [&](fresh_blocks& fb, const entry* e, unsigned ne, uint64_t*, unsigned&) {
            return new_inner(fb, d, n->prefix, e, ne);
          });
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
  node_lock lk(*this, parent);
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
  fresh_blocks fb(p_);
  uint64_t neu;
  if (o == op::remove) {
    // Never refused for lack of room (see removal_leaf, new_link).
    if (cnt == 1) {
      neu = new_link(fb, leaf_block_size(lh));  // the slot becomes null, with its own version
    } else {
      std::copy(cur + i + 1, cur + cnt, cur + i);
      neu = removal_leaf<u64_leaves>(fb, cur, cnt - 1, lh);
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
  if (is_link(neu)) note_link(neu, key, {});
  return ret;
}

// 2-Log append (parent locked, entry j free, entry j-1 durable): key and
// value, then meta with UNPERSISTED, all in one cache line, so one flush and
// one fence make the entry durable; readers wait while the bit is set.
void tree::append_log(log_leaf* l, unsigned j, uint64_t key, uint64_t value, bool del) {
  log_entry* e = &l->log[j];
  e->key = key;
  e->value = value;
  commit_log(e, k_log_valid | (del ? k_log_delete : 0));
}

uint64_t tree::new_leaf(fresh_blocks& fb, const pair* kv, unsigned n) { return new_leaf_of<u64_leaves>(fb, kv, n); }

uint64_t tree::new_inner(fresh_blocks& fb, unsigned depth, uint64_t prefix, const entry* e, unsigned n) {
  header h{};
  h.depth = uint8_t(depth);
  h.prefix = prefix & prefix_mask(depth);
  uint64_t off = build_inner(fb, h, e, n, 0);
  p_.flush(p_.ptr<void>(off), block_size(p_.ptr<header>(off)));
  return off;
}

}  // namespace pmindex::art::permart::detail
