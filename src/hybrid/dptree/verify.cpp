// DPTree (see dptree.hpp): check(), trace(), stats(). check() and trace()
// first wait for the merge thread to finish the merge it runs and do not run
// beside writers; stats() may (its figures are then approximate).
#include <algorithm>
#include <bit>
#include <unordered_set>
#include <vector>

#include "hybrid/dptree/dptree.hpp"

namespace pmindex::hybrid::dptree {

// The chain at the current version: every leaf and record checked, keys
// strictly increasing across leaves. Empty string when fine.
template <class K>
std::string tree<K>::check_chain(uint64_t& records, std::vector<uint64_t>& chain) const {
  const uint64_t g = gen_.load();
  bool have_prev = false;
  ukey prev{};
  for (uint64_t off = root_->head; off;) {
    const std::string at_leaf = "leaf " + std::to_string(off) + ": ";
    if (!leaf_in_heap(off) || !p_.is_allocated(off)) return "a leaf link outside the heap";
    const leaf* l = at(off);
    if (!p_.valid_block(l->slots, nslots_ * sizeof(entry)) || !p_.is_allocated(l->slots))
      return at_leaf + "a slot block outside the heap";
    if ((l->stamp >> 1) > g) return at_leaf + "stamped by a merge that did not commit";
    const meta& m = cur(l);
    if (m.count > cap_) return at_leaf + "more records than the leaf size";
    if (m.count == 0 && !chain.empty()) return at_leaf + "an empty leaf in the chain (not the head)";
    unsigned bits = 0;
    for (uint64_t w : m.bitmap) bits += unsigned(std::popcount(w));
    if (bits != m.count) return at_leaf + "bitmap and count disagree";
    uint64_t seen[4] = {0, 0, 0, 0};
    for (unsigned j = 0; j < m.count; ++j) {
      const unsigned s = m.order[j];
      if (s >= nslots_ || !(m.bitmap[s / 64] >> (s % 64) & 1) || (seen[s / 64] >> (s % 64) & 1))
        return at_leaf + "order names slot " + std::to_string(s) + " wrongly";
      seen[s / 64] |= uint64_t{1} << (s % 64);
      const entry& e = slots(l)[s];
      if constexpr (k_bytes) {
        if (!K::valid_record(p_, e.value) || !p_.is_allocated(e.value))
          return at_leaf + "slot " + std::to_string(s) + ": bad record block";
        if (detail::key_prefix(common::kv_key(p_, e.value)) != e.key)
          return at_leaf + "slot " + std::to_string(s) + ": record block does not match its prefix word";
      }
      const ukey k = key_of(e);
      if (l->fp[s] != fp_of(k)) return at_leaf + "slot " + std::to_string(s) + ": wrong fingerprint";
      if (have_prev && !(prev < k)) return at_leaf + K::describe(layer_key(e)) + " out of order";
      prev = k;
      have_prev = true;
    }
    if (m.max_key != (m.count ? slots(l)[m.order[m.count - 1]].key : 0)) return at_leaf + "wrong max key";
    if (m.next && !leaf_in_heap(m.next)) return at_leaf + "a next link outside the heap";
    records += m.count;
    chain.push_back(off);
    if (chain.size() > p_.size() / sizeof(leaf)) return "the leaf chain has a cycle";
    off = m.next;
  }
  return {};
}

template <class K>
check_result tree<K>::check() {
  wait_idle();
  common::writer_gate::closed s(gate_);
  auto fail = [](const std::string& m) { return check_result::fail("dptree: " + m); };
  if (root_->gen != gen_.load()) return fail("the version word and its DRAM copy disagree");
  uint64_t records = 0;
  std::vector<uint64_t> chain;
  auto e = check_chain(records, chain);
  if (!e.empty()) return fail(e);
  if (chain != leaves_) return fail("the leaf list in DRAM is not the chain");
  if (base_filter_)
    for (uint64_t off : chain) {
      const leaf* l = at(off);
      const meta& m = cur(l);
      for (unsigned j = 0; j < m.count; ++j)
        if (!base_filter_->maybe(hash(slot_key(l, m.order[j]))))
          return fail("the base filter misses " + K::describe(layer_key(slots(l)[m.order[j]])));
    }
  if (records != base_records_) return fail("base record count is wrong");
  std::vector<std::pair<typename K::key, uint64_t>> mins;
  for (size_t i = 0; i < chain.size(); ++i) {
    const leaf* l = at(chain[i]);
    mins.emplace_back(i ? layer_key(slots(l)[cur(l).order[0]]) : K::k_min, chain[i]);
  }
  e = layer_->check(mins);
  if (!e.empty()) return fail("inner nodes: " + e);
  // Buffers: tags, their logs (every record before the cursor one of theirs),
  // and the record count of the whole index.
  if (frozen_ ? (frozen_->tag != gen_ || active_->tag != gen_ + 1) : active_->tag != gen_)
    return fail("buffer tags do not follow the version");
  int64_t live = int64_t(base_records_);
  for (buffer* b : {frozen_, active_}) {
    if (!b) continue;
    for (unsigned si = 0; si < k_stripes; ++si) {
      const cursor& cu = b->cur[si];
      unsigned pos = 0;
      size_t recs = 0;
      for (log_chunk* c = chunk_at(root_->log[b->tag % 2][si]);;) {
        if (c == cu.chunk && pos == cu.pos) break;
        if (pos == k_chunk_recs) {
          if (!c->next || !p_.valid_block(c->next, sizeof(log_chunk)))
            return fail("a log ends before its cursor");
          c = chunk_at(c->next);
          pos = 0;
          continue;
        }
        const log_rec& r = c->r[pos++];
        if (r.tag != b->tag || r.check != checksum(r))
          return fail("a log record before the cursor is not valid");
        ukey rk;
        if constexpr (k_bytes)
          rk = common::kv_key(p_, r.key);
        else
          rk = r.key;
        if (stripe_of(hash(rk)) != si) return fail("a log record in the log of another stripe");
        if (++recs > p_.size() / sizeof(log_rec)) return fail("a log with a cycle");
      }
      if (recs != cu.used) return fail("a log holds another number of records than its cursor says");
    }
    for (auto& [k, v] : b->map) {
      if constexpr (k_bytes)
        if (!K::valid_record(p_, v.word) || !p_.is_allocated(v.word) || common::kv_key(p_, v.word) != k)
          return fail("a buffer entry with a bad block");
      if (b == frozen_ && active_->map.count(k)) continue;  // the active one is newer
      const bool in_base = base_find(ukey(k), nullptr);
      live += int64_t(!v.tomb) - int64_t(in_base);
    }
  }
  if (live != this->live())
    return fail("record count " + std::to_string(this->live()) + ", found " + std::to_string(live));
  return {};
}

// Validates every word before following it (a dirty open traces a pool only
// the constructor has looked at).
template <class K>
void tree<K>::trace(pm::pool::trace_sink& sink) {
  wait_idle();
  sink.add(p_.off(root_), sizeof(root_block));
  for (auto& ls : root_->log)
    for (uint64_t off : ls) {
      for (size_t n = 0; off; off = chunk_at(off)->next) {
        if (!p_.valid_block(off, sizeof(log_chunk))) corrupt("a log chunk outside the heap");
        if (++n > p_.size() / sizeof(log_chunk)) corrupt("a log with a cycle");
        sink.add(off, sizeof(log_chunk));
      }
    }
  size_t n = 0;
  for (uint64_t off = root_->head; off;) {
    if (!leaf_in_heap(off)) corrupt("a leaf link outside the heap");
    if (++n > p_.size() / sizeof(leaf)) corrupt("the leaf chain has a cycle");
    const leaf* l = at(off);
    if (!p_.valid_block(l->slots, nslots_ * sizeof(entry))) corrupt("a slot block outside the heap");
    sink.add(off, sizeof(leaf));
    sink.add(l->slots, nslots_ * sizeof(entry));
    const meta& m = cur(l);
    if constexpr (k_bytes) {
      for (unsigned j = 0; j < m.count && j < k_slots; ++j) {
        uint64_t b = slots(l)[m.order[j]].value;
        if (!K::valid_record(p_, b)) corrupt("a record block outside the heap");
        sink.add(b, common::kv_block_size(p_, b));
      }
    }
    off = m.next;
  }
  // keys=bytes: the blocks the live log records name. A remove's is
  // borrowed: its owner (a leaf or an upsert record) reports it, unless it
  // has none, which happens after a partial merge: the frozen buffer's
  // record was not carried because the active buffer removed its key
  // (carry()); then the remove record keeps it until its own buffer's
  // merge commits. A record a partial merge carried before a crash is
  // reported once: the frozen buffer's entry is the same block.
  if constexpr (k_bytes) {
    std::unordered_set<uint64_t> owned;
    for (uint64_t off = root_->head; off;) {
      const leaf* l = at(off);
      const meta& m = cur(l);
      for (unsigned j = 0; j < m.count && j < k_slots; ++j) owned.insert(slots(l)[m.order[j]].value);
      off = m.next;
    }
    std::vector<uint64_t> named;  // by remove records
    for (buffer* b : {frozen_, active_}) {
      if (!b) continue;
      for (unsigned si = 0; si < k_stripes; ++si) {
        log_chunk* c = chunk_at(root_->log[b->tag % 2][si]);
        for (unsigned pos = 0;;) {
          if (c == b->cur[si].chunk && pos == b->cur[si].pos) break;
          if (pos == k_chunk_recs) {
            c = chunk_at(c->next);
            pos = 0;
            continue;
          }
          const log_rec& r = c->r[pos++];
          if (!block_ok(r)) corrupt("a log record's block is not what it wrote");
          if (r.op != k_upsert) {
            named.push_back(r.key);
            continue;
          }
          if (b == active_ && frozen_) {
            auto it = frozen_->map.find(common::kv_key(p_, r.key));
            if (it != frozen_->map.end() && !it->second.tomb && it->second.word == r.key) continue;
          }
          owned.insert(r.key);
          sink.add(r.key, common::kv_block_size(p_, r.key));
        }
      }
    }
    for (uint64_t w : named)
      if (owned.insert(w).second) sink.add(w, common::kv_block_size(p_, w));
  }
}

template <class K>
index_stats tree<K>::stats() {
  index_stats s;
  size_t buffered = 0, frozen = 0, leaves = 0;
  uint64_t bloom_bytes = 0, log_records = 0, base_filter_bytes = 0;
  {
    common::writer_gate::writer in(gate_, p_.thread_slot());
    buffered = active_->entries.load(std::memory_order_relaxed);
    frozen = frozen_ ? frozen_->entries.load(std::memory_order_relaxed) : 0;
    leaves = leaves_.size();
    for (unsigned si = 0; si < k_stripes; ++si) {
      std::lock_guard lk(stripes_[si].mu);
      log_records += stripes_[si].cap[0] + stripes_[si].cap[1];
    }
    for (auto& b : bufs_) bloom_bytes += b.filter.bits / 8;
    if (base_filter_) bloom_bytes += base_filter_->bits / 8, base_filter_bytes = base_filter_->bits / 8;
    s.records = uint64_t(std::max<int64_t>(0, live()));
    auto u = p_.usage();
    s.pm_bytes_used = u.used_bytes;
    s.pm_bytes_reserved = u.reserved_bytes;
    // std::map nodes: ~48 bytes of node + the key (bytes: a std::string).
    const uint64_t per = 48 + sizeof(bkey) + sizeof(bval);
    s.alloc_dram_bytes = u.dram_bytes;
    s.dram_bytes = u.dram_bytes + sizeof(*this) + layer_->dram_bytes() + leaves * 8 +
                   (buffered + frozen) * per + bloom_bytes + k_stripes * sizeof(stripe) +
                   common::writer_gate::dram_bytes();
  }
  s.extra = {{"base_records", double(base_records_)},
             {"buffer_records", double(buffered)},
             {"frozen_records", double(frozen)},
             {"leaves", double(leaves)},
             {"leaf_fill", leaves ? double(base_records_) / double(leaves * cap_) : 0.0},
             {"merges", double(merges_.load())},
             {"merged_records", double(merged_records_.load())},
             {"merge_failures", double(merge_failures_.load())},
             {"partial_merges", double(partial_merges_.load())},
             {"carried", double(carried_.load())},
             {"in_place_updates", double(in_place_.load())},
             {"base_filter_bytes", double(base_filter_bytes)},
             {"base_filter_builds", double(base_filter_builds_.load())},
             {"log_records", double(log_records)},  // the logs' room
             // The merge thread's persistence cost per merged buffer entry.
             {"merge_flushes_per_record",
              merged_records_.load() ? double(merge_lines_.load()) / double(merged_records_.load()) : 0.0},
             {"merge_fences_per_merge",
              merges_.load() ? double(merge_fences_.load()) / double(merges_.load()) : 0.0},
             {"merge_seconds", merge_seconds_},
             {"replayed", double(replayed_)},
             {"gen", double(gen_.load())},
             {"rebuild_seconds", rebuild_seconds_}};
  return s;
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::dptree
