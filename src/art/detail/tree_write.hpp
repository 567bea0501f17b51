// Writers of the WORT-family core (included by tree.hpp). Each descends
// optimistically, then locks what it changes (node_locks.hpp): an in-place
// insert its node; a growth, copy or leaf-to-node change also the node
// whose word it swings (or the root lock); an update the node whose word
// names the leaf; a remove every node it unlinks and the node it commits in
// (and the word above that one when it swings it). A lock that no longer
// shows the version the descent read restarts the operation. The
// protocols, each ending in ONE atomic commit store
// (the node-level ones are node_kit's, nodes.hpp, shared with the byte
// layout); the new leaf is flushed when written, each protocol fences
// before its commit:
//
// insert into an empty slot of a node (in place; WORT, WOART Node48/256,
//   WOART Node4/16): leaf durable, then the node's commit word (node*.hpp).
// insert into a leaf slot: new node {leaf, old leaf} built and flushed with
//   the new leaf, fence, then the slot word (the paper's "build the subtree,
//   flush it, publish it with one pointer store").
// grow a full node (all), or change a Node4/16 (ART+CoW): copy with the
//   change, flush, fence, swing the parent's slot word, retire the old node.
// prefix split at digit `diff` of node N found at position `pos`:
//   WORT/WOART: new parent M {N, leaf} flushed, fence; N's header rewritten
//   (depth diff+1, shorter prefix) with one store + persist; then the
//   parent's slot swung to M + persist. A crash between the two leaves N
//   reachable at `pos` with a header saying depth diff+1: recovery detects it
//   (depth != position) and rewrites the header from the leaves below (the
//   branch digit depth + plen is the same in both headers), see
//   tree_verify.hpp. ART+CoW: N is copied with the new header instead, so no
//   such state exists.
// update: leaf value, one 8-byte store + persist.
// remove: the leaf's entry in the lowest node that keeps a child is removed
//   with one commit (in place, or a copy for ART+CoW Node4/16); when that
//   node would keep a single leaf, the parent's slot is swung to that leaf
//   instead (one store); every block unlinked is retired after the commit is
//   durable. Nodes never shrink to a smaller kind (as in the paper's code);
//   nodes emptied or left with one leaf are unlinked.
#pragma once

namespace pmindex::art::detail {

template <class P>
void art_index<P>::confirm_leaf_below(uint64_t key) {
  const uint32_t slot = p_.thread_slot();
  gate_.exit(slot);
  {
    common::writer_gate::closed no_writers(gate_);
    uint64_t w = __atomic_load_n(&root_->child, __ATOMIC_ACQUIRE);
    for (unsigned steps = 0; w && !is_leaf(w) && steps < dg::k_levels; ++steps) {
      if (!kit::node_ok(w)) throw error(errc::corrupt, std::string(P::k_name) + ": a bad node word (damaged pool)");
      header h = hdr(w);
      if (h.plen > dg::k_stored && !kit::checked_min_leaf_word(w, dg::k_levels + 1))
        throw error(errc::corrupt, std::string(P::k_name) + ": a node with no leaf below it (damaged pool)");
      const unsigned b = h.depth + h.plen;
      uint64_t* s = b < dg::k_levels ? find(w, dg::at(key, b)) : nullptr;
      w = s ? __atomic_load_n(s, __ATOMIC_ACQUIRE) : 0;
    }
  }
  gate_.enter(slot);
}

// [[gnu::flatten]] (insert, remove): everything they call is inlined, as it
// was before the node-level commits moved to nodes.hpp; left to itself GCC
// outlined pool::fence/flush/store_persist there (+2% instructions per WORT
// insert, callgrind).
template <class P>
[[gnu::flatten]] bool art_index<P>::insert(uint64_t key, uint64_t value) {
  writer_scope ws(p_, gate_);
  pending_blocks pb(p_);  // frees what it allocated unless committed
  uint64_t lw = 0;
  for (;;) {
    // Descend to where the key belongs; nothing is written on the way.
    seen o = locks_.see_root(), n{};  // o guards *slot; n guards node w
    uint64_t* slot = &root_->child;
    unsigned pos = 0;
    uint64_t w;
    enum { empty, at_leaf, mismatch, no_child, restart } what;
    unsigned diff = 0, d = 0;
    uint64_t ref = 0;
    bool full = false;
    for (;;) {
      w = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
      if (!w) {
        what = empty;
        break;
      }
      if (is_leaf(w)) {
        what = at_leaf;
        break;
      }
      n = locks_.see(w);
      header h = hdr(w);
      if (!o.still() || (h.depth != pos && !n.still_or_damaged(P::k_name))) {  // (a split under way)
        what = restart;
        break;
      }
      unsigned b = pos + h.plen;
      if (h.plen) {
        if (!ref_key(w, h, key, &ref)) {
          confirm_leaf_below(key);
          what = restart;
          break;
        }
        diff = dg::first_diff(key, ref);
        if (diff < b) {
          what = mismatch;
          break;
        }
      }
      d = dg::at(key, b);
      uint64_t* s = find(w, d);
      if (!s) {
        full = visit(w, [&](auto ops, auto* nd) { return ops.full(nd); });
        what = no_child;
        break;
      }
      slot = s;
      o = n;
      pos = b + 1;
    }
    if (what == restart) continue;
    if (what == at_leaf && leaf_at(w)->key == key) {
      if (o.still()) return false;
      continue;
    }
    if (!lw) {  // once, before any lock
      uint64_t loff = pb.alloc(k_leaf_size);
      leaf* l = p_.template ptr<leaf>(loff);
      l->key = key;
      l->value = value;
      p_.flush(l, k_leaf_size);  // every protocol below fences before its commit
      lw = tag(loff, k_leaf);
    }
    before_lock();  // (test builds: the race hook)
    lock_set held;
    kind k = kind_of(w);
    bool in_place = what == no_child && !full && !(P::k_cow_small && (k == k_n4 || k == k_n16));
    bool ok = what == empty || what == at_leaf ? held.upgrade(o)
                                               : (in_place || held.upgrade(o)) && held.upgrade(n);
    if (!ok) continue;
    switch (what) {
      case empty:
        kit::publish_leaf(slot, lw);
        break;
      case at_leaf: {
        uint64_t other = leaf_at(w)->key;
        unsigned b = dg::first_diff(key, other);
        PMINDEX_ASSERT(b >= pos && b < dg::k_levels);
        kit::publish_pair(pb, slot, dg::make_header(pos, b - pos, key), dg::at(other, b), w, dg::at(key, b),
                          lw);
        break;
      }
      case mismatch:
        split_prefix(pb, slot, w, pos, diff, ref, key, lw);
        break;
      default:
        add_child(pb, slot, w, d, lw);
    }
    break;
  }
  pb.commit();
  count_.add(ws.slot, 1);
  return true;
}

template <class P>
void art_index<P>::add_child(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned d, uint64_t lw) {
#ifdef PMINDEX_MUTANTS
  // The deliberate bugs (in-place inserts only): the commit is durable
  // before the child word.
  kind k = kind_of(w);
  if (mutant_.any() && !visit(w, [&](auto ops, auto* n) { return ops.full(n); }) &&
      !(P::k_cow_small && (k == k_n4 || k == k_n16))) {
    if (mutant_.on(mutant::node4_child_after_meta) && k == k_n4) {
      auto* n = p_.template ptr<node4>(off_of(w));
      p_.fence();  // the leaf (flushed by insert) durable
      unsigned s;
      p_.store_persist(&n->meta, node4_ops::meta_with(n->meta, d, &s));
      p_.store_persist(&n->child[s], lw);
      return;
    }
    if (mutant_.on(mutant::node16_bitmap_before_child) && k == k_n16) {
      auto* n = p_.template ptr<node16>(off_of(w));
      p_.fence();  // the leaf (flushed by insert) durable
      uint64_t b = n->bitmap;
      unsigned s = unsigned(std::countr_zero(~b)) & 15;  // (never full here; & 15 tells the compiler)
      __atomic_store_n(&n->key[s], uint8_t(d), __ATOMIC_RELEASE);
      p_.store_persist(&n->bitmap, b | uint64_t{1} << s);
      p_.store_persist(&n->child[s], lw);
      return;
    }
    if (mutant_.on(mutant::node48_index_before_child) && k == k_n48) {
      auto* n = p_.template ptr<node48>(off_of(w));
      p_.fence();  // the leaf (flushed by insert) durable
      unsigned s = node48_ops::free_slot(n);
      __atomic_store_n(&n->index[d], uint8_t(s + 1), __ATOMIC_RELEASE);
      p_.persist(&n->index[d], 1);
      p_.store_persist(&n->child[s], lw);
      return;
    }
  }
#endif
  kit::add_child(pb, slot, w, d, lw);
}

template <class P>
void art_index<P>::split_prefix(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned pos, unsigned diff,
                                uint64_t ref, uint64_t key, uint64_t lw) {
  header h = hdr(w);
  unsigned b = pos + h.plen;
  kit::split(pb, slot, w, dg::make_header(pos, diff - pos, key), dg::make_header(diff + 1, b - diff - 1, ref),
             dg::at(ref, diff), dg::at(key, diff), lw);
}

template <class P>
bool art_index<P>::update(uint64_t key, uint64_t value) {
  writer_scope ws(p_, gate_);
  for (;;) {
    found f;
    settled r = settle(descend(key, f), f);
    if (r == settled::absent) return false;
    if (r == settled::restart) continue;
    before_lock();  // (test builds: the race hook)
    lock_set held;
    if (!held.upgrade(f.owner)) continue;
    p_.store_persist(&leaf_at(f.lw)->value, value);  // commit: one 8-byte store
    return true;
  }
}

template <class P>
[[gnu::flatten]] bool art_index<P>::remove(uint64_t key) {
  writer_scope ws(p_, gate_);
  path_step path[dg::k_levels];
  seen owners[dg::k_levels + 1];
  for (;;) {
    found f;
    int depth = 0;
    settled r = settle(descend(key, f, path, owners, &depth), f);
    if (r == settled::absent) return false;
    if (r == settled::restart) continue;
    bool swings;
    int top = kit::unlink_top(path, depth, &swings);
    // owners[j + 1] guards path[j].w: lock the nodes from path[top] down
    // (top = -1: the root word too), and the word above path[top] when it
    // is swung.
    before_lock();  // (test builds: the race hook)
    lock_set held;
    bool ok = true;
    for (int j = swings && top >= 0 ? top : top + 1; ok && j <= depth; ++j) ok = held.upgrade(owners[j]);
    if (!ok) continue;
    kit::unlink(&root_->child, path, depth, top, f.lw);
    break;
  }
  count_.add(ws.slot, -1);
  return true;
}

}  // namespace pmindex::art::detail
