// Writers of the byte-key WORT-family tree (included by bytes_tree.hpp).
// The exclusive lock is held throughout; every change is one of the
// node-level commits of nodes.hpp (protocols in tree_write.hpp), plus:
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

// The leaf named by *slot replaced by a new one (same key, new value).
template <class P>
void art_bytes_index<P>::replace_leaf(uint64_t* slot, std::string_view key, std::string_view value) {
  uint64_t old = *slot;
  pending_blocks pb(p_);
  uint64_t lw = new_leaf(pb, key, value);
  kit::publish_leaf(slot, lw);  // fence, then the commit
  pb.commit();
  p_.retire(off_of(old));
}

// Where a key belongs (nothing is written on the way): the word to change
// (slot), what it holds (w), and the position it is found at.
template <class P>
typename art_bytes_index<P>::spot art_bytes_index<P>::locate(std::string_view key) {
  const unsigned len = dg::length(key);
  spot s{&root_->child, 0, 0, 0, 0, spot::empty};
  while ((s.w = *s.slot) != 0) {
    if (is_leaf(s.w)) {
      s.what = leaf_key(s.w) == key ? spot::present : spot::at_leaf;
      PMINDEX_ASSERT(s.what == spot::present || s.pos <= len);  // end-of-key words hold this key
      return s;
    }
    header h = hdr(s.w);
    PMINDEX_ASSERT(h.depth == s.pos);
    unsigned b = s.pos + h.plen;
    if (h.plen && (s.diff = prefix_diff(s.w, h, key)) < b) return s.what = spot::mismatch, s;
    // The end-of-key word (the key's leaf, or empty for it), or a child.
    s.d = dg::at_or_end(key, b);
    uint64_t* next = entry(s.w, s.d);
    if (!next) return s.what = spot::no_child, s;
    s.slot = next;
    s.pos = s.d == k_end ? len + 1 : b + 1;
  }
  return s;
}

// insert (overwrite = false) and upsert: true if the key was absent.
template <class P>
bool art_bytes_index<P>::put(std::string_view key, std::string_view value, bool overwrite) {
  check_key(key);
  check_value(value);
  std::unique_lock lk(mu_);
  spot s = locate(key);
  if (s.what == spot::present) {
    if (overwrite) replace_leaf(s.slot, key, value);
    return false;
  }
  pending_blocks pb(p_);  // frees what it allocated unless committed
  uint64_t lw = new_leaf(pb, key, value);
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
      std::string_view ref = min_key(s.w);
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
  pb.commit();
  if (count_ >= 0) ++count_;
  return true;
}

template <class P>
bool art_bytes_index<P>::update(std::string_view key, std::string_view value) {
  check_key(key);
  check_value(value);
  std::unique_lock lk(mu_);
  uint64_t* s = find_slot(key);
  if (!s) return false;
  replace_leaf(s, key, value);
  return true;
}

template <class P>
bool art_bytes_index<P>::remove(std::string_view key) {
  check_key(key);
  std::unique_lock lk(mu_);
  const unsigned len = dg::length(key);
  path_.clear();
  uint64_t* slot = &root_->child;
  // Down to the key's leaf, noting each node and the entry taken.
  for (unsigned pos = 0; !is_leaf(*slot);) {
    uint64_t w = *slot;
    if (!w) return false;
    header h = hdr(w);
    unsigned b = pos + h.plen;
    if (len < b || !dg::stored_prefix_matches(h, key)) return false;
    unsigned d = dg::at_or_end(key, b);
    uint64_t* s = entry(w, d);
    if (!s) return false;
    path_.push_back({slot, w, d});
    slot = s;
    pos = b + 1;
  }
  if (leaf_key(*slot) != key) return false;
  kit::unlink(&root_->child, path_.data(), int(path_.size()), *slot);
  if (count_ >= 0) --count_;
  return true;
}

}  // namespace pmindex::art::detail
