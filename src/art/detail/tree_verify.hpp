// check(), trace(), stats() and recovery of the WORT-family core (included
// by tree.hpp).
//
// Recovery (dirty open) walks the whole tree once, which tracing does anyway
// to rebuild the allocator, and repairs every node whose header depth
// disagrees with the position it is found at: the only inconsistent state a
// crash can leave (a WORT/WOART prefix split interrupted between the header
// store and the parent swing; tree_write.hpp). The repair is done here and
// not lazily by writers because readers write nothing; after recovery no such node exists (check() asserts it).
// The repair rewrites the header from the leaves: the branch digit
// b = depth + plen is the same before and after the interrupted split, and
// the digits [position, b) are those of any leaf below (the smallest and
// largest leaf must agree up to b). One 8-byte store + flush: a crash during
// recovery leaves the old or the repaired header, and recovery redone gives
// the same result (idempotent). It allocates nothing.
#pragma once

namespace pmindex::art::detail {

template <class P>
check_result art_index<P>::check() {
  common::writer_gate::closed no_writers(gate_);
  int64_t n = 0;
  bool have_prev = false;
  uint64_t prev = 0;
  std::string e;
  if (uint64_t w = root_->child) e = check_rec(w, 0, 0, 0, n, have_prev, prev);
  int64_t c = count_.get();
  check_result r = check_verdict(P::k_name, e, n, c);
  count_.set(c);
  return r;
}

template <class P>
std::string art_index<P>::check_rec(uint64_t w, unsigned pos, uint64_t path_key, uint64_t path_mask, int64_t& n,
                                    bool& have_prev, uint64_t& prev) {
  uint64_t off = off_of(w);
  if (!p_.is_allocated(off)) return "block " + std::to_string(off) + " is not allocated";
  if (is_leaf(w)) {
    leaf* l = leaf_at(w);
    if ((l->key & path_mask) != (path_key & path_mask))
      return "leaf " + std::to_string(l->key) + " disagrees with its path";
    if (have_prev && l->key <= prev) return "keys out of order at " + std::to_string(l->key);
    have_prev = true;
    prev = l->key;
    ++n;
    return {};
  }
  if (!kind_valid(kind_of(w)) || off % 64) return "bad node word at " + std::to_string(off);
  header h = hdr(w);
  if (h.depth != pos)
    return "node " + std::to_string(off) + " depth " + std::to_string(h.depth) + " disagrees with its position " +
           std::to_string(pos) + " (half-done split)";
  unsigned b = pos + h.plen;
  if (b >= dg::k_levels) return "prefix runs past the key";
  unsigned ns = h.plen < dg::k_stored ? h.plen : dg::k_stored;
  if (ns < dg::k_stored && (h.prefix >> (P::k_span * ns))) return "stray bits in a stored prefix";
  const char* bad = visit(w, [&](auto ops, auto* nd) { return ops.validate(nd); });
  if (bad) return bad;
  if (count(w) == 0) return "empty node " + std::to_string(off);
  if (ns) {
    path_key |= h.prefix << (64 - P::k_span * (pos + ns));
    path_mask |= dg::mask(pos, pos + ns);
  }
  if (h.plen > ns) {  // the rest of the prefix from a leaf below (none: damage)
    uint64_t lw = kit::checked_min_leaf_word(w, dg::k_levels + 1);
    if (!lw) return "node " + std::to_string(off) + " with no valid leaf below it";
    uint64_t m = dg::mask(pos + ns, b);
    path_key |= leaf_at(lw)->key & m;
    path_mask |= m;
  }
  std::string e;
  visit(w, [&](auto ops, auto* nd) {
    return ops.for_each(nd, [&](unsigned d, uint64_t* s) {
      if (!*s) return (e = "null child word"), true;
      uint64_t k = path_key | uint64_t{d} << (64 - P::k_span * (b + 1));
      e = check_rec(*s, b + 1, k, path_mask | dg::mask(b, b + 1), n, have_prev, prev);
      return !e.empty();
    });
  });
  return e;
}

// Calls f(child word, number of nodes above it) for every block below w.
template <class P>
template <class F>
void art_index<P>::walk(uint64_t w, unsigned depth, F&& f) {
  f(w, depth);
  if (is_leaf(w)) return;
  visit(w, [&](auto ops, auto* n) {
    return ops.for_each(n, [&](unsigned, uint64_t* s) {
      walk(*s, depth + 1, f);
      return false;
    });
  });
}

template <class P>
void art_index<P>::trace(pm::pool::trace_sink& sink) {
  common::writer_gate::closed no_writers(gate_);
  sink.add(p_.off(root_), sizeof(root_block));
  if (uint64_t w = root_->child)
    walk(w, 0, [&](uint64_t x, unsigned) {
      sink.add(off_of(x), is_leaf(x) ? k_leaf_size : node_size(kind_of(x)));
    });
}

template <class P>
index_stats art_index<P>::stats() {
  common::writer_gate::closed no_writers(gate_);
  uint64_t leaves = 0, depth_sum = 0, nodes[6] = {};
  if (uint64_t w = root_->child)
    walk(w, 0, [&](uint64_t x, unsigned depth) {
      if (is_leaf(x)) {
        ++leaves;
        depth_sum += depth;
      } else {
        ++nodes[kind_of(x)];
      }
    });
  return tree_stats<P>(p_, leaves, depth_sum, nodes,
                       sizeof(*this) + k_sync_dram_bytes);
}

// Validates one child word enough to follow it (recovery must not crash on a
// damaged pool: typed error instead).
template <class P>
void art_index<P>::check_block(uint64_t w, unsigned pos) {
  uint64_t off = off_of(w);
  kind k = kind_of(w);
  bool ok = off >= p_.header().heap_offset && pos < dg::k_levels + 1;
  if (ok && k == k_leaf) ok = off + k_leaf_size <= p_.size();
  else if (ok) ok = kind_valid(k) && off % 64 == 0 && off + node_size(k) <= p_.size() && pos < dg::k_levels;
  if (!ok) throw error(errc::corrupt, std::string(P::k_name) + ": damaged child word " + std::to_string(w));
}

template <class P>
void art_index<P>::recover_rec(uint64_t* slot, unsigned pos, int64_t& n) {
  uint64_t w = *slot;
  if (!w) return;
  check_block(w, pos);
  if (is_leaf(w)) {
    ++n;
    return;
  }
  header h = hdr(w);
  unsigned b = h.depth + h.plen;  // the branch digit, unchanged by a split
  if (h.depth < pos || b >= dg::k_levels)
    throw error(errc::corrupt, std::string(P::k_name) + ": node header out of range");
  visit(w, [&](auto ops, auto* nd) {
    if (const char* bad = ops.validate(nd)) throw error(errc::corrupt, std::string(P::k_name) + ": " + bad);
    return ops.for_each(nd, [&](unsigned, uint64_t* s) {
      recover_rec(s, b + 1, n);
      return false;
    });
  });
  if (h.depth != pos) repair_header(w, pos);  // children are validated now
}

template <class P>
void art_index<P>::repair_header(uint64_t w, unsigned pos) {
  header h = hdr(w);
  unsigned b = h.depth + h.plen;
  leaf* lo = min_leaf(w);
  leaf* hi = max_leaf(w);
  if (!lo || dg::first_diff(lo->key, hi->key) < b || (count(w) > 1 && dg::first_diff(lo->key, hi->key) != b))
    throw error(errc::corrupt, std::string(P::k_name) + ": leaves disagree with a node header");
  __atomic_store_n(header_word(w), dg::make_header(pos, b - pos, lo->key), __ATOMIC_RELEASE);
  p_.flush(header_word(w), 8);  // the constructor fences once at the end
}

}  // namespace pmindex::art::detail
