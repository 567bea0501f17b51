// P-Masstree writes (see pmasstree.hpp for the protocol): record operations
// under a leaf lock, leaf splits and their copy-on-write parents under the
// exclusive structure lock, and new layers.
#include <algorithm>
#include <cstddef>

#include "btree/pmasstree/pmasstree.hpp"

namespace pmindex::btree::pmasstree {

using common::load_acq;
using common::store_rel;

namespace {
struct rw_guard {
  pthread_rwlock_t* rw;
  ~rw_guard() { pthread_rwlock_unlock(rw); }
};
}  // namespace

template <bool Bytes>
void tree<Bytes>::swing(uint64_t* word, uint64_t v) {
  store_rel(word, v);
  p_.flush(word, 8);
  p_.fence();
}

// Writers hold the structure lock shared: no leaf splits under them, so the
// leaf a descent finds stays the key's leaf. A full leaf sends the writer
// to the exclusive lock, which splits it and retries there.
template <bool Bytes>
bool tree<Bytes>::write(const probe& k, uint64_t kv, op o, uint64_t& old) {
  int r;
  {
    pthread_rwlock_rdlock(&smo_);
    rw_guard g{&smo_};
    r = attempt(k, kv, o, old);
  }
  while (r < 0) {
    pthread_rwlock_wrlock(&smo_);
    rw_guard g{&smo_};
    split(k);
    r = attempt(k, kv, o, old);
  }
  return r == 1;
}

template <bool Bytes>
int tree<Bytes>::attempt(const probe& k, uint64_t kv, op o, uint64_t& old) {
  uint64_t* root_word = &root_->root;
  for (size_t d = 0;; ++d) {
    const ikey ik = k.at(d);
    uint64_t v;
    leaf* l = locate(load_acq(root_word), ik, v);
    lock(l);
    leaf_guard g{l};
    perm_t pm{l->perm};
    unsigned ins;
    int pos = find(l, pm, ik, &ins);
    if (pos >= 0) {
      const unsigned s = pm[unsigned(pos)];
      uint64_t w = l->slot[s].value;
      if constexpr (Bytes) {
        if (class_of(ik) == k_more) {
          if (w &
              k_layer_tag) {  // down one layer (a layer's root word changes only under the exclusive lock)
            root_word = &l->slot[s].value;
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
        swing(&l->perm, pm.removed(unsigned(pos)).w);
        return 1;
      }
      // update: keys=u64 in place (8 bytes, failure-atomic); keys=bytes the
      // new block's flush is fenced before its offset is stored.
      if constexpr (Bytes) p_.fence();
      swing(&l->slot[s].value, kv);
      return 1;
    }
    if (o != k_insert) return 0;
    if (pm.size() >= leaf_cap_) return -1;
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

// @pre the exclusive structure lock. Splits the full leaf where k goes (if
// it is still full): see the header for the order of the stores.
template <bool Bytes>
void tree<Bytes>::split(const probe& k) {
  path_t path;
  path.root_word = &root_->root;
  leaf* l;
  for (size_t d = 0;; ++d) {
    const ikey ik = k.at(d);
    path.steps.clear();
    uint64_t v;
    l = locate(load_acq(path.root_word), ik, v, &path);
    perm_t pm{l->perm};
    unsigned ins;
    int pos = find(l, pm, ik, &ins);
    if (Bytes && pos >= 0 && class_of(ik) == k_more && (l->slot[pm[unsigned(pos)]].value & k_layer_tag)) {
      path.root_word = &l->slot[pm[unsigned(pos)]].value;
      continue;
    }
    if (pos >= 0 || pm.size() < leaf_cap_) return;  // split by another writer meanwhile
    break;
  }

  // Every block the split needs, taken before the first store (a full pool
  // fails the insert and changes nothing): the new leaf, one copy of each
  // inner node up to the first with room (two for each full one), a new
  // root when they are all full.
  unsigned need = 0;
  bool room = false;
  for (size_t i = path.steps.size(); i-- > 0 && !room;) {
    room = path.steps[i].first->nkeys + 2 <= inner_cap_;
    need += room ? 1 : 2;
  }
  if (!room) ++need;
  std::vector<uint64_t> blocks;
  const perm_t pm{l->perm};
  const unsigned n = pm.size(), mid = n / 2;
  const ikey sep = slot_key(l, pm[mid]);
  uint64_t roff;
  try {
    roff = new_leaf(l->next, sep);
    blocks.reserve(need);
    for (unsigned i = 0; i < need; ++i) blocks.push_back(p_.alloc_or_throw(sizeof(inner)));
  } catch (...) {
    for (uint64_t b : blocks) p_.free(b);
    throw;
  }
  if (blocks.size() < need) {
    p_.free(roff);
    throw error(errc::pool_full, "pmasstree: pool full");
  }

  // The new leaf: the upper half, durable before the link names it.
  leaf* r = at(roff);
  for (unsigned i = mid; i < n; ++i) {
    r->slot[i - mid] = l->slot[pm[i]];
    r->cls[i - mid] = l->cls[pm[i]];
  }
  r->perm = perm_t::empty().w | (n - mid);
  if (!mut_.on(mutant::sibling_unflushed)) p_.flush(r, sizeof(leaf));
  p_.fence();
  lock(l);                // readers of l wait until both its stores are durable
  swing(&l->next, roff);  // the commit: r in the chain, l's copies hidden
  // l keeps its lower half: the same order, count mid (the moved slots free).
  swing(&l->perm, (pm.w & ~uint64_t{15}) | mid);
  unlock(l);
  insert_parent(path, sep, roff, blocks);
}

// @pre the exclusive structure lock; `blocks` holds exactly the inner
// blocks needed. Adds separator `sep` -> `right` above the leaf the path
// ends at: copies (splitting full ones) up to the first node with room, all
// flushed, one fence, then ONE swing of the word that names the topmost
// copy (a child word of the unchanged node above, or the layer's root word).
template <bool Bytes>
void tree<Bytes>::insert_parent(path_t& path, ikey sep, uint64_t right, std::vector<uint64_t>& blocks) {
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
  std::vector<uint64_t> retired;
  for (size_t i = path.steps.size(); i-- > 0;) {
    auto [n, ci] = path.steps[i];
    const unsigned nk = unsigned(n->nkeys);
    ikey keys[k_width + 1];
    uint64_t kids[k_width + 2];
    unsigned o = 0;
    for (unsigned j = 0; j < nk; ++j) {
      if (j == ci) keys[o++] = sep;
      keys[o++] = sep_of(n, j);
    }
    if (ci == nk) keys[o++] = sep;
    o = 0;
    for (unsigned j = 0; j <= nk; ++j) {
      kids[o++] = (j == ci && replace) ? replace : n->child[j];
      if (j == ci) kids[o++] = right;
    }
    retired.push_back(p_.off(n));
    if (nk + 2 <= inner_cap_) {  // room: one copy
      uint64_t copy = fill(keys, kids, nk + 1);
      p_.fence();
      uint64_t* word = i ? &path.steps[i - 1].first->child[path.steps[i - 1].second] : path.root_word;
      swing(word, copy | (i == 0 && path.root_word != &root_->root ? k_layer_tag : 0));
      for (uint64_t b : retired) p_.retire(b);
      return;
    }
    // Full: two copies; the middle separator goes up.
    const unsigned total = nk + 2, h = total / 2;  // children left of the split
    replace = fill(keys, kids, h - 1);
    right = fill(keys + h, kids + h, total - h - 1);
    sep = keys[h - 1];
  }
  // A new root above the old one (or its replacement).
  ikey keys[1] = {sep};
  uint64_t kids[2] = {replace ? replace : (load_acq(path.root_word) & ~k_layer_tag), right};
  uint64_t root = fill(keys, kids, 1);
  p_.fence();
  swing(path.root_word, root | (path.root_word != &root_->root ? k_layer_tag : 0));
  for (uint64_t b : retired) p_.retire(b);
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

}  // namespace pmindex::btree::pmasstree
