// uTree (see utree.hpp): open and recovery (the DRAM leaves rebuilt from
// the list), and the public calls of both key kinds.
#include <chrono>

#include "hybrid/utree/utree.hpp"
#include "common/root_block.hpp"

namespace pmindex::hybrid::utree {

using common::load_acq;

namespace {
constexpr uint32_t k_layer_fanout = 64;  // separators per DRAM search-layer node
}  // namespace

template <class K>
tree<K>::tree(pm::pool& p, open_kind kind, const index_config& cfg)
    : base(p), p_(p), mut_(cfg), layer_(k_layer_fanout) {
  cap_ = unsigned(cfg.u64("leaf"));
  try {
    attach(kind);
  } catch (...) {  // std::bad_alloc, errc::corrupt: no destructor runs, so the DRAM leaves go here
    free_leaves();
    throw;
  }
}

template <class K>
void tree<K>::attach(open_kind kind) {
  if (kind == open_kind::created) {
    const uint64_t h = p_.alloc_or_throw(sizeof(lnode));
    std::memset(p_.template ptr<void>(h), 0, sizeof(lnode));
    p_.persist(p_.template ptr<void>(h), sizeof(lnode));  // durable before the root names it
    root_ = common::create_root<root_block>(p_, k_magic, [&](root_block& r) { r.head = h; });
    head_ = h;
    first_ = new_leaf(K::k_min);
    layer_.build({{K::k_min, reinterpret_cast<uint64_t>(first_)}});
  } else {
    root_ = common::attach_root<root_block>(p_, k_magic, "utree");
    head_ = root_->head;
    if (!node_ok(head_)) corrupt("the list head lies outside the heap");
    rebuild(kind == open_kind::dirty);
  }
}

template <class K>
tree<K>::~tree() {
  free_leaves();
}

template <class K>
void tree<K>::free_leaves() noexcept {
  for (leaf* l = first_; l;) {
    leaf* nx = l->next;
    free_leaf(l);
    l = nx;
  }
  first_ = nullptr;
  for (auto& [l, e] : grave_) free_leaf(l);
  grave_.clear();
}

// Every open: one walk of the list, each link, (bytes) kv block and key
// order checked before it is trusted; DIRTY bits cleared (a dirty open may
// find them; they mean nothing once the line is in the pool). Leaves are
// filled to 3/4 so the first inserts do not split them all. No pool
// allocation (a throw, e.g. std::bad_alloc for a DRAM leaf, frees them: attach()).
template <class K>
void tree<K>::rebuild(bool dirty) {
  (void)dirty;  // a clean close may also leave a DIRTY bit (its clearing store is not flushed)
  const auto t0 = std::chrono::steady_clock::now();
  const unsigned fill = cap_ * 3 / 4 > 0 ? cap_ * 3 / 4 : 1;
  std::vector<std::pair<key, uint64_t>> lows;
  first_ = new_leaf(K::k_min);
  lows.emplace_back(K::k_min, reinterpret_cast<uint64_t>(first_));
  leaf* cur = first_;
  key last{};
  bool flushed = false;
  const uint64_t limit = p_.size() / sizeof(lnode);
  uint64_t n = 0;
  for (uint64_t off = head_;;) {
    lnode* x = node(off);
    const uint64_t w = x->next;
    if (w & k_flag_bits & ~k_dirty) corrupt("a next word with unknown flags");
    if (w & k_dirty) {
      x->next = w & ~k_flag_bits;
      p_.flush(&x->next, 8);
      flushed = true;
    }
    const uint64_t nx = w & ~k_flag_bits;
    if (!nx) break;
    if (!node_ok(nx)) corrupt("a list link outside the heap");
    if (++n > limit) corrupt("the list has a cycle");
    const lnode* y = node(nx);
    if constexpr (K::k_blocks) {
      if (!K::valid_record(p_, y->value)) corrupt("a record block outside the heap");
      if (detail::key_prefix(common::kv_key(p_, y->value)) != y->key)
        corrupt("a node's key word does not match its record block");
    }
    const key k = K::of(p_, y->key, y->value);
    if (n > 1 && !K::less(last, k)) corrupt("list keys out of order at " + K::describe(k));
    if (cur->count == fill) {
      leaf* l = new_leaf(k);
      l->prev = cur;
      cur->next = l;
      if constexpr (!K::k_blocks) cur->high = l->low;
      lows.emplace_back(l->low, reinterpret_cast<uint64_t>(l));
      cur = l;
    }
    kw(cur)[cur->count] = y->key;
    nd(cur)[cur->count++] = nx;
    last = k;
    off = nx;
  }
  if (flushed) p_.fence();
  layer_.build(lows);
  rebuild_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---------------------------------------------------------------- calls

// The u64 calls: native with keys=u64, through the byte calls with
// keys=bytes. Every call is pinned (removed nodes and leaves are retired).
template <class K>
bool tree<K>::insert(uint64_t k, uint64_t v) {
  if constexpr (K::k_blocks) {
    return bytes_index::insert(k, v);
  } else {
    auto g = p_.pin();
    return insert_word(k, v);
  }
}

template <class K>
bool tree<K>::update(uint64_t k, uint64_t v) {
  if constexpr (K::k_blocks) {
    return bytes_index::update(k, v);
  } else {
    auto g = p_.pin();
    uint64_t old;
    return update_word(k, v, old);
  }
}

template <class K>
bool tree<K>::remove(uint64_t k) {
  if constexpr (K::k_blocks) {
    return bytes_index::remove(k);
  } else {
    auto g = p_.pin();
    uint64_t old;
    return remove_word(k, old);
  }
}

template <class K>
std::optional<uint64_t> tree<K>::lookup(uint64_t k) {
  if constexpr (K::k_blocks) {
    return bytes_index::lookup(k);
  } else {
    auto g = p_.pin();
    uint64_t w;
    if (!lookup_word(k, w)) return std::nullopt;
    return w;
  }
}

template <class K>
bool tree<K>::lookup(std::string_view k, std::string* v) {
  this->check_key(k);
  if constexpr (!K::k_blocks) {
    auto r = lookup(key_u64(k));
    if (r && v) v->assign(value_bytes(*r));
    return r.has_value();
  } else {
    auto g = p_.pin();
    uint64_t kv;
    if (!lookup_word(K::make(k), kv)) return false;
    if (v) v->assign(common::kv_value(p_, kv));  // blocks are immutable and pinned
    return true;
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::utree
