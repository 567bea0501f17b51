// PACTree (see pactree.hpp): check(), trace(), stats(). check() and trace()
// first wait for the SMO thread to apply every queued SMO and do not run
// beside writers; stats() may (its counts are then approximate).
#include <algorithm>
#include <bit>
#include <unordered_set>

#include "hybrid/pactree/pactree.hpp"

namespace pmindex::hybrid::pactree {

// One node against its anchor and its right neighbour's: records inside
// [low, next low), fingerprints right, no key twice, (bytes) live blocks.
template <class K>
std::string tree<K>::check_node(const dnode* n, const dnode* next) const {
  const unsigned used = unsigned(std::popcount(n->bitmap));
  if (used > cap_) return "more records than the node size";
  if (current(n->lock) && (n->lock & (k_locked | k_obsolete))) return "node left locked or obsolete in the list";
  const key low = low_of(n);
  uint8_t ord[k_slots];
  unsigned c = 0;
  for (uint64_t m = n->bitmap; m; m &= m - 1) {
    unsigned i = unsigned(std::countr_zero(m));
    if constexpr (K::k_blocks) {
      uint64_t b = n->slot[i].value;
      if (!K::valid_record(p_, b) || !p_.is_allocated(b)) return "slot " + std::to_string(i) + ": bad record block";
      if (detail::key_prefix(common::kv_key(p_, b)) != n->slot[i].key)
        return "slot " + std::to_string(i) + ": record block does not match its prefix word";
    }
    key k = key_of(n, i);
    if (n->fp[i] != K::fp_of(k)) return "slot " + std::to_string(i) + ": wrong fingerprint";
    if (K::less(k, low)) return K::describe(k) + " below its node's anchor";
    if (next && !K::less(k, low_of(next))) return K::describe(k) + " at or above the next node's anchor";
    ord[c++] = uint8_t(i);
  }
  std::sort(ord, ord + c, [&](uint8_t a, uint8_t b) { return K::less(key_of(n, a), key_of(n, b)); });
  for (unsigned j = 1; j < c; ++j)
    if (!K::less(key_of(n, ord[j - 1]), key_of(n, ord[j]))) return K::describe(key_of(n, ord[j])) + " twice";
  return {};
}

template <class K>
check_result tree<K>::check() {
  drain_smo();
  std::vector<std::pair<key, uint64_t>> nodes;
  std::vector<uint64_t> offs;
  for (uint64_t off = root_->head; off;) {
    if (!node_in_heap(off) || !p_.is_allocated(off)) return check_result::fail("pactree: a node link outside the heap");
    const dnode* n = at(off);
    const uint64_t nx = n->next;
    if (nx && !node_in_heap(nx)) return check_result::fail("pactree: a node link outside the heap");
    if constexpr (K::k_blocks)
      for (uint64_t b : {n->low, nx ? at(nx)->low : 0})
        if (!K::valid_low(p_, b) || (b && !p_.is_allocated(b)))
          return check_result::fail("pactree: node " + std::to_string(off) + ": bad anchor block");
    key low = low_of(n);
    if (nodes.empty() ? K::less(K::k_min, low) : !K::less(nodes.back().first, low))
      return check_result::fail("pactree: node anchors out of order at " + K::describe(low));
    auto e = check_node(n, nx ? at(nx) : nullptr);
    if (!e.empty()) return check_result::fail("pactree: node " + std::to_string(off) + ": " + e);
    nodes.emplace_back(low, off);
    offs.push_back(off);
    if (nodes.size() > p_.size() / sizeof(dnode)) return check_result::fail("pactree: the node list has a cycle");
    off = nx;
  }
  auto e = layer_.check(offs);
  if (!e.empty()) return check_result::fail("pactree: search layer: " + e);
  for (unsigned s = 0; s < k_max_logs; ++s) {
    if (uint64_t lo = root_->logs[s]) {
      if (!p_.valid_block(lo, sizeof(smo_log)) || !p_.is_allocated(lo))
        return check_result::fail("pactree: an SMO log outside the heap");
      for (auto& en : p_.template ptr<smo_log>(lo)->e)
        if (en.kind != k_smo_free) return check_result::fail("pactree: an SMO log entry left after its SMO was applied");
    }
    if (busy_[s].load()) return check_result::fail("pactree: a log entry still marked busy");
  }
  return {};
}

// Validates every word before following it (a dirty open traces a pool
// nothing has checked yet). The layer may still name nodes a logged merge
// unlinked (redo_logs() frees them): those are traced with their anchor
// block, not their records (n holds copies of the same words).
template <class K>
void tree<K>::trace(pm::pool::trace_sink& sink) {
  drain_smo();
  sink.add(p_.off(root_), sizeof(root_block));
  for (unsigned s = 0; s < k_max_logs; ++s)
    if (uint64_t lo = root_->logs[s]) {
      if (!p_.valid_block(lo, sizeof(smo_log))) corrupt("an SMO log outside the heap");
      sink.add(lo, sizeof(smo_log));
    }
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  std::vector<uint64_t> leaves;
  layer_.walk(blocks, leaves, "pactree", false);
  for (auto [off, size] : blocks) sink.add(off, size);
  std::unordered_set<uint64_t> listed;
  auto add_low = [&](const dnode* n) {
    if constexpr (K::k_blocks) {
      if (!K::valid_low(p_, n->low)) corrupt("an anchor block outside the heap");
      if (n->low) sink.add(n->low, common::kv_block_size(p_, n->low));
    }
  };
  for (uint64_t off = root_->head; off; off = at(off)->next) {
    if (!node_in_heap(off)) corrupt("a node link outside the heap");
    if (!listed.insert(off).second) corrupt("the node list has a cycle");
    sink.add(off, sizeof(dnode));
    const dnode* n = at(off);
    add_low(n);
    if constexpr (K::k_blocks) {
      for (uint64_t m = n->bitmap; m; m &= m - 1) {
        uint64_t b = n->slot[std::countr_zero(m)].value;
        if (!K::valid_record(p_, b)) corrupt("a record block outside the heap");
        sink.add(b, common::kv_block_size(p_, b));
      }
    }
  }
  for (uint64_t off : leaves) {
    if (!node_in_heap(off)) corrupt("a search-layer leaf outside the heap");
    if (listed.count(off)) continue;
    sink.add(off, sizeof(dnode));
    add_low(at(off));
  }
  if (!redo_.empty()) traced_leaves_.insert(leaves.begin(), leaves.end());
}

template <class K>
index_stats tree<K>::stats() {
  auto g = p_.pin();  // may run beside writers (approximate then): merged nodes stay readable
  index_stats s;
  uint64_t nodes = 0;
  for (uint64_t off = root_->head; off; off = at(off)->next) {
    s.records += uint64_t(std::popcount(at(off)->bitmap));
    ++nodes;
  }
  auto u = p_.usage();
  s.pm_bytes_used = u.used_bytes;
  s.pm_bytes_reserved = u.reserved_bytes;
  s.dram_bytes = u.dram_bytes + sizeof(*this) + k_max_logs * sizeof(uint32_t);
  s.alloc_dram_bytes = u.dram_bytes;
  std::vector<std::pair<uint64_t, uint64_t>> blocks;  // the layer's blocks (a quiescent walk: beside writers, approximate)
  std::vector<uint64_t> leaves;
  uint64_t layer_bytes = 0;
  try {
    layer_.walk(blocks, leaves, "pactree", false);
  } catch (const error&) {
  }
  for (auto& b : blocks) layer_bytes += b.second;
  size_t spares = 0;
  {
    // Settled first: a queued split's spare is traced through its log entry
    // until the SMO thread applies it, and stashed (untraced) after. Not
    // while the thread is held (a test's hook): its queue waits for release.
    std::unique_lock q(q_mu_);
    idle_cv_.wait(q, [&] { return (!q_len_ && !applying_) || held_ || stop_ || !bg_.joinable(); });
  }
  {
    std::lock_guard lk(spare_mu_);
    spares = spares_.size();
  }
  s.extra = {{"nodes", double(nodes)},
             {"node_fill", nodes ? double(s.records) / double(nodes * cap_) : 0.0},
             {"splits", double(splits_.load())},
             {"merges", double(merges_.load())},
             {"full_pool_retries", double(room_calls_.load())},
             {"smo_applied", double(applied_.load())},
             {"layer_nodes", double(blocks.size())},
             {"layer_pm_bytes", double(layer_bytes)},
             {"layer_spares_used", double(layer_spares_.load())},
             {"smo_redone", double(redone_)},
             {"safe_scan_retries", double(scan_retries_.load())},
             {"safe_scan_locked", double(scan_locked_.load())},
             // Allocated, reachable from nothing durable (the split spares'
             // stash): a crash leaves them to tracing, a clean close frees them.
             {"unlinked_blocks", double(spares)}};
  return s;
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::pactree
