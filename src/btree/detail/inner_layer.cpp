#include "btree/detail/inner_layer.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <new>

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
}  // namespace

inner_layer::inner_layer(uint32_t capacity) : cap_(capacity < 3 ? 3 : capacity) {}

inner_layer::~inner_layer() { clear(); }

void inner_layer::clear() {
  for (node* n : nodes_) ::operator delete(n);
  nodes_.clear();
  root_ = nullptr;
}

inner_layer::node* inner_layer::make(uint32_t level) {
  // Zeroed: a reader that sees a count ahead of the filled slots finds 0.
  void* m = ::operator new(node_bytes());
  std::memset(m, 0, node_bytes());
  node* n = static_cast<node*>(m);
  n->level = level;
  nodes_.push_back(n);
  return n;
}

uint32_t inner_layer::height() const noexcept {
  const node* r = ld(&root_);
  return r ? r->level : 0;
}

uint32_t inner_layer::position(const node* n, uint32_t count, uint64_t key) const noexcept {
  if (count > cap_) count = cap_;  // a torn read never indexes out of the node
  const uint64_t* k = keys(n);
  uint32_t lo = 0, hi = count;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (ld(&k[mid]) <= key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

uint64_t inner_layer::find(uint64_t key) const noexcept {
  const node* n = ld(&root_);
  if (!n) return 0;
  for (;;) {
    uint32_t pos = position(n, ld(&n->count), key);
    uint64_t c = ld(&kids(n)[pos]);
    if (!c || n->level == 1) return c;
    n = reinterpret_cast<const node*>(c);
  }
}

void inner_layer::build(const std::vector<std::pair<uint64_t, uint64_t>>& leaves) {
  clear();
  // Children per node: ~7/8 full, at least 2.
  const size_t fill = std::max<size_t>(2, (size_t{cap_} + 1) * 7 / 8);
  // (min key, child) of the level being grouped.
  std::vector<std::pair<uint64_t, uint64_t>> level = leaves;
  uint32_t lv = 1;
  do {
    std::vector<std::pair<uint64_t, uint64_t>> up;
    for (size_t i = 0, end; i < level.size(); i = end) {
      end = std::min(level.size(), i + fill);
      // Avoid a last node with a single child when the previous can share.
      if (level.size() - end == 1 && end - i > 2) --end;
      node* n = make(lv);
      for (size_t j = i; j < end; ++j) {
        if (j > i) keys(n)[j - i - 1] = level[j].first;
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

void inner_layer::insert(uint64_t low, uint64_t off) {
  std::lock_guard lk(mu_);
  std::vector<node*> path;
  node* n = root_;
  for (;;) {
    path.push_back(n);
    if (n->level == 1) break;
    n = reinterpret_cast<node*>(kids(n)[position(n, n->count, low)]);
  }
  __atomic_store_n(&version_, version_ + 1, __ATOMIC_RELAXED);
  std::atomic_thread_fence(std::memory_order_release);  // odd before any slot changes
  insert_at(path, path.size() - 1, low, off);
  __atomic_store_n(&version_, version_ + 1, __ATOMIC_RELEASE);
}

// Inserts (key, child) into path[depth], child to the right of key. Full
// nodes split; the right half is published in the parent before the left
// half shrinks, so concurrent readers always find a route.
void inner_layer::insert_at(std::vector<node*>& path, size_t depth, uint64_t key, uint64_t child) {
  node* n = path[depth];
  uint32_t cnt = n->count;
  uint32_t pos = position(n, cnt, key);
  uint64_t* k = keys(n);
  uint64_t* c = kids(n);
  if (cnt < cap_) {
    // Shift right from the end, then fill the hole, then publish the count.
    for (uint32_t i = cnt; i > pos; --i) {
      st(&k[i], k[i - 1]);
      st(&c[i + 1], c[i]);
    }
    st(&k[pos], key);
    st(&c[pos + 1], child);
    st(&n->count, cnt + 1);
    return;
  }
  // Split: the cap + 1 keys (with the new one) around the middle key.
  std::vector<uint64_t> tk(cap_ + 1), tc(cap_ + 2);
  for (uint32_t i = 0, j = 0; i <= cap_; ++i) tk[i] = i == pos ? key : k[j++];
  for (uint32_t i = 0, j = 0; i <= cap_ + 1; ++i) tc[i] = i == pos + 1 ? child : c[j++];
  uint32_t m = (cap_ + 1) / 2;  // tk[m] moves up
  node* r = make(n->level);
  for (uint32_t i = m + 1; i <= cap_; ++i) keys(r)[i - m - 1] = tk[i];
  for (uint32_t i = m + 1; i <= cap_ + 1; ++i) kids(r)[i - m - 1] = tc[i];
  r->count = cap_ - m;
  if (depth == 0) {
    node* nr = make(n->level + 1);
    keys(nr)[0] = tk[m];
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
  for (uint32_t i = 0; i < m; ++i) st(&k[i], tk[i]);
  for (uint32_t i = 0; i <= m; ++i) st(&c[i], tc[i]);
  st(&n->count, m);
}

std::string inner_layer::check_node(const node* n, uint64_t lo, bool has_hi, uint64_t hi) const {
  const uint64_t* k = keys(n);
  const uint64_t* c = kids(n);
  if (n->count > cap_) return "inner node count above capacity";
  for (uint32_t i = 0; i < n->count; ++i) {
    if (k[i] < lo || (has_hi && k[i] >= hi)) return "inner key outside its parent's range";
    if (i && k[i - 1] >= k[i]) return "inner keys out of order";
  }
  for (uint32_t i = 0; i <= n->count; ++i) {
    if (!c[i]) return "inner node with a null child";
    if (n->level == 1) continue;
    const node* ch = reinterpret_cast<const node*>(c[i]);
    if (ch->level + 1 != n->level) return "inner child on the wrong level";
    auto e = check_node(ch, i ? k[i - 1] : lo, i < n->count || has_hi, i < n->count ? k[i] : hi);
    if (!e.empty()) return e;
  }
  return {};
}

std::string inner_layer::check(const std::vector<std::pair<uint64_t, uint64_t>>& leaves) const {
  if (!root_) return "inner layer has no root";
  auto e = check_node(root_, 0, false, 0);
  if (!e.empty()) return e;
  for (auto& [low, off] : leaves)
    if (find(low) != off) return "inner layer does not route key " + std::to_string(low) + " to its leaf";
  return {};
}

}  // namespace pmindex::btree::detail
