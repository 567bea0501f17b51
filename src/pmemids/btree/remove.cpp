// pmemids `btree`: remove, the B-tree delete of CLRS (ch. 18): one pass
// down from the commit node; before the descent enters a child of t - 1
// records, the child takes a record from a sibling through the parent
// (a rotation) or merges with a sibling and the parent's separator; a key
// found in an internal node is replaced by its neighbour (the largest of
// the left subtree, or the smallest of the right one) when that subtree
// can spare a record, else its two children merge around it. Every node
// the pass writes goes through an `edit`:
//   persist (and dram, volatile): a node is written only as a fresh copy;
//     the copies form a path from the commit node down (plus the siblings
//     of rotations), flushed, fenced, then linked by one 8-byte store
//     into the commit node's slot (a parent's child word or the root
//     word). The replaced and merged-away nodes are freed after it.
//   tx: in place; each node is saved in the undo log (its used bytes,
//     once) before its first store; merged-away nodes are freed at commit.
// The commit node is the highest node the remove changes: the node holding
// the key, or the parent of the first child on the way that holds t - 1
// records (every node above it stays as it is).
#include <cstring>
#include <vector>

#include "pmemids/btree/btree.hpp"

namespace pmindex::pmemids::btree {

struct tree::edit {
  tree& t;
  pm::transaction* tx;          // tx mode; null: copy-on-write
  std::vector<uint64_t> fresh;  // copy-on-write: this remove's copies
  std::vector<uint64_t> old;    // copy-on-write: freed after the commit

  bool is_fresh(uint64_t off) const {
    for (uint64_t f : fresh)
      if (f == off) return true;
    return false;
  }
  // Copy-on-write: a copy of the node at off. Never fails for lack of space
  // while the pool's remove reserve lasts (k_remove_reserve).
  uint64_t dup(uint64_t off) {
    for (auto* v : {&fresh, &old})  // the lists grow first: no throw once o is taken
      if (v->size() == v->capacity()) v->reserve(2 * v->size() + 16);
    uint64_t o;
    while (!(o = t.p_.alloc_for_remove(t.node_bytes_)))
      if (!t.p_.wait_for_reserve()) {
        discard();
        throw error(errc::pool_full, "pool " + t.p_.path() + " is full: btree remove found no block");
      }
    node* x = t.node_at(off);
    std::memcpy(t.node_at(o), x, sizeof(node) + x->n * t.rec_);
    fresh.push_back(o);
    old.push_back(off);
    return o;
  }
  void discard() {
    for (uint64_t f : fresh) t.p_.free(f);
    fresh.clear();
  }
  // Child i of x (x writable), to be written below.
  node* child(node* x, uint32_t i) {
    if (!tx && !is_fresh(x->child[i])) x->child[i] = dup(x->child[i]);
    return t.node_at(x->child[i]);
  }
  // Before the first store into x's header, children and records [0, recs).
  void save(node* x, uint32_t recs) {
    if (tx) tx->snapshot(x, sizeof(node) + recs * t.rec_);
  }
  void save_head(node* x) {
    if (tx) tx->snapshot(x, 8);
  }
  // x, no longer linked, is freed once the remove is durable.
  void drop(uint64_t off) {
    if (tx) return tx->free(off);
    old.push_back(off);
  }
};

// Precondition: x is writable, holds >= t records or is the commit node,
// and k is in its subtree.
void tree::erase(edit& ed, node* x, key k) {
  for (;;) {
    uint32_t i = position(x, k);
    if (i < x->n && key_at(x, i) == k) {
      if (x->leaf) {
        ed.save(x, x->n);
        std::memmove(rec_at(x, i), rec_at(x, i + 1), (x->n - i - 1) * rec_);
        x->n -= 1;
        return;
      }
      const bool left = node_at(x->child[i])->n >= k_t;
      if (left || node_at(x->child[i + 1])->n >= k_t) {
        // The neighbour record replaces k; then it is removed below.
        node* w = node_at(x->child[left ? i : i + 1]);
        while (!w->leaf) w = node_at(w->child[left ? w->n : 0]);
        const uint32_t j = left ? w->n - 1 : 0;
        ed.save(x, x->n);
        std::memcpy(rec_at(x, i), rec_at(w, j), rec_);
        k = key_at(x, i);
        x = ed.child(x, left ? i : i + 1);
        continue;
      }
      x = merge(ed, x, i);  // k is now the median of the merged child
      continue;
    }
    PMINDEX_ASSERT(!x->leaf);
    if (node_at(x->child[i])->n < k_t) i = fill(ed, x, i);
    x = ed.child(x, i);
  }
}

// Child i of x has t - 1 records: gives it one from a sibling, else merges
// it with one. Returns the index of the child that now covers its keys.
uint32_t tree::fill(edit& ed, node* x, uint32_t i) {
  if (i > 0 && node_at(x->child[i - 1])->n >= k_t) {  // rotate right
    node* s = ed.child(x, i - 1);
    node* c = ed.child(x, i);
    ed.save(c, c->n + 1);
    ed.save_head(s);
    ed.save(x, x->n);
    std::memmove(rec_at(c, 1), rec_at(c, 0), c->n * rec_);
    std::memcpy(rec_at(c, 0), rec_at(x, i - 1), rec_);
    std::memcpy(rec_at(x, i - 1), rec_at(s, s->n - 1), rec_);
    if (!c->leaf) {
      std::memmove(&c->child[1], &c->child[0], (c->n + 1) * 8);
      c->child[0] = s->child[s->n];
    }
    c->n += 1;
    s->n -= 1;
    return i;
  }
  if (i < x->n && node_at(x->child[i + 1])->n >= k_t) {  // rotate left
    node* c = ed.child(x, i);
    node* s = ed.child(x, i + 1);
    ed.save(c, c->n + 1);
    ed.save(s, s->n);
    ed.save(x, x->n);
    std::memcpy(rec_at(c, c->n), rec_at(x, i), rec_);
    std::memcpy(rec_at(x, i), rec_at(s, 0), rec_);
    std::memmove(rec_at(s, 0), rec_at(s, 1), (s->n - 1) * rec_);
    if (!c->leaf) {
      c->child[c->n + 1] = s->child[0];
      std::memmove(&s->child[0], &s->child[1], s->n * 8);
    }
    c->n += 1;
    s->n -= 1;
    return i;
  }
  if (i == x->n) --i;  // the last child merges into its left sibling
  merge(ed, x, i);
  return i;
}

// Children i and i + 1 of x (t - 1 records each) and the record between
// them become child i; x loses that record. Returns child i.
node* tree::merge(edit& ed, node* x, uint32_t i) {
  const uint64_t zo = x->child[i + 1];
  node* y = ed.child(x, i);
  node* z = node_at(zo);
  if (!mut_.on(mutant::tx_unlogged_merge)) ed.save(y, k_max);
  ed.save(x, x->n);
  std::memcpy(rec_at(y, y->n), rec_at(x, i), rec_);
  std::memcpy(rec_at(y, y->n + 1), rec_at(z, 0), z->n * rec_);
  if (!y->leaf) std::memcpy(&y->child[y->n + 1], z->child, (z->n + 1) * 8);
  y->n += 1 + z->n;
  std::memmove(rec_at(x, i), rec_at(x, i + 1), (x->n - i - 1) * rec_);
  std::memmove(&x->child[i + 1], &x->child[i + 2], (x->n - i - 1) * 8);
  x->n -= 1;
  ed.drop(zo);
  return y;
}

bool tree::remove(key k) {
  place pl = locate(k);
  if (!pl.x || !meta_live(meta_at(pl.x, pl.i))) return false;
  // btree-ref: k's value block, freed with the record (a neighbour record
  // that moves up into k's place keeps its own).
  const uint64_t value = by_ref_ ? ref_at(pl.x, pl.i) : 0;
  // The commit node (see above). k is present, so the walk stops at its
  // node at the latest.
  uint64_t* slot = &root_->tree;
  for (;;) {
    node* x = node_at(*slot);
    const uint32_t i = position(x, k);
    if ((i < x->n && key_at(x, i) == k) || node_at(x->child[i])->n < k_t) break;
    slot = &x->child[i];
  }
  if (tx()) {
    pm::transaction tx(p_);
    edit ed{*this, &tx, {}, {}};
    node* top = node_at(*slot);
    erase(ed, top, k);
    if (!top->leaf && top->n == 0) {  // the root's last record went into a merge
      tx.set(slot, top->child[0]);
      tx.free(p_.off(top));
    }
    if (value) tx.free(value);
    tx.commit();
    return true;
  }
  edit ed{*this, nullptr, {}, {}};
  // Nothing is linked before publish: a throw (std::bad_alloc, pool_full)
  // frees this remove's copies and leaves the tree as it was.
  uint64_t top_off;
  node* top;
  try {
    top_off = ed.dup(*slot);
    top = node_at(top_off);
    erase(ed, top, k);
  } catch (...) {
    ed.discard();
    throw;
  }
  uint64_t to = top_off;
  if (!top->leaf && top->n == 0) {  // the root empties: its one child is the root
    to = top->child[0];
    ed.fresh.erase(ed.fresh.begin());
    p_.free(top_off);
  }
  publish(slot, to, ed.fresh.data(), ed.fresh.size());
  for (uint64_t o : ed.old) p_.free(o);
  if (value) p_.free(value);
  return true;
}

}  // namespace pmindex::pmemids::btree
