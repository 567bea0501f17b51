// check(), trace(), stats() and recovery of the byte-key WORT-family tree
// (included by bytes_tree.hpp). All are walks (bytes_walk.hpp), so a deep
// tree needs no deep recursion.
//
// Recovery (dirty open) validates every word before it follows it (node
// words: kind, alignment, inside the heap; leaves: kv_block_valid with the
// index's limits; a bad one is errc::corrupt) and repairs, on the way back
// up, every node whose header depth disagrees with its position: the state
// a WORT/WOART prefix split interrupted between its header store and its
// parent swing leaves (tree_verify.hpp explains the repair: the branch
// position depth + plen is the same in both headers, and the digits from the
// position to it are those of any leaf below). One 8-byte store + flush per
// repair; idempotent; allocates nothing.
#pragma once

namespace pmindex::art::detail {

template <class P>
check_result art_bytes_index<P>::check() {
  common::writer_gate::closed no_writers(gate_);
  int64_t n = 0;
  std::string e = check_tree(n);
  int64_t c = count_.get();
  check_result r = check_verdict((std::string(P::k_name) + " (keys=bytes)").c_str(), e, n, c);
  count_.set(c);
  return r;
}

// Every node valid and at its header's depth, every leaf's key agreeing
// with the digits of its path (and ending exactly at its node's branch
// position for an end-of-key leaf), keys strictly increasing.
template <class P>
std::string art_bytes_index<P>::check_tree(int64_t& n) {
  std::string err;
  std::string path;  // the digits of the path to the node entered last, one per char
  std::string prev;
  bool have_prev = false;
  auto fail = [&](std::string m) {
    if (err.empty()) err = std::move(m);
  };
  // A damaged pool may name anything: a node word is followed only when its
  // block is allocated, of its kind's size, and its contents validate
  // (kit::node_ok); a leaf only when its block holds its lengths.
  auto leaf_ok = [&](uint64_t lw) {
    uint64_t off = off_of(lw);
    if (!p_.is_allocated(off)) return false;
    auto* b = leaf_at(lw);
    return b->klen <= k_max_key && b->vlen <= k_max_value && p_.block_size(off) >= leaf_size(lw);
  };
  // kit::min_leaf_word with every word on the way checked (0 if one is bad).
  auto checked_min_leaf = [&](uint64_t w) -> uint64_t {
    w = kit::checked_min_leaf_word(w, k_max_digits + 2);
    return w && leaf_ok(w) ? w : 0;
  };
  auto enter = [&](uint64_t w, unsigned pos, unsigned d, bool, walk_frame& f) {
    if (!err.empty()) return false;
    uint64_t off = off_of(w);
    if (!p_.is_allocated(off)) return fail("block " + std::to_string(off) + " is not allocated"), false;
    if (!kind_valid(kind_of(w)) || off % 64 || p_.block_size(off) < node_size(kind_of(w)))
      return fail("bad node word at " + std::to_string(off)), false;
    header h = hdr(w);
    if (h.depth != pos)
      return fail("node " + std::to_string(off) + " depth " + std::to_string(h.depth) +
                  " disagrees with its position " + std::to_string(pos) + " (half-done split)"),
             false;
    f.b = pos + h.plen;
    if (f.b > k_max_digits) return fail("prefix runs past the longest key"), false;
    unsigned ns = dg::stored_count(h);
    if (ns < dg::k_stored && (h.prefix >> (P::k_span * ns)))
      return fail("stray bits in a stored prefix"), false;
    if (const char *bad = visit(w, [&](auto ops, auto* nd) { return ops.validate(nd); }))
      return fail(bad), false;
    uint64_t e = load_eok(w);
    if (e && (!is_leaf(e) || !p_.is_allocated(off_of(e))))
      return fail("end-of-key word is not a leaf"), false;
    unsigned c = count(w);
    if (c == 0 || (c == 1 && e)) return fail("node " + std::to_string(off) + " holds no branch"), false;
    if (pos) {
      path.resize(pos - 1);
      path.push_back(char(d));
    }
    for (unsigned i = 0; i < ns; ++i) path.push_back(char(dg::stored_digit(h, i)));
    if (h.plen > ns) {  // the rest of the prefix from the smallest leaf (checked against it below)
      uint64_t ml = checked_min_leaf(w);
      if (!ml || dg::length(leaf_key(ml)) < f.b)
        return fail("node " + std::to_string(off) + " has no leaf holding its prefix"), false;
      for (unsigned q = pos + ns; q < f.b; ++q) path.push_back(char(dg::at(leaf_key(ml), q)));
    }
    return true;
  };
  auto leaf = [&](uint64_t lw, unsigned pos, unsigned d, bool) {
    uint64_t off = off_of(lw);
    if (!leaf_ok(lw)) return fail("leaf " + std::to_string(off) + " is not an allocated leaf of its lengths"), true;
    std::string_view k = leaf_key(lw);
    unsigned len = dg::length(k);
    unsigned fixed = d == k_end ? pos : pos ? pos - 1 : 0;  // digits the path fixes
    if (d == k_end ? len != pos : len < pos)
      return fail("leaf of " + std::to_string(k.size()) + " bytes at position " + std::to_string(pos)), true;
    for (unsigned q = 0; q < fixed; ++q)
      if (dg::at(k, q) != uint8_t(path[q]))
        return fail("leaf " + std::to_string(off) + " disagrees with its path"), true;
    if (d < k_end && dg::at(k, pos - 1) != d)
      return fail("leaf " + std::to_string(off) + " under the wrong digit"), true;
    if (have_prev && k <= std::string_view(prev))
      return fail("keys out of order at leaf " + std::to_string(off)), true;
    prev.assign(k);
    have_prev = true;
    ++n;
    return false;
  };
  walk(root_->child, false, enter, leaf, [](walk_frame&) {});
  return err;
}

template <class P>
void art_bytes_index<P>::trace(pm::pool::trace_sink& sink) {
  common::writer_gate::closed no_writers(gate_);
  sink.add(p_.off(root_), sizeof(root_block));
  walk(
      root_->child, false,
      [&](uint64_t w, unsigned, unsigned, bool, walk_frame& f) {
        sink.add(off_of(w), node_size(kind_of(w)));
        header h = hdr(w);
        f.b = h.depth + h.plen;
        return true;
      },
      [&](uint64_t lw, unsigned, unsigned, bool) {
        sink.add(off_of(lw), leaf_size(lw));
        return false;
      },
      [](walk_frame&) {});
}

template <class P>
index_stats art_bytes_index<P>::stats() {
  common::writer_gate::closed no_writers(gate_);
  uint64_t leaves = 0, depth_sum = 0, nodes[6] = {}, depth = 0;
  walk(
      root_->child, false,
      [&](uint64_t w, unsigned pos, unsigned, bool, walk_frame& f) {
        ++nodes[kind_of(w)];
        ++depth;
        f.b = pos + hdr(w).plen;
        return true;
      },
      [&](uint64_t, unsigned, unsigned, bool) {
        ++leaves;
        depth_sum += depth;
        return false;
      },
      [&](walk_frame&) { --depth; });
  return tree_stats<P>(p_, leaves, depth_sum, nodes,
                       sizeof(*this) + k_sync_dram_bytes);
}

// ---------------------------------------------------------------- recovery

// A node word read from the pool, checked before anything of it is read.
template <class P>
void art_bytes_index<P>::check_node_word(uint64_t w) {
  uint64_t off = off_of(w);
  kind k = kind_of(w);
  if (!kind_valid(k) || off % 64 || !p_.valid_block(off, node_size(k)))
    corrupt("damaged child word " + std::to_string(w));
}

template <class P>
void art_bytes_index<P>::recover(int64_t& n) {
  auto enter = [&](uint64_t w, unsigned pos, unsigned, bool, walk_frame& f) {
    check_node_word(w);
    header h = hdr(w);
    f.b = h.depth + h.plen;  // the branch position, unchanged by a split
    if (h.depth < pos || f.b > k_max_digits) corrupt("node header out of range");
    if (const char *bad = visit(w, [&](auto ops, auto* nd) { return ops.validate(nd); })) corrupt(bad);
    if (uint64_t e = load_eok(w); e && !is_leaf(e)) corrupt("end-of-key word is not a leaf");
    return true;
  };
  auto leaf = [&](uint64_t lw, unsigned, unsigned, bool) {
    if (!common::kv_block_valid(p_, off_of(lw), k_max_key, k_max_value))
      corrupt("damaged leaf " + std::to_string(lw));
    ++n;
    return false;
  };
  auto leave = [&](walk_frame& f) {
    if (hdr(f.w).depth != f.pos) repair_header(f.w, f.pos);  // its leaves are validated now
  };
  walk(root_->child, false, enter, leaf, leave);
}

template <class P>
void art_bytes_index<P>::repair_header(uint64_t w, unsigned pos) {
  header h = hdr(w);
  unsigned b = h.depth + h.plen;
  uint64_t lo = kit::min_leaf_word(w), hi = kit::max_leaf_word(w);
  if (!lo) corrupt("a node without leaves");
  std::string_view a = leaf_key(lo), z = leaf_key(hi);
  unsigned fd = dg::first_diff(a, z);
  if (dg::length(a) < b || fd < b || (count(w) > 1 && fd != b)) corrupt("leaves disagree with a node header");
  __atomic_store_n(header_word(w), dg::make_header(pos, b - pos, a), __ATOMIC_RELEASE);
  p_.flush(header_word(w), 8);  // the constructor fences once at the end
}

}  // namespace pmindex::art::detail
