// P-Masstree scans (see pmasstree.hpp): depth first through the layers,
// along each layer's leaf chain, every leaf one validated snapshot. No lock
// is taken; the walk runs pinned (kv blocks of records removed meanwhile
// stay readable).
#include <algorithm>

#include "btree/pmasstree/pmasstree.hpp"

namespace pmindex::btree::pmasstree {

using common::load_acq;

// Calls sink(slice, word) for every record of the layer >= from (nullptr:
// all), in key order; false from the sink stops the walk (returns false).
// keys=u64: word is the value; keys=bytes: the record's kv block.
template <bool Bytes>
template <class Sink>
bool tree<Bytes>::scan_layer(uint64_t root, size_t d, const probe* from, Sink& sink) {
  const ikey lo = from ? from->at(d) : 0;
  uint64_t v;
  const leaf* l = locate(root, lo, v);
  bool have_last = false;
  ikey last = 0;
  struct ent {
    ikey k;
    uint64_t w;
  } buf[k_width];
  for (;;) {
    unsigned n;
    uint64_t nx;
    for (;;) {  // the leaf's visible entries, as one snapshot
      v = read_begin(l);
      perm_t pm{load_acq(&l->perm)};
      nx = load_acq(&l->next);
      const unsigned vis = visible(l, pm, nx);
      for (n = 0; n < vis; ++n) buf[n] = {slot_key(l, pm[n]), load_acq(&l->slot[pm[n]].value)};
      if (validate(l, v)) break;
    }
    for (unsigned i = 0; i < n; ++i) {
      const ent e = buf[i];
      // A leaf split after the previous leaf's snapshot: skip what it gave.
      if ((have_last && e.k <= last) || e.k < lo) continue;
      have_last = true;
      last = e.k;
      const bool at_from = from && e.k == lo;
      if constexpr (Bytes) {
        if (class_of(e.k) == k_more) {
          if (e.w & k_layer_tag) {
            if (!scan_layer(e.w & ~k_layer_tag, d + 1, at_from ? from : nullptr, sink)) return false;
            continue;
          }
          if (at_from && common::kv_key(p_, e.w) < from->s) continue;  // a suffix entry below `from`
        }
      }
      if (!sink(slice_of(e.k), e.w)) return false;
    }
    if (!nx) return true;
    l = at(nx);
  }
}

template <bool Bytes>
size_t tree<Bytes>::scan(uint64_t from, size_t count, record* out) {
  if constexpr (Bytes) {
    return bytes_index::scan(from, count, out);
  } else {
    if (!count) return 0;
    size_t n = 0;
    auto sink = [&](uint64_t k, uint64_t w) {
      out[n++] = {k, w};
      return n < count;
    };
    walk(probe{from, {}}, sink);
    return n;
  }
}

template <bool Bytes>
size_t tree<Bytes>::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  if constexpr (Bytes) {
    return bytes_index::range(lo, hi, out);
  } else {
    size_t n = 0;
    if (lo > hi) return 0;
    auto sink = [&](uint64_t k, uint64_t w) {
      if (k > hi) return false;
      out.push_back({k, w});
      ++n;
      return true;
    };
    walk(probe{lo, {}}, sink);
    return n;
  }
}

template <bool Bytes>
size_t tree<Bytes>::scan(std::string_view from, size_t count, record_buffer& out) {
  if constexpr (!Bytes) {
    if (!count) return 0;
    uint64_t k;
    if (!u64_at_or_after(from, k)) return 0;
    size_t n = 0;
    auto sink = [&](uint64_t key, uint64_t w) {
      out.push_back(key_bytes(key), value_bytes(w));
      return ++n < count;
    };
    walk(probe{k, {}}, sink);
    return n;
  } else {
    if (!count) return 0;
    size_t n = 0;
    auto sink = [&](uint64_t, uint64_t kv) {
      auto* b = common::kv_at(p_, kv);
      out.push_back(common::kv_key(b), common::kv_value(b));
      return ++n < count;
    };
    walk(probe{0, from}, sink);
    return n;
  }
}

template <bool Bytes>
size_t tree<Bytes>::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  if constexpr (!Bytes) {
    return index::range(lo, hi, out);
  } else {
    size_t n = 0;
    if (lo > hi) return 0;
    auto sink = [&](uint64_t, uint64_t kv) {
      auto* b = common::kv_at(p_, kv);
      if (common::kv_key(b) > hi) return false;
      out.push_back(common::kv_key(b), common::kv_value(b));
      ++n;
      return true;
    };
    walk(probe{0, lo}, sink);
    return n;
  }
}

template class tree<false>;
template class tree<true>;

}  // namespace pmindex::btree::pmasstree
