// uTree (see utree.hpp): check(), trace(), stats(). check() and trace() do
// not run beside writers; stats() may (its counts are then approximate).
#include "hybrid/utree/utree.hpp"

namespace pmindex::hybrid::utree {

// The list (links in the heap and allocated, no flag left, keys strictly
// rising, bytes: live record blocks whose prefix is the node's key word),
// then the leaves against it: every list node in exactly one leaf, in list
// order, inside the leaf's fences; leaves chained both ways, only the first
// empty; the search layer routing each leaf's low key to it.
template <class K>
check_result tree<K>::check() {
  auto fail = [](const std::string& m) { return check_result::fail("utree: " + m); };
  std::vector<uint64_t> list;
  std::vector<key> keys;
  const uint64_t limit = p_.size() / sizeof(lnode);
  if (!node_ok(head_) || !p_.is_allocated(head_)) return fail("the head lies outside the heap");
  for (uint64_t off = head_;;) {
    const uint64_t w = node(off)->next;
    if (w & k_flag_bits) return fail("node " + std::to_string(off) + ": a flag left in its next word");
    if (!w) break;
    if (!node_ok(w) || !p_.is_allocated(w)) return fail("a list link outside the heap");
    if (list.size() > limit) return fail("the list has a cycle");
    const lnode* y = node(w);
    if constexpr (K::k_blocks) {
      if (!K::valid_record(p_, y->value) || !p_.is_allocated(y->value))
        return fail("node " + std::to_string(w) + ": bad record block");
      if (detail::key_prefix(common::kv_key(p_, y->value)) != y->key)
        return fail("node " + std::to_string(w) + ": record block does not match its key word");
    }
    const key k = K::of(p_, y->key, y->value);
    if (!keys.empty() && !K::less(keys.back(), k)) return fail(K::describe(k) + ": list keys out of order");
    list.push_back(w);
    keys.push_back(k);
    off = w;
  }
  std::vector<std::pair<key, uint64_t>> lows;
  size_t j = 0;
  const leaf* prev = nullptr;
  for (leaf* l = first_; l; prev = l, l = l->next) {
    if (l->prev != prev) return fail("a leaf with a wrong prev pointer");
    if (l->dead || l->lock.is_locked()) return fail("a leaf left locked or unlinked in the chain");
    if (l->count > cap_) return fail("a leaf over its capacity");
    if (prev && !l->count) return fail("an empty leaf other than the first");
    if (prev && !K::less(prev->low, l->low)) return fail("leaf fences out of order");
    if constexpr (!K::k_blocks)
      if (l->next && l->high != l->next->low) return fail("a leaf's copy of its next leaf's low differs from it");
    for (unsigned i = 0; i < l->count; ++i, ++j) {
      if (j >= list.size() || nd(l)[i] != list[j]) return fail("the leaves do not hold the list in order");
      if (kw(l)[i] != node(list[j])->key) return fail("a leaf entry's key word differs from its node's");
      if (K::less(keys[j], l->low) || (l->next && !K::less(keys[j], l->next->low)))
        return fail(K::describe(keys[j]) + " outside its leaf's fences");
    }
    lows.emplace_back(l->low, reinterpret_cast<uint64_t>(l));
  }
  if (j != list.size()) return fail("list nodes missing from the leaves");
  auto e = layer_.check(lows);
  if (!e.empty()) return fail("search layer: " + e);
  return {};
}

// Validates every word before following it (a dirty open traces a pool
// that rebuild() has checked, but trace() must not trust it either).
template <class K>
void tree<K>::trace(pm::pool::trace_sink& sink) {
  sink.add(p_.off(root_), sizeof(root_block));
  const uint64_t limit = p_.size() / sizeof(lnode);
  uint64_t n = 0;
  for (uint64_t off = head_; off; off = node(off)->next & ~k_flag_bits) {
    if (!node_ok(off)) corrupt("a list link outside the heap");
    if (++n > limit) corrupt("the list has a cycle");
    sink.add(off, sizeof(lnode));
    if constexpr (K::k_blocks) {
      if (off == head_) continue;
      const uint64_t b = node(off)->value;
      if (!K::valid_record(p_, b)) corrupt("a record block outside the heap");
      sink.add(b, common::kv_block_size(p_, b));
    }
  }
}

template <class K>
index_stats tree<K>::stats() {
  auto g = p_.pin();  // leaves unlinked meanwhile stay readable
  index_stats s;
  uint64_t leaves = 0;
  for (const leaf* l = first_; l; l = common::load_acq(&l->next)) {
    s.records += count_of(l);
    ++leaves;
  }
  auto u = p_.usage();
  s.pm_bytes_used = u.used_bytes;
  s.pm_bytes_reserved = u.reserved_bytes;
  const uint64_t leaf_bytes = offsetof(leaf, slot) + 2 * sizeof(uint64_t) * cap_;
  s.dram_bytes = u.dram_bytes + sizeof(*this) + layer_.dram_bytes() + leaves_.load() * leaf_bytes;
  s.alloc_dram_bytes = u.dram_bytes;
  s.extra = {{"leaves", double(leaves)},
             {"leaf_fill", leaves ? double(s.records) / double(leaves * cap_) : 0.0},
             {"splits", double(splits_.load())},
             {"leaf_unlinks", double(unlinks_.load())},
             {"scan_help_flushes", double(helps_.load())},
             {"layer_nodes", double(layer_.nodes())},
             {"layer_dram_bytes", double(layer_.dram_bytes())},
             {"rebuild_seconds", rebuild_seconds_}};
  return s;
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::utree
