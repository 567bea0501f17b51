// P-Masstree writes (see pmasstree.hpp for the protocol): record operations
// and leaf splits under a leaf lock, the copy-on-write parents of a split
// under split_mu_, and new layers.
#include <algorithm>
#include <cstddef>

#include "masstree/pmasstree/pmasstree.hpp"

namespace pmindex::masstree::pmasstree {

using common::load_acq;
using common::store_rel;

template <bool Bytes>
void tree<Bytes>::swing(uint64_t* word, uint64_t v) {
  store_rel(word, v);
  p_.flush(word, 8);
  p_.fence();
}

// Writers pass the gate (an exchange on their own line) and take nothing
// else that is shared but the leaf lock: a full leaf is split by the writer
// that found it, and the attempt starts over.
template <bool Bytes>
bool tree<Bytes>::write(const probe& k, uint64_t kv, op o, uint64_t& old) {
  common::writer_gate::writer in(gate_, p_.thread_slot());
  int r;
  while ((r = attempt(k, kv, o, old)) < 0) {
  }
  return r == 1;
}

template <bool Bytes>
int tree<Bytes>::attempt(const probe& k, uint64_t kv, op o, uint64_t& old) {
  uint64_t root = load_acq(&root_->root);
  for (size_t d = 0;; ++d) {
    const ikey ik = k.at(d);
    leaf* l = lock_leaf(root, ik);
    leaf_guard g{*this, l};
    perm_t pm{l->perm};
    unsigned ins;
    int pos = find(l, pm, ik, &ins);
    if (pos >= 0) {
      const unsigned s = pm[unsigned(pos)];
      uint64_t w = l->slot[s].value;
      if constexpr (Bytes) {
        if (class_of(ik) == k_more) {
          if (w & k_layer_tag) {  // down one layer (from its root as of this lock: stale later is fine)
            root = w;
            continue;
          }
          if (common::kv_key(p_, w) != k.s) {  // another key with this slice: absent
            if (o != k_insert) return 0;
            // Both records in a new layer, durable, then one swing of the
            // entry's word, under the leaf lock.
            uint64_t layer = make_layer(w, k, kv, d + 1);
            swing(&l->slot[s].value, layer | k_layer_tag);
            return 1;
          }
        }
      }
      if (o == k_insert) return 0;
      old = w;
      if (o == k_remove) {
        const perm_t left = pm.removed(unsigned(pos));
        swing(&l->perm, left.w);
        if (left.size() == 0 && low_of(l) != 0) {  // emptied, not the layer's first leaf
          g.release();  // split_mu_ is taken holding no leaf lock
          drop_leaf(k, d, l);
        }
        return 1;
      }
      // update: keys=u64 in place (8 bytes, failure-atomic); keys=bytes the
      // new block's flush is fenced before its offset is stored.
      if constexpr (Bytes) p_.fence();
      swing(&l->slot[s].value, kv);
      return 1;
    }
    if (o != k_insert) return 0;
    if (pm.size() >= leaf_cap_) {
      ikey sep;
      const uint64_t right = split_leaf(l, sep);
      g.release();  // the parent is updated holding no leaf lock
      insert_parent(k, d, sep, right);
      return -1;
    }
    insert_at(l, pm, ins, ik, kv);
    return 1;
  }
}

// @pre l locked, not full; the entry (and its kv block) not yet in it.
template <bool Bytes>
void tree<Bytes>::insert_at(leaf* l, perm_t pm, unsigned pos, ikey k, uint64_t w) {
  const unsigned s = pm.free_slot();
  l->slot[s].slice = slice_of(k);
  l->slot[s].value = w;
  if (!mut_.on(mutant::perm_before_flush)) {
    p_.flush(&l->slot[s], sizeof(slot_t));
    p_.fence();  // the slot (and a kv block) durable before the permutation names it
  }
  // The class byte shares the permutation's line and is stored first: a
  // line that holds the new permutation holds it.
  store_rel(&l->cls[s], uint8_t(class_of(k)));
  swing(&l->perm, pm.inserted(pos).w);
}

// @pre l locked (from before its entries are read until both its stores
// are durable: no writer changes what is copied, no reader sees l between
// the stores) and full. See the header for the order of the stores.
template <bool Bytes>
uint64_t tree<Bytes>::split_leaf(leaf* l, ikey& sep) {
  const perm_t pm{l->perm};
  const unsigned n = pm.size(), mid = n / 2;
  sep = slot_key(l, pm[mid]);
  const uint64_t roff = new_leaf(l->next, sep);  // a full pool throws here: nothing changed
  // The new leaf: the upper half, durable before the link names it.
  leaf* r = at(roff);
  for (unsigned i = mid; i < n; ++i) {
    r->slot[i - mid] = l->slot[pm[i]];
    r->cls[i - mid] = l->cls[pm[i]];
  }
  r->perm = perm_t::empty().w | (n - mid);
  if (!mut_.on(mutant::sibling_unflushed)) p_.flush(r, sizeof(leaf));
  p_.fence();
  swing(&l->next, roff);  // the commit: r in the chain, l's copies hidden
  // l keeps its lower half: the same order, count mid (the moved slots free).
  swing(&l->perm, (pm.w & ~uint64_t{15}) | mid);
  return roff;
}

// An emptied leaf leaves the structure in two steps, each one valid for a
// reader and after a crash (the header's "Emptied leaves"): its parent's
// child words that name it are swung to the leaf on its left (a descent
// then lands left of its range and moves right along the chain, the B-link
// rule), then its left neighbour's `next` skips it (the commit: the leaf is
// unreachable; after a crash between the two it is an empty leaf only the
// chain holds). It is marked dead under its lock, naming the leaf on its
// left, for a reader or writer that reached it through a parent read
// before the swing (or an old copy of the parent), and retired.
template <bool Bytes>
void tree<Bytes>::drop_leaf(const probe& k, size_t d, leaf* l) {
  std::lock_guard lk(split_mu_.m);
  const uint64_t root = (d ? layer_root(k, d) : load_acq(&root_->root)) & ~k_layer_tag;
  const uint64_t off = p_.off(l);
  lock(l);
  leaf_guard gl{*this, l};
  // Dropped by another remover, or written since it was emptied.
  if (is_dead(l) || perm_t{l->perm}.size() != 0) return;
  // The leaf-level node that names l, if one does (a leaf whose split has
  // not put its separator in yet is named by none: it stays).
  const ikey low = low_of(l);
  inner* n = nullptr;
  unsigned i = 0;
  for (uint64_t c = root; kind_of(at<void>(c)) == k_inner;) {
    n = at<inner>(c);
    const unsigned nk = unsigned(n->nkeys);
    i = 0;
    while (i < nk && sep_of(n, i) <= low) ++i;
    c = n->child[i];
  }
  // The first child of its parent has no left neighbour there to take its
  // range: it stays (reused by the keys of its range).
  if (!n || i == 0 || n->child[i] != off) return;
  const uint64_t left = n->child[i - 1];
  // The words that name l: one run from i (a leaf is named by one run, in
  // one node). Any other word naming it (a damaged pool) keeps it.
  unsigned last = i;
  while (last < n->nkeys && n->child[last + 1] == off) ++last;
  for (unsigned j = 0; j <= n->nkeys; ++j)
    if ((j < i || j > last) && n->child[j] == off) return;
  // First to last: a crash in between leaves `left`'s run longer and l
  // named by the rest of its own, from a separator above its low bound
  // (valid for B-link descents); l then stays, an empty leaf no descent by
  // its own low bound finds, so no later remove drops it while named.
  auto swing_run = [&] {
    for (unsigned j = i; j <= last; ++j) {
      store_rel(&n->child[j], left);
      p_.flush(&n->child[j], 8);
    }
    p_.fence();
  };
  if (!mut_.on(mutant::unlink_first)) swing_run();
  // Its left neighbour in the chain: the parent's child left of it, or a
  // leaf that split off it and is not in the parent yet.
  leaf* p = at(left);
  for (;;) {
    lock(p);
    const uint64_t nx = p->next;
    if (nx == off) break;
    unlock(p);
    if (!nx || low_of(at(nx)) > low) corrupt("a leaf chain passes a leaf its parent names");  // damage
    p = at(nx);
  }
  leaf_guard gp{*this, p};
  swing(&p->next, l->next);
  if (mut_.on(mutant::unlink_first)) swing_run();
  store_rel(&l->slot[0].value, p_.off(p));  // before the mark, which readers load first
  store_rel(&l->dead, dead_mark());
  gp.release();
  gl.release();
  p_.retire(off);
}

// Under split_mu_, which every change of an inner node or of a root word
// holds, the layer's inner nodes stand still: descend them by `sep` to the
// node that gets it. Leaves that split meanwhile may have added theirs
// (before or after this one, in any order): each leaf's separator is its
// own immutable low bound, so every order gives the same tree.
template <bool Bytes>
void tree<Bytes>::insert_parent(const probe& k, size_t d, ikey sep, uint64_t right) {
  std::lock_guard lk(split_mu_.m);
  const uint64_t root = d ? layer_root(k, d) : load_acq(&root_->root);
  path_t path;
  for (uint64_t off = root & ~k_layer_tag; kind_of(at<void>(off)) == k_inner;) {
    inner* n = at<inner>(off);
    unsigned nk = unsigned(n->nkeys), i = 0;
    while (i < nk && sep_of(n, i) <= sep) ++i;
    path.emplace_back(n, i);
    off = n->child[i];
  }
  // Every block, taken before the first store: one copy of each inner node
  // up to the first with room (two for each full one), a new root when
  // they are all full. A full pool fails the insert here; the new leaf
  // stays reachable through the chain only (check() counts it).
  unsigned need = 0;
  bool room = false;
  for (size_t i = path.size(); i-- > 0 && !room;) {
    room = distinct_children(path[i].first) + 1 <= inner_cap_;
    need += room ? 1 : 2;
  }
  if (!room) ++need;
  std::vector<uint64_t> blocks;
  try {
    blocks.reserve(need);
    for (unsigned i = 0; i < need; ++i) blocks.push_back(p_.alloc_or_throw(sizeof(inner)));
  } catch (...) {
    for (uint64_t b : blocks) p_.free(b);
    throw;
  }
  uint64_t* word = nullptr;  // null: the layer's root word
  const uint64_t top = rebuild_path(path, root & ~k_layer_tag, sep, right, blocks, word);
  if (word) {
    swing(word, top);
  } else if (!d) {
    swing(&root_->root, top);
  } else {
    // Layer d's root word is the value of k's entry in layer d - 1, in the
    // leaf that holds it now (a split of that leaf copies the entry): swung
    // under that leaf's lock, so no split copies the old value meanwhile.
    const ikey hk = k.at(d - 1);
    leaf* h = lock_leaf(layer_root(k, d - 1), hk);
    leaf_guard g{*this, h};
    const perm_t pm{h->perm};
    unsigned ins;
    const int pos = find(h, pm, hk, &ins);
    PMINDEX_ASSERT(pos >= 0 && h->slot[pm[unsigned(pos)]].value == root);
    swing(&h->slot[pm[unsigned(pos)]].value, top | k_layer_tag);
  }
  for (auto& step : path) p_.retire(p_.off(step.first));
}

// @pre split_mu_; `blocks` holds exactly the inner blocks needed. Copies
// (splitting full ones) the inner nodes of `path` up to the first with room
// for separator `sep` -> `right`, all flushed, one fence. Returns the
// topmost copy and sets `word` to the child word that is to name it (null:
// the layer's root word, `root`): ONE swing publishes them all. `path` is
// trimmed to the nodes the copies replace (the caller retires them).
template <bool Bytes>
uint64_t tree<Bytes>::rebuild_path(path_t& path, uint64_t root, ikey sep, uint64_t right,
                                   std::vector<uint64_t>& blocks, uint64_t*& word) {
  unsigned next_block = 0;
  auto fill = [&](const ikey* keys, const uint64_t* kids, unsigned nk) {
    uint64_t off = blocks[next_block++];
    inner* n = at<inner>(off);
    std::memset(static_cast<void*>(n), 0, sizeof(inner));
    n->kind = k_inner;
    n->nkeys = nk;
    for (unsigned i = 0; i < nk; ++i) {
      n->key[i] = slice_of(keys[i]);
      n->cls[i] = uint8_t(class_of(keys[i]));
    }
    std::memcpy(n->child, kids, 8 * (nk + 1));
    p_.flush(n, sizeof(inner));
    return off;
  };
  uint64_t replace = 0;  // the copy that takes the place of the child taken (0: none)
  for (size_t i = path.size(); i-- > 0;) {
    auto [n, ci] = path[i];
    // The node's entries, a run of children naming one leaf (dropped leaves)
    // as one child: a run's leaf holds the run's whole range.
    ikey keys[k_width + 1];
    uint64_t kids[k_width + 2];
    unsigned nk = 0;
    kids[0] = n->child[0];
    for (unsigned j = 1; j <= unsigned(n->nkeys); ++j) {
      if (n->child[j] == kids[nk]) continue;
      keys[nk++] = sep_of(n, j - 1);
      kids[nk] = n->child[j];
    }
    if (nk != n->nkeys) {  // only leaves repeat, and no copy replaces a leaf
      ci = 0;
      while (ci < nk && keys[ci] <= sep) ++ci;
    }
    // `sep` -> `right` after child ci.
    for (unsigned j = nk + 1; j > ci + 1; --j) kids[j] = kids[j - 1];
    for (unsigned j = nk; j > ci; --j) keys[j] = keys[j - 1];
    keys[ci] = sep;
    kids[ci + 1] = right;
    if (replace) kids[ci] = replace;
    if (nk + 2 <= inner_cap_) {  // room: one copy
      uint64_t copy = fill(keys, kids, nk + 1);
      p_.fence();
      word = i ? &path[i - 1].first->child[path[i - 1].second] : nullptr;
      path.erase(path.begin(), path.begin() + ptrdiff_t(i));
      return copy;
    }
    // Full: two copies; the middle separator goes up.
    const unsigned total = nk + 2, h = total / 2;  // children left of the split
    replace = fill(keys, kids, h - 1);
    right = fill(keys + h, kids + h, total - h - 1);
    sep = keys[h - 1];
  }
  // A new root above the old one (or its replacement).
  ikey keys[1] = {sep};
  uint64_t kids[2] = {replace ? replace : root, right};
  uint64_t top = fill(keys, kids, 1);
  p_.fence();
  word = nullptr;
  return top;
}

// A new layer at depth d holding the record `old_kv` (a suffix entry of the
// layer above) and the new record `kv` of key k, which share every slice
// above d: one leaf, or a chain of single-entry layers while they share
// slices. Flushed and fenced; the caller swings it in. Throws pool_full
// (nothing allocated stays).
template <bool Bytes>
uint64_t tree<Bytes>::make_layer(uint64_t old_kv, const probe& k, uint64_t kv, size_t d) {
  std::vector<uint64_t> made;
  try {
    const std::string_view ok = common::kv_key(p_, old_kv);
    uint64_t top = 0;
    slot_t* link = nullptr;  // the entry of the previous layer that names this one
    for (;; ++d) {
      const ikey a = ikey_at(ok, d), b = k.at(d);
      made.reserve(made.size() + 1);  // first: the push below cannot throw, the leaf cannot leak
      uint64_t off = new_leaf(0, make_ikey(0, 0));
      made.push_back(off);
      leaf* l = at(off);
      if (link)
        link->value = off | k_layer_tag;
      else
        top = off;
      if (a == b) {  // both go on (different keys, the same slice): one more layer
        l->slot[0] = {slice_of(a), 0};
        l->cls[0] = uint8_t(k_more);
        l->perm = perm_t::empty().w | 1;
        link = &l->slot[0];
        continue;
      }
      const bool old_first = a < b;
      l->slot[0] = {slice_of(old_first ? a : b), old_first ? old_kv : kv};
      l->cls[0] = uint8_t(class_of(old_first ? a : b));
      l->slot[1] = {slice_of(old_first ? b : a), old_first ? kv : old_kv};
      l->cls[1] = uint8_t(class_of(old_first ? b : a));
      l->perm = perm_t::empty().w | 2;
      break;
    }
    if (!mut_.on(mutant::layer_unflushed))
      for (uint64_t off : made) p_.flush(at(off), sizeof(leaf));
    p_.fence();  // the leaves and the new record's block durable before the swing names them
    return top;
  } catch (...) {
    for (uint64_t off : made) p_.free(off);
    throw;
  }
}

template class tree<false>;
template class tree<true>;

}  // namespace pmindex::masstree::pmasstree
