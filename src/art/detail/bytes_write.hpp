// Writers of the byte-key WORT-family tree (included by bytes_tree.hpp).
// They descend optimistically and lock what they change as the u64 writers
// do (tree_write.hpp; an update or upsert locks the node whose word names
// the leaf); every change is one of the node-level commits of nodes.hpp
// (protocols in tree_write.hpp), plus:
//
// insert of a key that ends at a node's branch position: the leaf is
//   flushed, fence, then the node's end-of-key word (one 8-byte store).
// insert of a key that ends inside a node's prefix: a prefix split whose new
//   parent holds the new leaf as its end-of-key entry.
// update / upsert of a present key: out of place. A new kv block with the
//   key and the new value is flushed, fence, and the one word that names the
//   leaf (a child, end-of-key or root word) is swung with one 8-byte store +
//   persist; the old block is retired after that.
// remove of an end-of-key leaf: its word is cleared (one store), or the node
//   is replaced by its last leaf as for any other entry (nodes.hpp unlink).
#pragma once

namespace pmindex::art::detail {

// A new leaf: its kv block allocated (freed by pb if the insert fails),
// written and flushed, not fenced: every protocol fences before it commits.
template <class P>
uint64_t art_bytes_index<P>::new_leaf(pending_blocks& pb, std::string_view key, std::string_view value) {
  uint64_t n = common::kv_block_bytes(key.size(), value.size());
  uint64_t off = pb.alloc(n);
  fill_leaf(p_, off, key, value);
  // The mutant publishes the block without flushing it.
  if (!mutant_.on(mutant::bytes_leaf_unflushed)) p_.flush(p_.ptr(off), n);
  return tag(off, k_leaf);
}

// Where a key belongs (nothing is written on the way): the word to change
// (slot), what it holds (w), the position it is found at, and the versions
// that guard them. false: met a concurrent change (restart).
template <class P>
bool art_bytes_index<P>::locate(std::string_view key, spot& s) {
  const unsigned len = dg::length(key);
  s = spot{&root_->child, 0, 0, 0, 0, spot::empty, locks_.see_root(), {}, false};
  while ((s.w = __atomic_load_n(s.slot, __ATOMIC_ACQUIRE)) != 0) {
    if (is_leaf(s.w)) {
      s.what = leaf_key(s.w) == key ? spot::present : spot::at_leaf;
      return true;
    }
    s.n = locks_.see(s.w);
    header h = hdr(s.w);
    if (!s.o.still() || (h.depth != s.pos && !s.n.still_or_damaged(P::k_name))) return false;  // (a split)
    unsigned b = s.pos + h.plen;
    if (h.plen) {
      bool torn = false;  // the walk to a leaf below met a cleared word
      s.diff = prefix_diff(h, key, [&] {
        uint64_t l = kit::min_leaf_word(s.w);
        torn = !l;
        return l ? leaf_key(l) : std::string_view();
      });
      if (torn) return confirm_leaf_below(key), false;
      if (s.diff < b) return s.what = spot::mismatch, true;
    }
    // The end-of-key word (the key's leaf, or empty for it), or a child.
    s.d = dg::at_or_end(key, b);
    uint64_t* next = entry(s.w, s.d);
    if (!next) {
      s.full = visit(s.w, [&](auto ops, auto* n) { return ops.full(n); });
      return s.what = spot::no_child, true;
    }
    s.slot = next;
    s.o = s.n;
    s.pos = s.d == k_end ? len + 1 : b + 1;
  }
  return true;
}

template <class P>
void art_bytes_index<P>::confirm_leaf_below(std::string_view key) {
  const uint32_t slot = p_.thread_slot();
  const unsigned len = dg::length(key);
  gate_.exit(slot);
  {
    common::writer_gate::closed no_writers(gate_);
    uint64_t w = __atomic_load_n(&root_->child, __ATOMIC_ACQUIRE);
    for (unsigned steps = 0; w && !is_leaf(w) && steps <= k_max_digits + 1; ++steps) {
      if (!kit::node_ok(w)) throw error(errc::corrupt, std::string(P::k_name) + ": a bad node word (damaged pool)");
      header h = hdr(w);
      if (h.plen && !kit::checked_min_leaf_word(w, k_max_digits + 2))
        throw error(errc::corrupt, std::string(P::k_name) + ": a node with no leaf below it (damaged pool)");
      const unsigned b = h.depth + h.plen;
      uint64_t* s = b <= len ? entry(w, dg::at_or_end(key, b)) : nullptr;
      w = s ? __atomic_load_n(s, __ATOMIC_ACQUIRE) : 0;
    }
  }
  gate_.enter(slot);
}

// insert (overwrite = false) and upsert: true if the key was absent.
template <class P>
bool art_bytes_index<P>::put(std::string_view key, std::string_view value, bool overwrite) {
  check_key(key);
  check_value(value);
  writer_scope ws(p_, gate_);
  pending_blocks pb(p_);  // frees what it allocated unless committed
  uint64_t lw = 0;
  bool leafless = false;  // (looked into with no lock held: the next round)
  for (;;) {
    if (leafless) confirm_leaf_below(key), leafless = false;
    spot s;
    if (!locate(key, s)) continue;
    if (s.what == spot::present && !overwrite) {
      if (s.o.still()) return false;
      continue;
    }
    if (!lw) lw = new_leaf(pb, key, value);  // once, before any lock
    before_lock();  // (test builds: the race hook)
    lock_set held;
    kind k = kind_of(s.w);
    bool in_place = s.what == spot::no_child && !s.full &&
                    !(s.d != k_end && P::k_cow_small && (k == k_n4 || k == k_n16));
    bool ok = s.what == spot::mismatch || (s.what == spot::no_child && !in_place)
                  ? held.upgrade(s.o) && held.upgrade(s.n)
              : s.what == spot::no_child ? held.upgrade(s.n)
                                         : held.upgrade(s.o);
    if (!ok) continue;
    if (s.what == spot::present) {
      // Out of place: the new block is swung in for the old one.
      kit::publish_leaf(s.slot, lw);  // fence, then the commit
      pb.commit();
      p_.retire(off_of(s.w));
      return false;
    }
    switch (s.what) {
      case spot::at_leaf: {
        // Both keys have the digits [0, pos); a node at pos branches where
        // they first differ, or holds the shorter one as its end-of-key leaf.
        std::string_view other = leaf_key(s.w);
        unsigned b = dg::first_diff(key, other, s.pos);
        kit::publish_pair(pb, s.slot, dg::make_header(s.pos, b - s.pos, key), dg::at_or_end(other, b), s.w,
                          dg::at_or_end(key, b), lw);
        break;
      }
      case spot::mismatch: {
        // The key leaves w's prefix at `diff` (another digit, or its end).
        unsigned b = s.pos + hdr(s.w).plen, diff = s.diff;
        uint64_t rl = kit::min_leaf_word(s.w);  // any leaf below holds w's prefix
        if (!rl) {                               // (a word below cleared under the walk)
          leafless = true;
          continue;
        }
        std::string_view ref = leaf_key(rl);
        kit::split(pb, s.slot, s.w, dg::make_header(s.pos, diff - s.pos, key),
                   dg::make_header(diff + 1, b - diff - 1, ref), dg::at(ref, diff), dg::at_or_end(key, diff),
                   lw);
        break;
      }
      case spot::no_child:
        kit::add_child(pb, s.slot, s.w, s.d, lw);
        break;
      default:
        kit::publish_leaf(s.slot, lw);  // an empty word
    }
    break;
  }
  pb.commit();
  count_.add(ws.slot, 1);
  return true;
}

template <class P>
bool art_bytes_index<P>::update_once(std::string_view key, std::string_view value) {
  check_key(key);
  check_value(value);
  writer_scope ws(p_, gate_);
  pending_blocks pb(p_);
  uint64_t lw = 0;
  for (;;) {
    found f;
    settled r = settle(descend(key, f), f);
    if (r == settled::absent) return false;
    if (r == settled::restart) continue;
    if (!lw) lw = new_leaf(pb, key, value);  // once, before any lock
    before_lock();  // (test builds: the race hook)
    lock_set held;
    if (!held.upgrade(f.owner)) continue;
    kit::publish_leaf(f.slot, lw);  // fence, then the commit: the new block swung in
    pb.commit();
    p_.retire(off_of(f.lw));
    return true;
  }
}

template <class P>
bool art_bytes_index<P>::remove(std::string_view key) {
  check_key(key);
  writer_scope ws(p_, gate_);
  static thread_local std::vector<path_step> path;
  static thread_local std::vector<seen> owners;
  for (;;) {
    found f;
    settled r = settle(descend(key, f, &path, &owners), f);
    if (r == settled::absent) return false;
    if (r == settled::restart) continue;
    const int depth = int(path.size());
    bool swings;
    int top = kit::unlink_top(path.data(), depth, &swings);
    // owners[j + 1] guards path[j].w (tree_write.hpp remove).
    before_lock();  // (test builds: the race hook)
    lock_set held;
    bool ok = true;
    for (int j = swings && top >= 0 ? top : top + 1; ok && j <= depth; ++j) ok = held.upgrade(owners[j]);
    if (!ok) continue;
    kit::unlink(&root_->child, path.data(), depth, top, f.lw);
    break;
  }
  count_.add(ws.slot, -1);
  return true;
}

}  // namespace pmindex::art::detail
