// P-Masstree: check(), trace(), stats() and the recovery clip (see
// pmasstree.hpp). check() is also the validation of a dirty open and the
// gate before reads of a damaged pool: every word is checked before it is
// followed (offsets inside the heap, node kinds, kv blocks, permutations),
// and walks are bounded (no cycle or shared subtree can make them loop).
#include <algorithm>
#include <bit>

#include "masstree/pmasstree/pmasstree.hpp"

namespace pmindex::masstree::pmasstree {

using common::load_acq;

namespace {
constexpr unsigned k_max_inner_depth = 64;
std::string hex(uint64_t off) {
  char b[24];
  std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(off));
  return b;
}
// A permutation whose 15 nibbles are the slots 0..14, each once, with a
// count within the leaf's width.
bool perm_ok(perm_t pm, unsigned cap) {
  unsigned seen = 0;
  for (unsigned i = 0; i < k_width; ++i) seen |= 1u << pm[i];
  return seen == (1u << k_width) - 1 && pm.size() <= cap;
}
}  // namespace

// ---------------------------------------------------------------- check

template <bool Bytes>
check_result tree<Bytes>::check() {
  std::string m;
  {
    common::writer_gate::closed no_writers(gate_);
    auto g = p_.pin();
    census c;
    std::string prefix;
    m = check_layer(load_acq(&root_->root), 0, prefix, c);
  }
  if (!m.empty()) return check_result::fail("pmasstree: " + m);
  return {};
}

template <bool Bytes>
std::string tree<Bytes>::check_inner(uint64_t off, ikey lo, const ikey* hi, unsigned depth,
                                     std::vector<uint64_t>& leaves, std::unordered_set<uint64_t>& named,
                                     census& c) {
  if (depth > k_max_inner_depth) return "inner nodes nested too deep";
  if (++c.inners > p_.size() / sizeof(inner)) return "inner nodes reached more than once";
  if (!p_.valid_block(off, sizeof(inner)) || kind_of(at<void>(off)) != k_inner || !allocated(off))
    return "a child word " + hex(off) + " names no node";
  const inner* n = at<inner>(off);
  const uint64_t nk = n->nkeys;
  if (nk < 1 || nk + 1 > inner_cap_) return "an inner node with " + std::to_string(nk) + " separators";
  for (unsigned i = 0; i < nk; ++i) {
    if (n->cls[i] > k_more) return "a separator with a bad key class";
    if (sep_of(n, i) <= (i ? sep_of(n, i - 1) : lo) || (hi && sep_of(n, i) >= *hi))
      return "inner node separators out of order or outside the node's range";
  }
  for (unsigned i = 0; i <= nk; ++i) {
    const ikey clo = i ? sep_of(n, i - 1) : lo;
    ikey chi_v = 0;
    const ikey* chi = hi;
    if (i < nk) {
      chi_v = sep_of(n, i);
      chi = &chi_v;
    }
    const uint64_t ch = n->child[i];
    if (!p_.valid_block(ch, 64)) return "a child word " + hex(ch) + " outside the heap";
    if (kind_of(at<void>(ch)) == k_inner) {
      if (auto m = check_inner(ch, clo, chi, depth + 1, leaves, named, c); !m.empty()) return m;
      continue;
    }
    if (kind_of(at<void>(ch)) != k_leaf || !p_.valid_block(ch, sizeof(leaf)))
      return "a child word " + hex(ch) + " names no node";
    // A leaf named again (the words of a dropped leaf swung to the leaf on
    // its left), or first named above its low bound (a crash between those
    // swings): valid for B-link descents, which move right from a leaf
    // whose low bound is at or below their key.
    if (named.count(ch)) continue;
    if (low_of(at(ch)) > clo) return "a leaf's low bound is above its separator";
    leaves.push_back(ch);
    named.insert(ch);
  }
  return {};
}

// One layer: its inner nodes, then its leaf chain (in the inner nodes'
// order, plus leaves only the chain holds), then every entry, and the
// layers below. `prefix`: the key bytes above (keys=bytes).
template <bool Bytes>
std::string tree<Bytes>::check_layer(uint64_t root, size_t d, std::string& prefix, census& c) {
  if (d > k_max_key / 8 + 1) return "layers nested too deep";
  ++c.layers;
  c.depth = std::max<uint64_t>(c.depth, d + 1);
  std::vector<uint64_t> refs;
  if (!p_.valid_block(root, 64)) return "a root word " + hex(root) + " outside the heap";
  if (kind_of(at<void>(root)) == k_inner) {
    std::unordered_set<uint64_t> named;
    if (auto m = check_inner(root, 0, nullptr, 0, refs, named, c); !m.empty()) return m;
  } else {
    refs.push_back(root);
  }
  if (!p_.valid_block(refs.front(), sizeof(leaf)) || kind_of(at<void>(refs.front())) != k_leaf)
    return "a root word " + hex(root) + " names no node";
  size_t ri = 0;
  ikey prev_low = 0;
  uint64_t count = 0;
  for (uint64_t off = refs.front(); off; ++count) {
    if (count > p_.size() / sizeof(leaf)) return "a leaf chain has a cycle";
    if (!p_.valid_block(off, sizeof(leaf)) || kind_of(at<void>(off)) != k_leaf || !allocated(off))
      return "a next word " + hex(off) + " names no leaf";
    const leaf* l = at(off);
    ++c.leaves;
    if (ri < refs.size() && refs[ri] == off)
      ++ri;
    else
      ++c.chain_only;
    if (l->low_cls > k_more) return "a leaf low bound with a bad key class";
    const ikey low = low_of(l);
    if (count == 0 ? low != 0 : low <= prev_low) return "leaf low bounds out of order along the chain";
    const uint64_t w = load_acq(&l->lock);
    if (current(w) && (w & k_locked)) return "a leaf left locked (lock word " + hex(w) + ")";
    const perm_t pm{l->perm};
    if (!perm_ok(pm, leaf_cap_)) return "a leaf with a damaged permutation " + hex(pm.w);
    const uint64_t nx = l->next;
    if (nx && (!p_.valid_block(nx, sizeof(leaf)) || kind_of(at<void>(nx)) != k_leaf))
      return "a next word " + hex(nx) + " names no leaf";
    ikey prev = 0;
    for (unsigned i = 0; i < pm.size(); ++i) {
      const unsigned s = pm[i];
      if (l->cls[s] > k_more || (!Bytes && l->cls[s] != 8)) return "an entry with a bad key class";
      const ikey k = slot_key(l, s);
      if ((i && k <= prev) || k < low) return "leaf entries out of order";
      if (nx && k >= low_of(at(nx))) return "an entry at or above the next leaf's low bound";
      prev = k;
      if constexpr (Bytes) {
        const uint64_t v = l->slot[s].value;
        if (class_of(k) == k_more && (v & k_layer_tag)) {
          const size_t psize = prefix.size();
          const uint64_t be = __builtin_bswap64(slice_of(k));
          prefix.append(reinterpret_cast<const char*>(&be), 8);
          std::string m = check_layer(v & ~k_layer_tag, d + 1, prefix, c);
          prefix.resize(psize);
          if (!m.empty()) return m;
          continue;
        }
        if (!common::kv_block_valid(p_, v, k_max_key, k_max_value))
          return "a record block " + hex(v) + " is damaged";
        const std::string_view key = common::kv_key(p_, v);
        if (key.size() < 8 * d || key.substr(0, 8 * d) != prefix || ikey_at(key, d) != k)
          return "a record's key disagrees with its slot";
      }
      ++c.records;
    }
    prev_low = low;
    off = nx;
  }
  if (ri != refs.size()) return "an inner node names a leaf outside its layer's chain";
  return {};
}

// ---------------------------------------------------------------- recovery

template <bool Bytes>
uint64_t tree<Bytes>::leftmost(uint64_t root) const {
  uint64_t off = root;
  for (unsigned depth = 0;; ++depth) {
    if (depth > k_max_inner_depth || !p_.valid_block(off, sizeof(leaf)))
      corrupt("a node word outside the heap");
    if (kind_of(at<void>(off)) == k_leaf) return off;
    if (kind_of(at<void>(off)) != k_inner) corrupt("a word names no node");
    off = at<inner>(off)->child[0];
  }
}

// Dirty open: every leaf drops the entries its right neighbour's low bound
// hides (an interrupted split's copies). Persisted; idempotent.
template <bool Bytes>
void tree<Bytes>::clip_layer(uint64_t root, unsigned depth) {
  if (depth > k_max_key / 8 + 1) corrupt("layers nested too deep");
  uint64_t count = 0;
  for (uint64_t off = leftmost(root); off; off = at(off)->next) {
    if (++count > p_.size() / sizeof(leaf) || !p_.valid_block(off, sizeof(leaf)) ||
        kind_of(at<void>(off)) != k_leaf)
      corrupt("a damaged leaf chain");
    leaf* l = at(off);
    const perm_t pm{l->perm};
    if (!perm_ok(pm, leaf_cap_)) corrupt("a damaged permutation");
    const uint64_t nx = l->next;
    if (nx && (!p_.valid_block(nx, sizeof(leaf)) || kind_of(at<void>(nx)) != k_leaf))
      corrupt("a damaged leaf chain");
    const unsigned vis = visible(l, pm, nx);
    if (vis != pm.size()) p_.store_persist(&l->perm, (pm.w & ~uint64_t{15}) | vis);
    if constexpr (Bytes) {
      for (unsigned i = 0; i < vis; ++i) {
        const unsigned s = pm[i];
        if (l->cls[s] == k_more && (l->slot[s].value & k_layer_tag))
          clip_layer(l->slot[s].value & ~k_layer_tag, depth + 1);
      }
    }
  }
}

// ---------------------------------------------------------------- trace

template <bool Bytes>
void tree<Bytes>::trace(pm::pool::trace_sink& sink) {
  common::writer_gate::closed no_writers(gate_);
  sink.add(p_.off(root_), sizeof(root_block));
  trace_layer(sink, load_acq(&root_->root), 0);
}

template <bool Bytes>
void tree<Bytes>::trace_layer(pm::pool::trace_sink& sink, uint64_t root, unsigned depth) {
  // Inner nodes (depth first), then the chain from the leftmost leaf.
  std::vector<uint64_t> todo{root};
  while (!todo.empty()) {
    uint64_t off = todo.back();
    todo.pop_back();
    if (kind_of(at<void>(off)) != k_inner) continue;
    sink.add(off, sizeof(inner));
    const inner* n = at<inner>(off);
    for (unsigned i = 0; i <= n->nkeys; ++i) todo.push_back(n->child[i]);
  }
  for (uint64_t off = leftmost(root); off; off = at(off)->next) {
    sink.add(off, sizeof(leaf));
    if constexpr (Bytes) {
      const leaf* l = at(off);
      const perm_t pm{l->perm};
      const unsigned vis = visible(l, pm, l->next);
      for (unsigned i = 0; i < vis; ++i) {
        const uint64_t v = l->slot[pm[i]].value;
        if (l->cls[pm[i]] == k_more && (v & k_layer_tag))
          trace_layer(sink, v & ~k_layer_tag, depth + 1);
        else
          sink.add(v, common::kv_block_size(p_, v));
      }
    }
  }
}

// ---------------------------------------------------------------- stats

template <bool Bytes>
index_stats tree<Bytes>::stats() {
  census c;
  std::string prefix;
  {
    common::writer_gate::closed no_writers(gate_);
    auto g = p_.pin();
    check_layer(load_acq(&root_->root), 0, prefix, c);
  }
  index_stats s;
  s.records = c.records;
  auto u = p_.usage();
  s.pm_bytes_used = u.used_bytes;
  s.pm_bytes_reserved = u.reserved_bytes;
  s.dram_bytes = u.dram_bytes + sizeof(*this) + common::writer_gate::dram_bytes();
  s.alloc_dram_bytes = u.dram_bytes;
  s.extra.push_back({"leaves", double(c.leaves)});
  s.extra.push_back({"leaf_fill", c.leaves ? double(c.records) / double(c.leaves * leaf_cap_) : 0.0});
  s.extra.push_back({"inner_nodes", double(c.inners)});
  s.extra.push_back({"layers", double(c.layers)});
  s.extra.push_back({"layer_depth_max", double(c.depth)});
  s.extra.push_back({"chain_only_leaves", double(c.chain_only)});
  return s;
}

template class tree<false>;
template class tree<true>;

}  // namespace pmindex::masstree::pmasstree
