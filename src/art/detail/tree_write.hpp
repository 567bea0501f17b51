// Writers of the WORT-family core (included by tree.hpp). The exclusive lock
// is held throughout. The protocols, each ending in ONE atomic commit store:
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
uint64_t art_index<P>::new_node(pending_blocks& pb, kind k, uint64_t hdr_word) {
  uint64_t w = tag(pb.alloc(node_size(k)), k);
  visit(w, [&](auto ops, auto* n) { ops.init(n, hdr_word); });
  return w;
}

// A fresh (unpublished, unflushed) node of kind `to` with w's children,
// minus `skip_digit` and plus (add_digit -> add_child) when those are >= 0.
template <class P>
uint64_t art_index<P>::copy_node(pending_blocks& pb, uint64_t w, kind to, uint64_t hdr_word, int add_digit,
                                 uint64_t add_child, int skip_digit) {
  uint64_t c = new_node(pb, to, hdr_word);
  visit(c, [&](auto cops, auto* cn) {
    visit(w, [&](auto ops, auto* n) {
      ops.for_each(n, [&](unsigned d, uint64_t* s) {
        if (int(d) != skip_digit) cops.fresh_add(cn, d, *s);
        return false;
      });
    });
    if (add_digit >= 0) cops.fresh_add(cn, unsigned(add_digit), add_child);
  });
  return c;
}

template <class P>
bool art_index<P>::insert(uint64_t key, uint64_t value) {
  std::unique_lock lk(mu_);
  uint64_t* slot = &root_->child;
  unsigned pos = 0;
  uint64_t w;
  // Descend to where the key belongs; nothing is written on the way.
  enum { empty, at_leaf, mismatch, no_child } what;
  unsigned diff = 0, d = 0;
  uint64_t ref = 0;
  for (;;) {
    w = *slot;
    if (!w) {
      what = empty;
      break;
    }
    if (is_leaf(w)) {
      if (leaf_at(w)->key == key) return false;
      what = at_leaf;
      break;
    }
    header h = hdr(w);
    PMINDEX_ASSERT(h.depth == pos);
    unsigned b = pos + h.plen;
    if (h.plen) {
      ref = ref_key(w, h, key);
      diff = dg::first_diff(key, ref);
      if (diff < b) {
        what = mismatch;
        break;
      }
    }
    d = dg::at(key, b);
    uint64_t* s = find(w, d);
    if (!s) {
      what = no_child;
      break;
    }
    slot = s;
    pos = b + 1;
  }

  pending_blocks pb(p_);  // frees what it allocated unless committed
  uint64_t loff = pb.alloc(k_leaf_size);
  leaf* l = p_.ptr<leaf>(loff);
  l->key = key;
  l->value = value;
  uint64_t lw = tag(loff, k_leaf);
  switch (what) {
    case empty:
      p_.persist(l, k_leaf_size);
      p_.store_persist(slot, lw);  // commit
      break;
    case at_leaf: {
      uint64_t other = leaf_at(w)->key;
      unsigned b = dg::first_diff(key, other);
      PMINDEX_ASSERT(b >= pos && b < dg::k_levels);
      uint64_t nw = new_node(pb, P::k_adaptive ? k_n4 : k_direct, dg::make_header(pos, b - pos, key));
      visit(nw, [&](auto ops, auto* n) {
        ops.fresh_add(n, dg::at(other, b), w);
        ops.fresh_add(n, dg::at(key, b), lw);
      });
      p_.flush(l, k_leaf_size);  // the new subtree durable before it is published
      flush_node(nw);
      p_.fence();
      p_.store_persist(slot, nw);  // commit
      break;
    }
    case mismatch:
      split_prefix(pb, slot, w, pos, diff, ref, key, lw);
      break;
    case no_child:
      add_child(pb, slot, w, d, lw);
      break;
  }
  pb.commit();
  if (count_ >= 0) ++count_;
  return true;
}

template <class P>
void art_index<P>::add_child(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned d, uint64_t lw) {
  kind k = kind_of(w);
  bool full = visit(w, [&](auto ops, auto* n) { return ops.full(n); });
  bool cow = P::k_cow_small && (k == k_n4 || k == k_n16);
  if (!full && !cow) {
#ifdef PMINDEX_MUTANTS
    // The deliberate bugs: the commit is durable before the child word.
    if (mutant_.on(mutant::node4_child_after_meta) && k == k_n4) {
      auto* n = p_.ptr<node4>(off_of(w));
      p_.persist(leaf_at(lw), k_leaf_size);
      unsigned s;
      p_.store_persist(&n->meta, node4_ops::meta_with(n->meta, d, &s));
      p_.store_persist(&n->child[s], lw);
      return;
    }
    if (mutant_.on(mutant::node16_bitmap_before_child) && k == k_n16) {
      auto* n = p_.ptr<node16>(off_of(w));
      p_.persist(leaf_at(lw), k_leaf_size);
      uint64_t b = n->bitmap;
      unsigned s = unsigned(std::countr_zero(~b));
      __atomic_store_n(&n->key[s], uint8_t(d), __ATOMIC_RELEASE);
      p_.store_persist(&n->bitmap, b | uint64_t{1} << s);
      p_.store_persist(&n->child[s], lw);
      return;
    }
    if (mutant_.on(mutant::node48_index_before_child) && k == k_n48) {
      auto* n = p_.ptr<node48>(off_of(w));
      p_.persist(leaf_at(lw), k_leaf_size);
      unsigned s = node48_ops::free_slot(n);
      __atomic_store_n(&n->index[d], uint8_t(s + 1), __ATOMIC_RELEASE);
      p_.persist(&n->index[d], 1);
      p_.store_persist(&n->child[s], lw);
      return;
    }
#endif
    visit(w, [&](auto ops, auto* n) { ops.add(p_, n, d, lw, leaf_at(lw), k_leaf_size); });
    return;
  }
  kind to = !full ? k : k == k_n4 ? k_n16 : k == k_n16 ? k_n48 : k_direct;
  uint64_t c = copy_node(pb, w, to, *header_word(w), int(d), lw, -1);
  p_.flush(leaf_at(lw), k_leaf_size);
  flush_node(c);
  p_.fence();                 // the copy and the leaf durable before the swing
  p_.store_persist(slot, c);  // commit
  p_.retire(off_of(w));
}

template <class P>
void art_index<P>::split_prefix(pending_blocks& pb, uint64_t* slot, uint64_t w, unsigned pos, unsigned diff,
                                uint64_t ref, uint64_t key, uint64_t lw) {
  header h = hdr(w);
  unsigned b = pos + h.plen;
  uint64_t lower_hdr = dg::make_header(diff + 1, b - diff - 1, ref);
  uint64_t m = new_node(pb, P::k_adaptive ? k_n4 : k_direct, dg::make_header(pos, diff - pos, key));
  uint64_t child = w;
  if constexpr (P::k_cow_split) {
    child = copy_node(pb, w, kind_of(w), lower_hdr, -1, 0, -1);
    flush_node(child);
  }
  visit(m, [&](auto ops, auto* n) {
    ops.fresh_add(n, dg::at(ref, diff), child);
    ops.fresh_add(n, dg::at(key, diff), lw);
  });
  p_.flush(leaf_at(lw), k_leaf_size);
  flush_node(m);
  p_.fence();  // the new parent (and copy) durable before anything points to it
  if constexpr (!P::k_cow_split) {
    // Step 2: one atomic header store. From here until the swing is durable
    // a crash leaves w under `slot` with depth diff+1 != pos (repaired by
    // recovery).
    p_.store_persist(header_word(w), lower_hdr);
#ifdef PMINDEX_MUTANTS
    if (g_stop_split_after_header.load() > 0) {
      g_stop_split_after_header.fetch_sub(1);
      pb.commit();  // the crash leaves them allocated; tracing reclaims them
      return;
    }
#endif
  }
  p_.store_persist(slot, m);  // commit
  if constexpr (P::k_cow_split) p_.retire(off_of(w));
}

template <class P>
bool art_index<P>::update(uint64_t key, uint64_t value) {
  std::unique_lock lk(mu_);
  leaf* l = find_leaf(key);
  if (!l) return false;
  p_.store_persist(&l->value, value);  // commit: one 8-byte store
  return true;
}

template <class P>
bool art_index<P>::remove(uint64_t key) {
  std::unique_lock lk(mu_);
  struct step {
    uint64_t* slot;  // where the node hangs
    uint64_t w;      // the node
    unsigned d;      // the digit of the key's path in it
  };
  step path[dg::k_levels];
  int depth = 0;
  uint64_t* slot = &root_->child;
  unsigned pos = 0;
  for (;;) {
    uint64_t w = *slot;
    if (!w) return false;
    if (is_leaf(w)) {
      if (leaf_at(w)->key != key) return false;
      break;
    }
    header h = hdr(w);
    if (!dg::stored_prefix_matches(h, key)) return false;
    pos += h.plen;
    unsigned d = dg::at(key, pos);
    uint64_t* s = find(w, d);
    if (!s) return false;
    path[depth++] = {slot, w, d};
    slot = s;
    ++pos;
  }
  uint64_t lw = *slot;
  // The lowest node that keeps a child after the removal; the nodes below it
  // on the path hold nothing but the key and are unlinked with it.
  int i = depth - 1;
  while (i >= 0 && count(path[i].w) == 1) --i;
  int first_dead = i + 1;
  if (i < 0) {
    p_.store_persist(&root_->child, 0);  // commit: the tree is empty
  } else {
    step& st = path[i];
    uint64_t other = 0;
    if (count(st.w) == 2)
      visit(st.w, [&](auto ops, auto* n) {
        return ops.for_each(n, [&](unsigned d, uint64_t* s) { return d != st.d ? (other = *s, true) : false; });
      });
    if (other && is_leaf(other)) {
      p_.store_persist(st.slot, other);  // commit: the node is replaced by its last leaf
      first_dead = i;
    } else {
      remove_entry(st.slot, st.w, st.d);
    }
  }
  for (int j = first_dead; j < depth; ++j) p_.retire(off_of(path[j].w));
  p_.retire(off_of(lw));
  if (count_ >= 0) --count_;
  return true;
}

template <class P>
void art_index<P>::remove_entry(uint64_t* slot, uint64_t w, unsigned d) {
  kind k = kind_of(w);
  if (P::k_cow_small && (k == k_n4 || k == k_n16)) {
    // Copy-on-write. If the pool is full the in-place commit below is just
    // as failure-atomic, so a remove never fails for lack of space.
    uint64_t c = 0;
    try {
      pending_blocks pb(p_);
      c = copy_node(pb, w, k, *header_word(w), -1, 0, int(d));
      pb.commit();
    } catch (const error& e) {
      if (e.code() != errc::pool_full) throw;
    }
    if (c) {
      flush_node(c);
      p_.fence();                 // the copy durable before the swing
      p_.store_persist(slot, c);  // commit
      p_.retire(off_of(w));
      return;
    }
  }
  visit(w, [&](auto ops, auto* n) { ops.remove(p_, n, d); });
}

}  // namespace pmindex::art::detail
