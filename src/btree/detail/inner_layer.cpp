#include "btree/detail/inner_layer.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_map>

#include "common/prefetch.hpp"
#include "pmindex/error.hpp"

namespace pmindex::btree::detail {

namespace {
template <class T>
T ld(const T* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <class T>
void st(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
// Room for one more element, grown geometrically: reserve(size() + 1)
// reallocates exactly, so the whole vector was copied at every push (an
// inner node made per ~7 leaf splits: quadratic in the number of nodes).
template <class V>
void reserve_one(V& v) {
  if (v.size() == v.capacity()) v.reserve(std::max<size_t>(16, 2 * v.capacity()));
}
}  // namespace

template <class K>
inner_layer<K>::inner_layer(uint32_t capacity) : cap_(capacity < 3 ? 3 : capacity) {}

template <class K>
inner_layer<K>::~inner_layer() {
  clear();
}

template <class K>
void inner_layer<K>::clear() {
  for (node* n : nodes_) ::operator delete(n, k_node_align);
  nodes_.clear();
  arena_.clear();
  arena_left_ = arena_bytes_ = 0;
  root_ = nullptr;
}

template <class K>
typename inner_layer<K>::key inner_layer<K>::key_at(const node* n, uint32_t i) const noexcept {
  if constexpr (K::k_refs)
    return K::from_words(ld(&keys(n)[i]), ld(&refs(n)[i]));
  else
    return K::from_words(ld(&keys(n)[i]), 0);
}

template <class K>
void inner_layer<K>::set_key(node* n, uint32_t i, const key& k) noexcept {
  st(&keys(n)[i], K::word(k));
  if constexpr (K::k_refs) st(&refs(n)[i], K::ref(k));
}

template <class K>
typename inner_layer<K>::key inner_layer<K>::own(const key& k) {
  if constexpr (!K::k_refs || !K::k_dram_separators) {
    return k;
  } else {
    std::string_view v = k.view();
    if (v.empty()) return K::k_min;
    uint64_t n = (common::kv_block_bytes(v.size(), 0) + 7) & ~uint64_t{7};
    if (n > arena_left_) {  // a new chunk; the rest of the old one is wasted
      uint64_t c = std::max<uint64_t>(n, 64 << 10);
      reserve_one(arena_);  // first: the chunk cannot leak
      arena_.emplace_back(new char[c]);
      arena_next_ = arena_.back().get();
      arena_left_ = c;
      arena_bytes_ += c;
    }
    auto* b = reinterpret_cast<common::kv_block*>(arena_next_);
    b->klen = static_cast<uint32_t>(v.size());
    b->vlen = 0;
    std::memcpy(b->data, v.data(), v.size());
    arena_next_ += n;
    arena_left_ -= n;
    return {k.pfx, b, {}};
  }
}

template <class K>
typename inner_layer<K>::node* inner_layer<K>::make(uint32_t level) {
  // Zeroed: a reader that sees a count ahead of the filled slots finds 0.
  reserve_one(nodes_);  // first: the push below cannot throw, the node cannot leak
  void* m = ::operator new(node_bytes(), k_node_align);
  std::memset(m, 0, node_bytes());
  node* n = static_cast<node*>(m);
  n->level = level;
  nodes_.push_back(n);
  return n;
}

template <class K>
uint32_t inner_layer<K>::height() const noexcept {
  const node* r = ld(&root_);
  return r ? r->level : 0;
}

template <class K>
uint32_t inner_layer<K>::position(const node* n, uint32_t count, probe_arg key) const noexcept {
  if (count > cap_) count = cap_;  // a torn read never indexes out of the node
  const uint64_t* k = keys(n);
  uint32_t lo = 0, hi = count;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (K::le(ld(&k[mid]), K::k_refs ? ld(&refs(n)[mid]) : 0, key))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class K>
uint32_t inner_layer<K>::position_before(const node* n, uint32_t count, probe_arg key) const noexcept {
  if (count > cap_) count = cap_;
  const uint64_t* k = keys(n);
  uint32_t lo = 0, hi = count;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (K::lt(ld(&k[mid]), K::k_refs ? ld(&refs(n)[mid]) : 0, key))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class K>
uint64_t inner_layer<K>::find_before(probe_arg key) const noexcept {
  const node* n = ld(&root_);
  if (!n) return 0;
  for (;;) {
    uint64_t c = ld(&kids(n)[position_before(n, ld(&n->count), key)]);
    if (!c || n->level == 1) return c;
    n = reinterpret_cast<const node*>(c);
  }
}

template <class K>
uint64_t inner_layer<K>::find(probe_arg key) const noexcept {
  const node* n = ld(&root_);
  if (!n) return 0;
  for (;;) {
    // A small node's lines at once: the binary search's probes and the
    // child slot lie on different lines, each a miss of its own when asked
    // for in turn (LB+-Tree's original does the same). A large node (FPTree's
    // 128 keys: 33 lines, 8 of them read) is not: the lines it would ask for
    // in vain slowed FPTree's writes.
    if (node_bytes() <= k_prefetch_node_bytes) common::prefetch_lines(n, node_bytes());
    uint32_t pos = position(n, ld(&n->count), key);
    uint64_t c = ld(&kids(n)[pos]);
    if (!c || n->level == 1) return c;
    n = reinterpret_cast<const node*>(c);
  }
}

template <class K>
uint64_t inner_layer<K>::cursor::seek(const inner_layer& layer, probe_arg key) noexcept {
  l_ = &layer;
  depth_ = 0;
  const node* n = ld(&layer.root_);
  if (!n) return 0;
  for (;;) {
    const uint32_t pos = layer.position(n, ld(&n->count), key);
    const uint64_t c = ld(&layer.kids(n)[pos]);
    if (!c || depth_ == k_depth) {
      depth_ = 0;  // next() answers 0
      return c;
    }
    path_[depth_] = n;
    at_[depth_++] = pos;
    if (n->level == 1) return c;
    n = reinterpret_cast<const node*>(c);
  }
}

// Racy like find(): a count torn with a writer is clamped to the node, each
// slot read is 0, a leaf offset (level 1) or a node of the level below
// (nodes are never freed), and a wrong answer costs only a useless prefetch.
template <class K>
uint64_t inner_layer<K>::cursor::next() noexcept {
  if (depth_ == 0) return 0;
  auto last = [&](const node* n) { return std::min(ld(&n->count), l_->cap_); };
  unsigned d = depth_;
  if (at_[d - 1] < last(path_[d - 1])) return ld(&l_->kids(path_[d - 1])[++at_[d - 1]]);
  // Up to the deepest ancestor with a child right of the path, then down its
  // leftmost edge to the next bottom node.
  while (--d > 0 && at_[d - 1] >= last(path_[d - 1])) {
  }
  depth_ = 0;  // until the walk below succeeds
  if (d == 0) return 0;  // the path was the rightmost: no leaves follow
  const node* m = path_[d - 1];
  for (uint64_t c = ld(&l_->kids(m)[++at_[d - 1]]);; c = ld(&l_->kids(m)[0])) {
    const node* ch = reinterpret_cast<const node*>(c);
    if (!c || ch->level + 1 != m->level) return 0;
    path_[d] = ch;
    at_[d++] = 0;
    m = ch;
    if (ch->level == 1) break;
  }
  depth_ = d;
  return ld(&l_->kids(m)[0]);
}

template <class K>
unsigned inner_layer<K>::cursor::list(uint64_t* out, unsigned n) noexcept {
  unsigned got = 0;
  while (got < n && depth_) {
    // The rest of the bottom node in one loop, then next() for the walk
    // (one next() call per hint ran LB+-Tree's scan100 ~3-6% slower).
    const node* b = path_[depth_ - 1];
    uint32_t& i = at_[depth_ - 1];
    for (const uint32_t last = std::min(ld(&b->count), l_->cap_); got < n && i < last; ++got) {
      out[got] = ld(&l_->kids(b)[++i]);
      if (!out[got]) {
        depth_ = 0;
        return got;
      }
    }
    if (got < n) {
      if (!(out[got] = next())) break;
      ++got;
    }
  }
  return got;
}

template <class K>
void inner_layer<K>::build(const std::vector<std::pair<key, uint64_t>>& leaves) {
  clear();
  // Children per node: ~7/8 full, at least 2.
  const size_t fill = std::max<size_t>(2, (size_t{cap_} + 1) * 7 / 8);
  // (min key, child) of the level being grouped.
  std::vector<std::pair<key, uint64_t>> level = leaves;
  for (auto& e : level) e.first = own(e.first);
  uint32_t lv = 1;
  do {
    std::vector<std::pair<key, uint64_t>> up;
    for (size_t i = 0, end; i < level.size(); i = end) {
      end = std::min(level.size(), i + fill);
      // Avoid a last node with a single child when the previous can share.
      if (level.size() - end == 1 && end - i > 2) --end;
      node* n = make(lv);
      for (size_t j = i; j < end; ++j) {
        if (j > i) set_key(n, uint32_t(j - i - 1), level[j].first);
        kids(n)[j - i] = level[j].second;
      }
      n->count = static_cast<uint32_t>(end - i - 1);
      up.emplace_back(level[i].first, reinterpret_cast<uint64_t>(n));
    }
    level.swap(up);
    ++lv;
  } while (level.size() > 1);
  st(&root_, reinterpret_cast<node*>(level[0].second));
}

template <class K>
void inner_layer<K>::insert(const key& low_key, uint64_t off, bool may_lag) {
  std::lock_guard lk(mu_);
  auto bump = [&] { __atomic_store_n(&version_, version_ + 1, __ATOMIC_RELEASE); };
  bool odd = false;
  try {
    const key low = own(low_key);
    std::vector<node*> path;
    for (node* n = root_;;) {
      path.push_back(n);
      if (n->level == 1) break;
      n = reinterpret_cast<node*>(kids(n)[position(n, n->count, K::probe_of(low))]);
    }
    __atomic_store_n(&version_, version_ + 1, __ATOMIC_RELAXED);
    odd = true;
    std::atomic_thread_fence(std::memory_order_release);  // odd before any slot changes
    // Every allocation (a split's scratch and new nodes, at each level) comes
    // before the first store, so a bad_alloc leaves the layer as it was.
    insert_at(path, path.size() - 1, low, off);
  } catch (const std::bad_alloc&) {
    // lag_ before version_ moves on: a reader that reads the new version
    // sees lag_, so no reader that found a route before counts it exact.
    if (may_lag) __atomic_store_n(&lag_, 1, __ATOMIC_RELAXED);
    if (!odd) bump();  // the version moves by 2 either way
    bump();
    if (!may_lag) throw;
    return;
  }
  bump();
}

// Inserts (key, child) into path[depth], child to the right of key. Full
// nodes split; the right half is published in the parent before the left
// half shrinks, so concurrent readers always find a route.
template <class K>
void inner_layer<K>::insert_at(std::vector<node*>& path, size_t depth, const key& sep, uint64_t child) {
  node* n = path[depth];
  uint32_t cnt = n->count;
  uint32_t pos = position(n, cnt, K::probe_of(sep));
  uint64_t* c = kids(n);
  if (cnt < cap_) {
    // Shift right from the end, then fill the hole, then publish the count.
    for (uint32_t i = cnt; i > pos; --i) {
      set_key(n, i, key_at(n, i - 1));
      st(&c[i + 1], c[i]);
    }
    set_key(n, pos, sep);
    st(&c[pos + 1], child);
    st(&n->count, cnt + 1);
    return;
  }
  // Split: the cap + 1 keys (with the new one) around the middle key.
  std::vector<key> tk(cap_ + 1);
  std::vector<uint64_t> tc(cap_ + 2);
  for (uint32_t i = 0, j = 0; i <= cap_; ++i) tk[i] = i == pos ? sep : key_at(n, j++);
  for (uint32_t i = 0, j = 0; i <= cap_ + 1; ++i) tc[i] = i == pos + 1 ? child : c[j++];
  uint32_t m = (cap_ + 1) / 2;  // tk[m] moves up
  node* r = make(n->level);
  for (uint32_t i = m + 1; i <= cap_; ++i) set_key(r, i - m - 1, tk[i]);
  for (uint32_t i = m + 1; i <= cap_ + 1; ++i) kids(r)[i - m - 1] = tc[i];
  r->count = cap_ - m;
  if (depth == 0) {
    node* nr = make(n->level + 1);
    set_key(nr, 0, tk[m]);
    kids(nr)[0] = reinterpret_cast<uint64_t>(n);
    kids(nr)[1] = reinterpret_cast<uint64_t>(r);
    nr->count = 1;
    st(&root_, nr);
  } else {
    insert_at(path, depth - 1, tk[m], reinterpret_cast<uint64_t>(r));
  }
  // Shrink the left half: count first (readers then stay within the kept
  // prefix), then rewrite the kept slots (the new key may land in them).
  st(&n->count, std::min(cnt, m));
  for (uint32_t i = 0; i < m; ++i) set_key(n, i, tk[i]);
  for (uint32_t i = 0; i <= m; ++i) st(&c[i], tc[i]);
  st(&n->count, m);
}

template <class K>
void inner_layer<K>::drop_first(node* n) {
  uint64_t* c = kids(n);
  uint32_t cnt = n->count;
  for (uint32_t j = 0; j < cnt; ++j) {
    st(&c[j], c[j + 1]);
    if (j + 1 < cnt) set_key(n, j, key_at(n, j + 1));
  }
  st(&n->count, cnt - 1);
}

template <class K>
void inner_layer<K>::erase(const key& low) noexcept {
  std::lock_guard lk(mu_);
  // The descent of low, and the deepest node on it that holds low as a
  // separator (position p: key p - 1 is low, child p the subtree below it).
  // A fixed array, no allocation: callers erase after unlinking the leaf,
  // when a bad_alloc could no longer be undone (a layer naming a dead leaf
  // sends its readers back to it forever). A level per split of the root,
  // each splitting a full node in two: far fewer than 64 levels.
  std::pair<node*, uint32_t> path[64];
  size_t depth = 0, a = SIZE_MAX;
  for (node* n = root_;;) {
    uint32_t p = position(n, n->count, K::probe_of(low));
    if (p > 0 && !K::less(key_at(n, p - 1), low)) a = depth;
    PMINDEX_ASSERT(depth < 64);
    path[depth++] = {n, p};
    if (n->level == 1) break;
    n = reinterpret_cast<node*>(kids(n)[p]);
  }
  if (a == SIZE_MAX) return;  // not a separator (the head's low key)
  auto [an, ap] = path[a];
  __atomic_store_n(&version_, version_ + 1, __ATOMIC_RELAXED);
  std::atomic_thread_fence(std::memory_order_release);
  // Below an, the subtree of child ap starts with the leaf: the deepest node
  // of its leftmost chain that has a second child gives up its first child,
  // and its first key replaces low in an. If the chain is single children
  // all the way down, an loses the separator and the child.
  size_t i = depth;
  while (--i > a && path[i].first->count == 0) {
  }
  if (i > a) {
    node* n = path[i].first;
    set_key(an, ap - 1, key_at(n, 0));  // [low, that key) now routes to the leaf on the left
    drop_first(n);
  } else {
    uint64_t* c = kids(an);
    uint32_t cnt = an->count;
    for (uint32_t j = ap - 1; j + 1 < cnt; ++j) {
      set_key(an, j, key_at(an, j + 1));
      st(&c[j + 1], c[j + 2]);
    }
    st(&an->count, cnt - 1);
  }
  __atomic_store_n(&version_, version_ + 1, __ATOMIC_RELEASE);
}

template <class K>
std::string inner_layer<K>::check_node(const node* n, const key& lo, bool has_hi, const key& hi) const {
  const uint64_t* c = kids(n);
  if (n->count > cap_) return "inner node count above capacity";
  for (uint32_t i = 0; i < n->count; ++i) {
    key k = key_at(n, i);
    if (K::less(k, lo) || (has_hi && !K::less(k, hi))) return "inner key outside its parent's range";
    if (i && !K::less(key_at(n, i - 1), k)) return "inner keys out of order";
  }
  for (uint32_t i = 0; i <= n->count; ++i) {
    if (!c[i]) return "inner node with a null child";
    if (n->level == 1) continue;
    const node* ch = reinterpret_cast<const node*>(c[i]);
    if (ch->level + 1 != n->level) return "inner child on the wrong level";
    auto e = check_node(ch, i ? key_at(n, i - 1) : lo, i < n->count || has_hi, i < n->count ? key_at(n, i) : hi);
    if (!e.empty()) return e;
  }
  return {};
}

template <class K>
std::string inner_layer<K>::check(const std::vector<std::pair<key, uint64_t>>& leaves) const {
  if (!root_) return "inner layer has no root";
  auto e = check_node(root_, K::k_min, false, K::k_min);
  if (!e.empty()) return e;
  if (!__atomic_load_n(&lag_, __ATOMIC_RELAXED)) {
    for (auto& [low, off] : leaves)
      if (find(K::probe_of(low)) != off) return "inner layer does not route key " + K::describe(low) + " to its leaf";
    return {};
  }
  // After a lost insert (note_lag()): each leaf's low key routes to it or to a
  // leaf on its left, from which readers move right.
  std::unordered_map<uint64_t, size_t> at;
  for (size_t i = 0; i < leaves.size(); ++i) at[leaves[i].second] = i;
  for (size_t i = 0; i < leaves.size(); ++i) {
    auto it = at.find(find(K::probe_of(leaves[i].first)));
    if (it == at.end() || it->second > i)
      return "inner layer routes key " + K::describe(leaves[i].first) + " right of its leaf";
  }
  return {};
}

template class inner_layer<u64_keys>;
template class inner_layer<byte_keys>;

}  // namespace pmindex::btree::detail
