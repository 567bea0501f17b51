// pmemids `skiplist`: operations (see skiplist.hpp for the layout and the
// costs).
#include "pmemids/skiplist/skiplist.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "pmindex/util/hash.hpp"

namespace pmindex::pmemids::skiplist {

list::list(pm::pool& p, open_kind k, const index_config& c) : p_(p), mut_(c) {
  u64_ = c.keys() == key_kind::u64;
  max_value_ = u64_ ? 8 : static_cast<uint32_t>(c.u64("value"));
  slot_ = value_slot(c);
  kw_ = u64_ ? 8 : 16;
  root_ = open_root(p, k, k_root_magic, "skiplist", slot_, u64_, [&](root_block& r) {  // tree: the head
    r.tree = p_.alloc_or_throw(node_bytes(k_levels));
    std::memset(at(r.tree), 0, node_bytes(k_levels));
    *p_.ptr<uint32_t>(r.tree) = k_levels;
    p_.persist(at(r.tree), node_bytes(k_levels));
  });
  head_ = root_->tree;
  if (k == open_kind::created) return;
  if (!p.valid_block(head_, node_bytes(k_levels)) || height(head_) != k_levels)
    throw error(errc::corrupt, "skiplist: the head node is outside the heap or damaged");
  // After a crash the upper levels may name freed blocks: rebuilt from
  // level 0 (tx: every level was logged and rolled back with the rest).
  if (k == open_kind::dirty && !tx() && !mut_.on(mutant::no_rebuild)) rebuild();
  while (top_ < k_levels && next(head_)[top_]) ++top_;
}

uint32_t list::height_of(const key& k) {
  const uint64_t h = util::mix64(k.w ^ util::mix64(k.w1 + k.len));
  return std::min<uint32_t>(k_levels, 1 + static_cast<uint32_t>(std::countr_zero(h | (uint64_t{1} << 63))));
}

uint64_t list::descend(key k, uint64_t* preds) const {
  uint64_t x = head_;
  for (uint32_t l = top_; l-- > 0;) {
    for (uint64_t y; (y = next(x)[l]) && key_at(y) < k;) x = y;
    preds[l] = x;
  }
  return next(x)[0];
}

uint64_t list::first_ge(key k) const {
  uint64_t preds[k_levels];
  return descend(k, preds);
}

const char* list::find(key k, uint32_t* n) const {
  const uint64_t x = first_ge(k);
  if (!x || !(key_at(x) == k)) return nullptr;
  *n = meta_vlen(meta_at(x));
  return value_at(x);
}

// A node of height h holding the record; its next words are the caller's.
uint64_t list::new_node(pm::transaction* tx, uint32_t h, key k, const char* v, uint32_t n) {
  const uint64_t x = tx ? tx->alloc(node_bytes(h)) : p_.alloc_or_throw(node_bytes(h));
  char* b = at(x);
  *reinterpret_cast<uint64_t*>(b) = h;
  auto* w = reinterpret_cast<uint64_t*>(b + 8);
  w[0] = k.w;
  if (kw_ == 16) w[1] = k.w1;
  meta_at(x) = make_meta(k.len, n);
  if (n) std::memcpy(value_at(x), v, n);
  return x;
}

// Persist: the upper levels [from, height) of x linked after their
// predecessors; hints, flushed without a fence.
void list::link_upper(const uint64_t* preds, uint64_t x, uint32_t from) {
  for (uint32_t l = from; l < height(x); ++l) {
    uint64_t* w = &next(preds[l])[l];
    *w = x;
    p_.flush(w, 8);
  }
}

bool list::insert(key k, const char* v, uint32_t n) {
  const uint32_t h = height_of(k);
  top_ = std::max(top_, h);
  uint64_t preds[k_levels];
  const uint64_t after = descend(k, preds);
  if (after && key_at(after) == k) return false;
  if (tx()) {
    pm::transaction tx(p_);
    const uint64_t x = new_node(&tx, h, k, v, n);
    for (uint32_t l = 0; l < h; ++l) {
      uint64_t* w = &next(preds[l])[l];
      next(x)[l] = *w;
      if (l == 0 && mut_.on(mutant::tx_unlogged_link))
        *w = x;
      else
        tx.set(w, x);
    }
    tx.commit();
    return true;
  }
  const uint64_t x = new_node(nullptr, h, k, v, n);
  for (uint32_t l = 0; l < h; ++l) next(x)[l] = next(preds[l])[l];
  uint64_t* w0 = &next(preds[0])[0];
  if (mut_.on(mutant::link_before_flush)) p_.store_persist(w0, x);
  p_.persist(at(x), node_bytes(h));
  p_.store_persist(w0, x);  // the commit
  link_upper(preds, x, 1);
  return true;
}

bool list::update(key k, const char* v, uint32_t n) {
  uint64_t preds[k_levels];
  const uint64_t x = descend(k, preds);
  if (!x || !(key_at(x) == k)) return false;
  if (update_in_place(p_, &meta_at(x), k.len, v, n, u64_)) return true;
  // A copy with the new value takes the node's place at every level.
  const uint32_t h = height(x);
  const uint64_t y = new_node(nullptr, h, k, v, n);
  std::memcpy(next(y), next(x), 8 * h);
  p_.persist(at(y), node_bytes(h));
  p_.store_persist(&next(preds[0])[0], y);
  link_upper(preds, y, 1);
  p_.free(x);
  return true;
}

bool list::remove(key k) {
  uint64_t preds[k_levels];
  const uint64_t x = descend(k, preds);
  if (!x || !(key_at(x) == k)) return false;
  const uint32_t h = height(x);
  if (tx()) {
    pm::transaction tx(p_);
    for (uint32_t l = 0; l < h; ++l) tx.set(&next(preds[l])[l], next(x)[l]);
    tx.free(x);
    tx.commit();
    return true;
  }
  p_.store_persist(&next(preds[0])[0], next(x)[0]);  // the commit
  for (uint32_t l = 1; l < h; ++l) {
    uint64_t* w = &next(preds[l])[l];
    *w = next(x)[l];
    p_.flush(w, 8);
  }
  // Level 0 no longer reaches x; an upper level's unlink, if a crash lost
  // it, is rebuilt at recovery.
  p_.free(x);
  return true;
}

// --- recovery, check, trace, stats

// Walks level 0 from the head: every node a valid block, keys strictly
// rising (so the walk ends). Returns why not, or "".
std::string list::walk(uint64_t* records, bool trace_only, pm::pool::trace_sink* s) {
  const uint64_t hdr = 16 + kw_ + slot_;
  *records = 0;
  key last{};
  for (uint64_t x = next(head_)[0]; x; x = next(x)[0]) {
    if (!p_.valid_block(x, hdr + 8) || height(x) < 1 || height(x) > k_levels ||
        !p_.valid_block(x, node_bytes(height(x))))
      return "node offset " + std::to_string(x) + " outside the heap or of a bad height";
    key k = key_at(x);
    if (*records && !(last < k)) return "keys out of order at level 0";
    last = k;
    ++*records;
    if (s) s->add(x, node_bytes(height(x)));
    if (trace_only) continue;
    const uint64_t m = meta_at(x);
    if (!meta_live(m) || k.len > k_max_key || (u64_ && k.len != 8) || meta_vlen(m) > max_value_ ||
        (u64_ && meta_vlen(m) != 8))
      return "record with key length " + std::to_string(k.len) + ", value length " + std::to_string(meta_vlen(m));
    if (!u64_ && !key_canonical(k)) return "key with bytes past its length";
  }
  return "";
}

void list::rebuild() {
  uint64_t records;
  if (auto why = walk(&records, false, nullptr); !why.empty())
    throw error(errc::corrupt, "skiplist: " + why + " during recovery");
  // The nodes and heights the walk checked, taken before any word is
  // written: in a damaged pool two nodes may overlap, and linking one would
  // then change the other's height or next pointer under the loop.
  std::vector<std::pair<uint64_t, uint32_t>> nodes;
  nodes.reserve(records);
  for (uint64_t x = next(head_)[0]; x && nodes.size() < records; x = next(x)[0]) nodes.push_back({x, height(x)});
  uint64_t last[k_levels];
  std::fill(last, last + k_levels, head_);
  for (auto [x, h] : nodes)
    for (uint32_t l = 1; l < h; ++l) {
      next(last[l])[l] = x;
      p_.flush(&next(last[l])[l], 8);
      last[l] = x;
    }
  for (uint32_t l = 1; l < k_levels; ++l) {
    next(last[l])[l] = 0;
    p_.flush(&next(last[l])[l], 8);
  }
  p_.fence();
}

check_result list::check() {
  uint64_t records;
  if (auto why = walk(&records, false, nullptr); !why.empty()) return check_result::fail("skiplist: " + why);
  // Level l holds exactly the nodes of height > l, in level-0 order (one
  // walk; an upper word is followed only once it equals a checked node).
  uint64_t last[k_levels];
  std::fill(last, last + k_levels, head_);
  for (uint64_t x = next(head_)[0];; x = next(x)[0]) {
    for (uint32_t l = 1; l < (x ? height(x) : k_levels); ++l) {
      if (next(last[l])[l] != x) return check_result::fail("skiplist: level " + std::to_string(l) + " skips or adds a node");
      last[l] = x;
    }
    if (!x) return {};
  }
}

void list::trace(pm::pool::trace_sink& s) {
  s.add(p_.root(), sizeof(root_block));
  s.add(head_, node_bytes(k_levels));
  uint64_t records;
  if (auto why = walk(&records, true, &s); !why.empty())
    throw error(errc::corrupt, "skiplist: " + why + " during recovery");
}

index_stats list::stats() {
  index_stats st;
  uint64_t levels = 0;
  for (uint64_t x = next(head_)[0]; x; x = next(x)[0]) ++st.records, levels += height(x);
  add_pool_usage(st, p_);
  st.extra = {{"levels", double(top_)},
              {"avg_height", st.records ? double(levels) / double(st.records) : 0.0}};
  return st;
}

}  // namespace pmindex::pmemids::skiplist
