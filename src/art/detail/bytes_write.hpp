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

// insert (overwrite = false) and upsert: true if the key was absent.
template <class P>
bool art_bytes_index<P>::put(std::string_view key, std::string_view value, bool overwrite) {
  check_key(key);
  check_value(value);
  std::unique_lock lk(mu_);
  const unsigned len = dg::length(key);
  uint64_t* slot = &root_->child;
  unsigned pos = 0;
  uint64_t w;
  // Descend to where the key belongs; nothing is written on the way.
  enum { empty, at_leaf, mismatch, no_child } what;
  unsigned diff = 0, d = 0;
  for (;;) {
    w = *slot;
    if (!w) {
      what = empty;
      break;
    }
    if (is_leaf(w)) {
      if (leaf_key(w) == key) {
        if (overwrite) replace_leaf(slot, key, value);
        return false;
      }
      PMINDEX_ASSERT(pos <= len);  // not an end-of-key word: those hold this key
      what = at_leaf;
      break;
    }
    header h = hdr(w);
    PMINDEX_ASSERT(h.depth == pos);
    unsigned b = pos + h.plen;
    if (h.plen && (diff = prefix_diff(w, h, key)) < b) {
      what = mismatch;
      break;
    }
    if (len == b) {
      slot = eok(w);  // the key's leaf, or an empty word for it
      pos = len + 1;
      continue;
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
  uint64_t lw = new_leaf(pb, key, value);
  switch (what) {
    case empty:
      kit::publish_leaf(slot, lw);
      break;
    case at_leaf: {
      // Both keys have the digits [0, pos); a node at pos branches where
      // they first differ, or holds the shorter one as its end-of-key leaf.
      std::string_view other = leaf_key(w);
      unsigned b = dg::first_diff(key, other, pos);
      kit::publish_pair(pb, slot, dg::make_header(pos, b - pos, key), dg::at_or_end(other, b), w,
                        dg::at_or_end(key, b), lw);
      break;
    }
    case mismatch: {
      // The key leaves w's prefix at `diff` (another digit, or its end).
      header h = hdr(w);
      unsigned b = pos + h.plen;
      std::string_view ref = min_key(w);
      kit::split(pb, slot, w, dg::make_header(pos, diff - pos, key), dg::make_header(diff + 1, b - diff - 1, ref),
                 dg::at(ref, diff), dg::at_or_end(key, diff), lw);
      break;
    }
    case no_child:
      kit::add_child(pb, slot, w, d, lw);
      break;
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
  unsigned pos = 0;
  for (;;) {
    uint64_t w = *slot;
    if (!w) return false;
    if (is_leaf(w)) {
      if (leaf_key(w) != key) return false;
      break;
    }
    header h = hdr(w);
    unsigned b = pos + h.plen;
    if (len < b || !dg::stored_prefix_matches(h, key)) return false;
    unsigned d = len == b ? k_end : dg::at(key, b);
    uint64_t* s = entry(w, d);
    if (!s) return false;
    path_.push_back({slot, w, d});
    slot = s;
    pos = b + 1;
  }
  kit::unlink(&root_->child, path_.data(), int(path_.size()), *slot);
  if (count_ >= 0) --count_;
  return true;
}

}  // namespace pmindex::art::detail
