// PACTree scans (see pactree.hpp, "Scans"): unsafe (each node one validated
// snapshot) or safe (every node read validated again at the end: atomic).
#include <bit>

#include "btree/pactree/pactree.hpp"
#include "common/prefetch.hpp"

namespace pmindex::btree::pactree {

using common::load_acq;
using common::store_rel;

// n's used slots in key order, from its permutation array when that was
// built at version v of this generation (an older one's may be torn by a
// crash, or clipped since: nothing rebuilds them at open); otherwise sorted here and, if n can be locked from v
// at once, stored with the version n will have after the unlock (v is then
// that version). An optimistic read: the caller validates v.
template <class K>
unsigned tree<K>::node_order(dnode* n, uint64_t& v, uint8_t* order) {
  if (current(v) && load_acq(&n->perm_version) == v) {
    unsigned c = std::min<unsigned>(load_acq(&n->perm_count), k_slots);
    std::memcpy(order, n->perm, c);
    return c;
  }
  unsigned c = sorted_slots(n, order);
  if (upgrade(n, v)) {
    std::memcpy(n->perm, order, c);
    store_rel(&n->perm_count, uint32_t(c));
    uint64_t after = (load_acq(&n->lock) & ~k_locked) + k_step;
    store_rel(&n->perm_version, after);
    unlock(n);  // the word becomes `after`
    v = after;
  }
  return c;
}

// The smallest key after `last`, as a probe (false: there is none).
template <class K>
bool tree<K>::after(const entry& last, probe& p, std::string& buf) const {
  if constexpr (K::k_blocks) {
    buf.assign(common::kv_key(p_, last.value));
    buf.push_back('\0');
    p = K::make(buf);
    return true;
  } else {
    if (last.key == UINT64_MAX) return false;
    p = last.key + 1;
    return true;
  }
}

template <class K>
void tree<K>::collect(probe_arg from, size_t count, std::vector<entry>& out, const key* hi) {
  struct seen {
    const dnode* n;
    uint64_t v;
  };
  thread_local std::vector<seen> visited;
  std::string buf;
restart:
  out.clear();
  visited.clear();
  probe lower = from;
  uint64_t v;
  dnode* n = locate(lower, v);
  bool first = true;  // only the first node of a walk holds keys below `lower`
  bool past = false;  // a key above hi was met
  for (;;) {
    // A node is 19 lines; its slots are read in key order, not in place
    // order, and the next node's address is in this one: asked for at
    // once, the node's lines and (while the scan will likely go on) the next
    // node's arrive together instead of one miss after another.
    common::prefetch_lines(n, sizeof(dnode), 64);  // (its first line is read)
    if (const uint64_t ahead = load_acq(&n->next);
        ahead && out.size() + size_t(std::popcount(load_acq(&n->bitmap))) < count)
      common::prefetch_lines(at(ahead), sizeof(dnode));
    uint8_t ord[k_slots];
    unsigned c = node_order(n, v, ord);
    const size_t mark = out.size();
    for (unsigned j = 0; j < c && out.size() < count; ++j) {
      const entry* s = &n->slot[ord[j]];
      entry e{__atomic_load_n(&s->key, __ATOMIC_RELAXED), load_acq(&s->value)};
      if (first && K::less(K::of(p_, e.key, e.value), lower)) continue;
      if (hi && K::less(*hi, K::of(p_, e.key, e.value))) {
        past = true;
        break;
      }
      out.push_back(e);
    }
    const uint64_t nx = load_acq(&n->next);
    if (!validate(n, v)) {  // changed while read: read it again
      out.resize(mark);
      past = false;
      v = read_begin(n);
      if (!first && !obsolete(v)) continue;  // still after everything emitted
      // The first node may have split (lower now further right) or been
      // merged: find lower's node again.
      if (safe_scan_ && !first) goto restart;
      if (!out.empty() && !after(out.back(), lower, buf)) return;
      n = locate(lower, v);
      first = true;
      continue;
    }
    if (safe_scan_) visited.push_back({n, v});
    if (past || out.size() >= count || !nx) break;
    n = at(nx);
    v = read_begin(n);
    first = false;
    if (obsolete(v)) {  // merged into the node just read, after it was read
      if (safe_scan_) goto restart;
      if (!out.empty() && !after(out.back(), lower, buf)) return;
      n = locate(lower, v);
      first = true;
    }
  }
  if (safe_scan_)
    for (const seen& s : visited)
      if (!validate(s.n, s.v)) goto restart;  // some node changed: not one snapshot
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::btree::pactree
