// DPTree scans (see dptree.hpp, "THREADS"): the active buffer, the frozen
// one and the base leaves merged in key order, the newest source winning a
// key they share and a tombstone hiding it. Inside the structure lock, with
// the active buffer's map lock (shared) held throughout: an atomic snapshot
// (a writer may have logged a record it has not applied yet: it has not
// returned either).
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "hybrid/dptree/dptree.hpp"
#include "common/prefetch.hpp"

namespace pmindex::hybrid::dptree {

// How far ahead of the merge a scan asks for base slots, and for their
// records' blocks (a block's offset is in its slot: asked for later).
inline constexpr unsigned k_slots_ahead = 16, k_blocks_ahead = 8;

template <class K>
template <class Emit>
void tree<K>::collect(ukey from, size_t count, const ukey* hi, Emit&& emit) {
  common::writer_gate::writer in(gate_, p_.thread_slot());
  std::shared_lock b(active_->mu);
  typename buffer_map::const_iterator a = active_->map.lower_bound(from), ae = active_->map.end(), fz{}, fe{};
  const bool has_frozen = frozen_ != nullptr;
  if (has_frozen) {
    fz = frozen_->map.lower_bound(from);
    fe = frozen_->map.end();
  }
  const leaf* l = at(leaf_for(from));
  // The first leaf: its header's first line is read at once (the stamp,
  // which names the current metadata copy, and the slot block's address),
  // then that copy's lines and every slot line are asked for together. The
  // search below probes about eight slots one after another, and the scan
  // reads most of the rest (a leaf's records are in key order in its order
  // array, not on its lines). The other copy's five lines are not asked for.
  const meta* m = &cur(l);
  common::prefetch_lines(m, sizeof(meta));
  common::prefetch_lines(slots(l), nslots_ * sizeof(entry));
  unsigned pos = lower(l, *m, from, nullptr);
  bool next_asked = false;  // the next leaf's header lines
  // A leaf's slots are read in key order, each on a line of its own, and
  // keys=bytes reads each record's block to compare its key: asked for
  // ahead of the merge, these misses overlap (scan100 1.45x, keys=bytes
  // 1.7x).
  // The buffers are DRAM maps; their nodes are not prefetched.
  unsigned slot_asked = pos, block_asked = pos;  // positions of l asked for
  size_t n = 0;
  while (n < count) {
    while (l && pos >= m->count) {  // the next leaf with a record
      l = m->next ? at(m->next) : nullptr;
      if (l) m = &cur(l);
      pos = slot_asked = block_asked = 0;
      next_asked = false;
    }
    if (l) {
      const unsigned end = unsigned(std::min<size_t>(m->count, pos + std::min<size_t>(count - n, k_slots)));
      const entry* sl = slots(l);
      for (; slot_asked < std::min(end, pos + k_slots_ahead); ++slot_asked)
        __builtin_prefetch(&sl[m->order[slot_asked]]);
      // The scan goes on past this leaf: its successor's stamp, metadata
      // and order lines (three misses in a row when it gets there).
      if (!next_asked && m->next && slot_asked >= m->count && count - n > m->count - pos) {
        common::prefetch_lines(at(m->next), offsetof(leaf, fp));
        next_asked = true;
      }
      if constexpr (k_bytes)
        for (; block_asked < std::min(end, pos + k_blocks_ahead); ++block_asked)
          __builtin_prefetch(common::kv_at(p_, __atomic_load_n(&sl[m->order[block_asked]].value, __ATOMIC_RELAXED)));
    }
    const bool ha = a != ae, hf = has_frozen && fz != fe, hb = l != nullptr;
    if (!ha && !hf && !hb) break;
    ukey k{}, bk{};
    bool any = false;
    if (ha) k = ukey(a->first), any = true;
    if (hf && (!any || ukey(fz->first) < k)) k = ukey(fz->first), any = true;
    if (hb) {
      bk = key_of(slots(l)[m->order[pos]]);
      if (!any || bk < k) k = bk;
    }
    if (hi && *hi < k) break;
    const bool ina = ha && ukey(a->first) == k, inf = hf && ukey(fz->first) == k, inb = hb && bk == k;
    const bval base_v{inb ? slots(l)[m->order[pos]].value : 0, false};
    const bval& v = ina ? a->second : inf ? fz->second : base_v;
    // The original compared the buffer's key against the wrong one and
    // returned a key of both buffer and base twice (the mutant does it).
    if (mut_.on(mutant::scan_duplicates) && inb && (ina || inf) && !v.tomb && n + 1 < count) {
      emit(k, base_v.word);
      ++n;
    }
    if (!v.tomb) {
      emit(k, v.word);
      ++n;
    }
    if (ina) ++a;
    if (inf) ++fz;
    if (inb) ++pos;
  }
}

template <class K>
size_t tree<K>::scan(uint64_t from, size_t count, record* out) {
  if constexpr (k_bytes) {
    return bytes_index::scan(from, count, out);
  } else {
    size_t n = 0;
    collect(from, count, nullptr, [&](ukey k, uint64_t w) { out[n++] = {k, w}; });
    return n;
  }
}

template <class K>
size_t tree<K>::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  if constexpr (k_bytes) {
    return bytes_index::range(lo, hi, out);
  } else {
    size_t n = 0;
    if (lo > hi) return 0;
    collect(lo, SIZE_MAX, &hi, [&](ukey k, uint64_t w) { out.push_back({k, w}), ++n; });
    return n;
  }
}

// `from` is a bound of any length, not a key.
template <class K>
size_t tree<K>::scan(std::string_view from, size_t count, record_buffer& out) {
  if constexpr (k_bytes) {
    size_t n = 0;
    collect(from, count, nullptr,
            [&](ukey k, uint64_t w) { out.push_back(k, common::kv_value(p_, w)), ++n; });
    return n;
  } else {
    uint64_t k;
    if (!u64_at_or_after(from, k)) return 0;
    size_t n = 0;
    collect(k, count, nullptr,
            [&](ukey key, uint64_t w) { out.push_back(key_bytes(key), value_bytes(w)), ++n; });
    return n;
  }
}

template <class K>
size_t tree<K>::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  if constexpr (!k_bytes) {
    return index::range(lo, hi, out);  // scans of 256 (8-byte bounds from any strings)
  } else {
    if (hi < lo) return 0;
    size_t n = 0;
    collect(lo, SIZE_MAX, &hi, [&](ukey k, uint64_t w) { out.push_back(k, common::kv_value(p_, w)), ++n; });
    return n;
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::dptree
