// PACTree's persistent search layer (see layer.hpp): the reads, the one
// writer's insert and erase, and the quiescent walk for trace and check.
#pragma once

#include <algorithm>

#include "hybrid/pactree/layer.hpp"

namespace pmindex::hybrid::pactree {

namespace layer_detail {
// -1: k sorts before every key under a node of prefix `pfx` at key bytes
// [st, st + pfx.size()) (k differs lower there, or ends inside it, being
// then a proper prefix of them); +1: after every one; 0: k has the prefix.
inline int compare_prefix(std::string_view k, size_t st, std::string_view pfx) noexcept {
  const size_t have = k.size() > st ? std::min(k.size() - st, pfx.size()) : 0;
  if (int c = have ? std::memcmp(k.data() + st, pfx.data(), have) : 0) return c < 0 ? -1 : 1;
  return have < pfx.size() ? -1 : 0;
}
}  // namespace layer_detail

template <class A>
uint64_t* search_layer<A>::child_slot(lnode* n, unsigned b) noexcept {
  if (n->kind == k_direct) return &n->child[b];
  const uint8_t* by = branch(n);
  for (unsigned i = 0; i < n->count; ++i)
    if (by[i] >= b) return by[i] == b ? &n->child[i] : nullptr;
  return nullptr;
}

// ---------------------------------------------------------------- readers

template <class A>
uint64_t search_layer<A>::max_of(uint64_t w) const noexcept {
  if (!w) return 0;
  if (is_leaf(w)) return target(w);
  const lnode* n = at(w);
  if (uint64_t r = max_below(n, 256)) return r;
  return 0;
}

// The greatest leaf of n's children with a byte below b, else its
// end-of-key leaf (which sorts before all its children).
template <class A>
uint64_t search_layer<A>::max_below(const lnode* n, unsigned b) const noexcept {
  if (n->kind == k_direct) {
    for (unsigned i = b; i-- > 0;)
      if (uint64_t r = max_of(common::load_acq(&n->child[i]))) return r;
  } else {
    const uint8_t* by = branch(n);
    for (unsigned i = n->count; i-- > 0;)
      if (by[i] < b)
        if (uint64_t r = max_of(common::load_acq(&n->child[i]))) return r;
  }
  uint64_t e = common::load_acq(&n->eok);
  return e ? target(e) : 0;
}

// The descent by k's bytes; when it falls off (no child, or the subtree it
// reached sorts after k), the greatest leaf left of the deepest node passed
// that has one.
template <class A>
uint64_t search_layer<A>::find(std::string_view k) const {
  struct step {
    const lnode* n;
    unsigned b;
  };
  step fixed[32];
  std::vector<step> more;  // only for paths deeper than 32 nodes (long byte keys)
  size_t depth = 0;
  auto push = [&](step s) {
    if (depth < 32) fixed[depth] = s;
    else more.push_back(s);
    ++depth;
  };
  uint64_t w = common::load_acq(root_);
  while (w) {
    if (is_leaf(w)) {
      char buf[8];
      if (anchor(w, buf) <= k) return target(w);
      break;
    }
    lnode* n = at(w);
    const uint32_t d = n->depth;
    int c = layer_detail::compare_prefix(k, d - n->plen, {prefix(n), n->plen});
    if (c < 0) break;
    if (c > 0) {
      if (uint64_t r = max_of(w)) return r;
      break;
    }
    if (k.size() == d) {
      uint64_t e = common::load_acq(&n->eok);
      if (e) return target(e);
      break;
    }
    const unsigned b = uint8_t(k[d]);
    push({n, b});
    uint64_t* s = child_slot(n, b);
    w = s ? common::load_acq(s) : 0;
  }
  while (depth) {
    --depth;
    const step s = depth < 32 ? fixed[depth] : more[depth - 32];
    if (uint64_t r = max_below(s.n, s.b)) return r;
  }
  return 0;
}

// ---------------------------------------------------------------- the writer

template <class A>
uint64_t* search_layer<A>::slot_of(std::string_view a, uint64_t node) const {
  uint64_t* slot = root_;
  for (;;) {
    uint64_t w = common::load_acq(slot);
    if (!w) return nullptr;
    if (is_leaf(w)) return target(w) == node ? slot : nullptr;
    lnode* n = at(w);
    if (layer_detail::compare_prefix(a, n->depth - n->plen, {prefix(n), n->plen}) != 0) return nullptr;
    if (a.size() == n->depth) return n->eok == leaf_word(node) ? &n->eok : nullptr;
    slot = child_slot(n, uint8_t(a[n->depth]));
    if (!slot) return nullptr;
  }
}

template <class A>
lnode* search_layer<A>::make(uint16_t kind, unsigned count, uint32_t depth, std::string_view pfx, uint64_t& spare,
                             put& how) {
  const size_t size = need(kind, count, unsigned(pfx.size()));
  uint64_t off = p_.alloc(size);
  size_t bytes = size;
  if (!off && spare) {
    off = spare, spare = 0, how = put::placed_in_spare;
    bytes = p_.block_size(off);
  }
  if (!off) return nullptr;
  lnode* n = at(off);
  std::memset(static_cast<void*>(n), 0, size);
  n->kind = kind;
  n->count = uint16_t(kind == k_direct ? 256 : count);
  n->plen = uint16_t(pfx.size());
  n->depth = depth;
  n->bytes = uint32_t(bytes);
  if (!pfx.empty()) std::memcpy(const_cast<char*>(prefix(n)), pfx.data(), pfx.size());
  return n;
}

template <class A>
void search_layer<A>::publish(uint64_t* slot, lnode* n) {
  if (!unflushed_) p_.flush(n, need(n->kind, n->count, n->plen));
  p_.fence();
  common::store_rel(slot, p_.off(n));
  p_.persist(slot, 8);
}

template <class A>
typename search_layer<A>::put search_layer<A>::insert(std::string_view a, uint64_t node, uint64_t spare) {
  const uint64_t lw = leaf_word(node);
  put how = put::placed;
  uint64_t* slot = root_;
  size_t pos = 0;  // key bytes before pos are matched by the path
  for (;;) {
    const uint64_t w = common::load_acq(slot);
    if (!w) {
      p_.store_persist(slot, lw);
      return how;
    }
    // The key bytes where w's keys and `a` part: a new node there, holding
    // both (w unchanged below it), swung in for w.
    auto split_at = [&](size_t j, unsigned wb, bool w_ends) -> put {
      const bool a_ends = a.size() == j;
      lnode* m = make(k_sorted, unsigned(!w_ends) + unsigned(!a_ends), uint32_t(j), a.substr(pos, j - pos), spare, how);
      if (!m) return put::no_room;
      unsigned i = 0;
      auto add = [&](unsigned b, uint64_t x) {
        m->child[i] = x;
        branch(m)[i++] = uint8_t(b);
      };
      if (w_ends) m->eok = w;
      if (a_ends) m->eok = lw;
      if (!w_ends && !a_ends) {
        const unsigned ab = uint8_t(a[j]);
        if (ab < wb) add(ab, lw), add(wb, w);
        else add(wb, w), add(ab, lw);
      } else {
        add(w_ends ? uint8_t(a[j]) : wb, w_ends ? lw : w);
      }
      publish(slot, m);
      return how;
    };
    if (is_leaf(w)) {
      char buf[8];
      const std::string_view b = anchor(w, buf);
      if (b == a) {
        if (w != lw) p_.store_persist(slot, lw);
        return how;
      }
      size_t j = pos;
      while (j < a.size() && j < b.size() && a[j] == b[j]) ++j;
      return split_at(j, j < b.size() ? uint8_t(b[j]) : 0, j == b.size());
    }
    lnode* n = at(w);
    const size_t d = n->depth, st = d - n->plen;
    const char* pf = prefix(n);
    size_t j = pos;
    while (j < d && j < a.size() && a[j] == pf[j - st]) ++j;
    if (j < d) return split_at(j, uint8_t(pf[j - st]), false);
    if (a.size() == d) {
      if (n->eok != lw) p_.store_persist(&n->eok, lw);
      return how;
    }
    const unsigned b = uint8_t(a[d]);
    if (uint64_t* s = child_slot(n, b)) {
      if (!*s) {
        p_.store_persist(s, lw);
        return how;
      }
      slot = s;
      pos = d + 1;
      continue;
    }
    // A sorted node without byte b: a copy with it (live children only),
    // direct when it outgrows 48.
    const uint8_t* by = branch(n);
    unsigned live = 0;
    for (unsigned i = 0; i < n->count; ++i) live += n->child[i] != 0;
    const uint16_t kind = live + 1 > k_sorted_max ? k_direct : k_sorted;
    lnode* m = make(kind, live + 1, uint32_t(d), {pf, n->plen}, spare, how);
    if (!m) return put::no_room;
    m->eok = n->eok;
    unsigned o = 0;
    bool placed = false;
    auto add = [&](unsigned byte, uint64_t x) {
      if (kind == k_direct) {
        m->child[byte] = x;
      } else {
        m->child[o] = x;
        branch(m)[o++] = uint8_t(byte);
      }
    };
    for (unsigned i = 0; i < n->count; ++i) {
      if (!placed && by[i] > b) add(b, lw), placed = true;
      if (n->child[i]) add(by[i], n->child[i]);
    }
    if (!placed) add(b, lw);
    publish(slot, m);
    p_.retire(w);
    return how;
  }
}

template <class A>
bool search_layer<A>::erase(std::string_view a, uint64_t node) {
  uint64_t* s = slot_of(a, node);
  if (!s) return false;
  p_.store_persist(s, 0);
  return true;
}

// ---------------------------------------------------------------- quiescent

template <class A>
void search_layer<A>::walk_rec(uint64_t w, int parent_depth, std::vector<std::pair<uint64_t, uint64_t>>& blocks,
                               std::vector<uint64_t>& leaves, std::unordered_set<uint64_t>& seen,
                               const char* who, bool allocated) const {
  auto bad = [&](const std::string& m) { throw error(errc::corrupt, std::string(who) + ": search layer: " + m); };
  if (!w) return;
  if (is_leaf(w)) {
    leaves.push_back(target(w));
    return;
  }
  if (!p_.valid_block(w, k_header) || (allocated && !p_.is_allocated(w))) bad("a node outside the heap");
  if (!seen.insert(w).second) bad("a node reachable twice");
  const lnode* n = at(w);
  if (n->kind != k_sorted && n->kind != k_direct) bad("a node of no kind");
  if (n->kind == k_sorted && n->count > k_sorted_max) bad("a sorted node of more than 48 children");
  if (n->kind == k_direct && n->count != 256) bad("a direct node without 256 children");
  if (int(n->depth) <= parent_depth || n->plen > n->depth || int(n->depth - n->plen) > parent_depth + 1)
    bad("a node's depth or prefix does not fit its place");
  if (n->bytes < need(n->kind, n->count, n->plen) || !p_.valid_block(w, n->bytes)) bad("a node larger than its block");
  blocks.emplace_back(w, n->bytes);
  if (n->eok && !is_leaf(n->eok)) bad("an end-of-key word that is not a leaf");
  walk_rec(n->eok, int(n->depth), blocks, leaves, seen, who, allocated);
  const uint8_t* by = branch(n);
  for (unsigned i = 0; i < n->count; ++i) {
    if (n->kind == k_sorted && i && by[i] <= by[i - 1]) bad("branch bytes out of order");
    walk_rec(n->child[i], int(n->depth), blocks, leaves, seen, who, allocated);
  }
}

template <class A>
void search_layer<A>::walk(std::vector<std::pair<uint64_t, uint64_t>>& blocks, std::vector<uint64_t>& leaves,
                           const char* who, bool allocated) const {
  std::unordered_set<uint64_t> seen;
  walk_rec(*root_, -1, blocks, leaves, seen, who, allocated);
}

template <class A>
std::string search_layer<A>::check(const std::vector<uint64_t>& nodes) const {
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  std::vector<uint64_t> leaves;
  try {
    walk(blocks, leaves, "pactree", true);
  } catch (const error& e) {
    return e.what();
  }
  for (size_t i = 0; i < std::max(leaves.size(), nodes.size()); ++i) {
    if (i >= leaves.size()) return "data node " + std::to_string(nodes[i]) + " has no anchor in the layer";
    if (i >= nodes.size() || leaves[i] != nodes[i])
      return "leaf " + std::to_string(i) + " names node " + std::to_string(leaves[i]) +
             (i < nodes.size() ? ", the list has " + std::to_string(nodes[i]) : ", past the list's end");
  }
  for (uint64_t n : leaves) {
    char buf[8];
    const std::string_view a = A::of_node(p_, n, buf);
    if (slot_of(a, n) == nullptr) return "node " + std::to_string(n) + " is not found under its anchor";
    if (find(a) != n) return "the anchor of node " + std::to_string(n) + " finds another node";
  }
  return {};
}

}  // namespace pmindex::hybrid::pactree
