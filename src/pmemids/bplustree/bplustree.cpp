// pmemids `bplustree`: operations (see bplustree.hpp for the layout and the
// costs).
#include "pmemids/bplustree/bplustree.hpp"

#include <algorithm>
#include <bit>
#include <cstring>


namespace pmindex::pmemids::bplustree {

tree::tree(pm::pool& p, open_kind k, const index_config& c) : p_(p), mut_(c) {
  u64_ = c.keys() == key_kind::u64;
  max_value_ = u64_ ? 8 : static_cast<uint32_t>(c.u64("value"));
  const uint32_t slot = value_slot(c);
  kw_ = u64_ ? 8 : 16;
  ik_ = u64_ ? 8 : 24;
  rec_ = kw_ + 8 + slot;
  leaf_bytes_ = sizeof(head) + k_leaf * rec_;
  inner_bytes_ = sizeof(head) + k_inner * ik_ + (k_inner + 1) * 8;
  root_ = open_root(p, k, k_root_magic, "bplustree", slot, u64_, [&](root_block& r) {
    writer w{*this, nullptr};
    r.tree = w.fresh_node(true);
    p_.persist(at(r.tree), sizeof(head));
  });
  if (!p.valid_block(root_->tree, sizeof(head)) || at(root_->tree)->leaf > 1 ||
      !p.valid_block(root_->tree, node_size(at(root_->tree)->leaf)))
    throw error(errc::corrupt, "bplustree: the root block does not match the pool's parameters");
}

// --- writer

uint64_t tree::writer::fresh_node(bool leaf) {
  const uint64_t x = tx ? tx->alloc(t.node_size(leaf)) : t.p_.alloc_or_throw(t.node_size(leaf));
  *t.at(x) = head{leaf ? 1u : 0u, 0, 0};
  return x;
}

// persist: the new nodes durable, then the one 8-byte store that links
// them; tx: a saved store (the transaction flushes the new nodes).
void tree::writer::link(uint64_t* slot, uint64_t off, std::initializer_list<uint64_t> fresh) {
  if (tx) return tx->set(slot, off);
  if (t.mut_.on(mutant::link_before_flush)) t.p_.store_persist(slot, off);
  for (uint64_t f : fresh) t.p_.flush(t.at(f), t.used_bytes(f));
  t.p_.fence();
  t.p_.store_persist(slot, off);
}

void tree::writer::drop(uint64_t off) {
  if (tx) return tx->free(off);
  t.p_.free(off);
}

// --- lookups

void tree::set_inner_key(uint64_t x, uint32_t i, const key& k) const {
  uint64_t* w = ikey(x, i);
  w[0] = k.w;
  if (ik_ == 24) w[1] = k.w1, w[2] = k.len;
}

tree::place tree::locate(const key& k) const {
  place pl;
  uint64_t* slot = &root_->tree;
  while (!at(*slot)->leaf) {
    const uint32_t i = route(*slot, k);
    if (at(*slot)->n) pl.fork = slot, pl.fork_i = i;
    slot = &child(*slot)[i];
  }
  pl.slot = slot;
  pl.leaf = *slot;
  for (uint64_t b = at(pl.leaf)->bitmap; b; b &= b - 1) {
    const uint32_t i = static_cast<uint32_t>(std::countr_zero(b));
    if (rec_key(pl.leaf, i) == k) {
      pl.i = i;
      break;
    }
  }
  return pl;
}

const char* tree::find(key k, uint32_t* n) const {
  place pl = locate(k);
  if (pl.i == k_leaf) return nullptr;
  *n = meta_vlen(rec_meta(pl.leaf, pl.i));
  return rec_value(pl.leaf, pl.i);
}

uint32_t tree::sorted(uint64_t x, uint32_t* order) const {
  uint32_t n = 0;
  for (uint64_t b = at(x)->bitmap & k_full; b; b &= b - 1) order[n++] = static_cast<uint32_t>(std::countr_zero(b));
  std::sort(order, order + n, [&](uint32_t a, uint32_t b) { return rec_key(x, a) < rec_key(x, b); });
  return n;
}

// --- insert

void tree::write_rec(uint64_t x, uint32_t i, const key& k, const char* v, uint32_t n) const {
  auto* w = reinterpret_cast<uint64_t*>(rec(x, i));
  w[0] = k.w;
  if (kw_ == 16) w[1] = k.w1;
  w[kw_ / 8] = make_meta(k.len, n);
  if (n) std::memcpy(rec_value(x, i), v, n);
}

// The full child i of inner node x (x = 0: the root, at *xslot) becomes two
// halves; a copy of x (or a new root) takes the separator; one link.
void tree::split(writer& w, uint64_t* xslot, uint64_t x, uint32_t i) {
  const uint64_t c = x ? child(x)[i] : *xslot;
  const bool leaf = at(c)->leaf;
  // The three nodes first: an allocation that fails (pool_full, or
  // std::bad_alloc for a new chunk run's DRAM node) gives back the ones
  // before it (tx: the aborted transaction does).
  uint64_t l = 0, r = 0, nx = 0;
  try {
    l = w.fresh_node(leaf);
    r = w.fresh_node(leaf);
    nx = w.fresh_node(false);
  } catch (...) {
    if (!w.tx)
      for (uint64_t f : {l, r})
        if (f) p_.free(f);
    throw;
  }
  key sep;
  if (leaf) {
    uint32_t order[k_leaf];
    const uint32_t n = sorted(c, order), half = n / 2;
    for (uint32_t j = 0; j < n; ++j) std::memcpy(rec(j < half ? l : r, j < half ? j : j - half), rec(c, order[j]), rec_);
    at(l)->bitmap = (uint64_t{1} << half) - 1;
    at(r)->bitmap = (uint64_t{1} << (n - half)) - 1;
    sep = rec_key(r, 0);
  } else {
    const uint32_t half = k_inner / 2;  // key[half] goes up
    at(l)->n = half;
    at(r)->n = k_inner - half - 1;
    std::memcpy(ikey(l, 0), ikey(c, 0), half * ik_);
    std::memcpy(child(l), child(c), (half + 1) * 8);
    std::memcpy(ikey(r, 0), ikey(c, half + 1), at(r)->n * ik_);
    std::memcpy(child(r), child(c) + half + 1, (at(r)->n + 1) * 8);
    sep = inner_key(c, half);
  }
  const uint32_t xn = x ? at(x)->n : 0;
  if (x) {
    std::memcpy(ikey(nx, 0), ikey(x, 0), i * ik_);
    std::memcpy(ikey(nx, i + 1), ikey(x, i), (xn - i) * ik_);
    std::memcpy(child(nx), child(x), i * 8);
    std::memcpy(child(nx) + i + 2, child(x) + i + 1, (xn - i) * 8);
  }
  set_inner_key(nx, i, sep);
  child(nx)[i] = l;
  child(nx)[i + 1] = r;
  at(nx)->n = xn + 1;
  w.link(xslot, nx, {l, r, nx});
  w.drop(c);
  if (x) w.drop(x);
}

void tree::add(writer& w, const key& k, const char* v, uint32_t n) {
  uint64_t* slot = &root_->tree;
  if (full(*slot)) split(w, slot, 0, 0);
  for (;;) {
    const uint64_t x = *slot;
    if (at(x)->leaf) break;
    uint32_t i = route(x, k);
    if (full(child(x)[i])) {
      split(w, slot, x, i);
      i = route(*slot, k);
    }
    slot = &child(*slot)[i];
  }
  const uint64_t x = *slot;
  uint64_t& bm = at(x)->bitmap;
  const uint32_t j = static_cast<uint32_t>(std::countr_one(bm));
  if (w.tx) {
    w.tx->snapshot(rec(x, j), kw_ + 8 + n);
    write_rec(x, j, k, v, n);
    if (mut_.on(mutant::tx_unlogged_bitmap))
      bm |= uint64_t{1} << j;
    else
      w.tx->set(&bm, bm | uint64_t{1} << j);
    return;
  }
  write_rec(x, j, k, v, n);
  if (mut_.on(mutant::bitmap_before_record)) p_.store_persist(&bm, bm | uint64_t{1} << j);
  p_.persist(rec(x, j), kw_ + 8 + n);
  p_.store_persist(&bm, bm | uint64_t{1} << j);  // the commit
}

bool tree::insert(key k, const char* v, uint32_t n) {
  if (locate(k).i != k_leaf) return false;
  if (tx()) {
    pm::transaction t(p_);
    writer w{*this, &t};
    add(w, k, v, n);
    t.commit();
    return true;
  }
  writer w{*this, nullptr};
  add(w, k, v, n);
  return true;
}

bool tree::update(key k, const char* v, uint32_t n) {
  place pl = locate(k);
  if (pl.i == k_leaf) return false;
  const uint64_t x = pl.leaf;
  if (update_in_place(p_, &rec_meta(x, pl.i), k.len, v, n, u64_)) return true;
  uint64_t& bm = at(x)->bitmap;
  if (bm != k_full) {  // the new record beside the old, one store swaps them
    const uint32_t j = static_cast<uint32_t>(std::countr_one(bm));
    write_rec(x, j, k, v, n);
    p_.persist(rec(x, j), kw_ + 8 + n);
    p_.store_persist(&bm, (bm | uint64_t{1} << j) & ~(uint64_t{1} << pl.i));
    return true;
  }
  writer w{*this, nullptr};
  const uint64_t y = w.fresh_node(true);
  std::memcpy(at(y), at(x), leaf_bytes_);
  write_rec(y, pl.i, k, v, n);
  w.link(pl.slot, y, {y});
  p_.free(x);
  return true;
}

// The leaf at pl (its last record being removed) leaves the tree: the
// node at *pl.fork is replaced by a copy without the child on the way (or,
// the root left with one child, by that child), and the nodes that child
// led to are freed. False, and nothing changed, when the pool has no room
// for the copy.
bool tree::unlink_leaf(writer& w, const place& pl) {
  const uint64_t a = *pl.fork;
  const uint32_t n = at(a)->n, ai = pl.fork_i;
  const uint64_t gone = child(a)[ai];
  if (pl.fork == &root_->tree && n == 1) {
    w.link(pl.fork, child(a)[1 - ai], {});
  } else {
    uint64_t na;
    try {
      na = w.fresh_node(false);
    } catch (const error& e) {
      if (e.code() != errc::pool_full) throw;
      return false;
    }
    // Child ai goes with the separator on its left (the right one for child
    // 0): its neighbour takes its range.
    const uint32_t kd = ai ? ai - 1 : 0;
    std::memcpy(ikey(na, 0), ikey(a, 0), kd * ik_);
    std::memcpy(ikey(na, kd), ikey(a, kd + 1), (n - kd - 1) * ik_);
    std::memcpy(child(na), child(a), ai * 8);
    std::memcpy(child(na) + ai, child(a) + ai + 1, (n - ai) * 8);
    at(na)->n = n - 1;
    w.link(pl.fork, na, {na});
  }
  for (uint64_t x = gone;;) {
    const bool leaf = at(x)->leaf;
    const uint64_t below = leaf ? 0 : child(x)[0];
    w.drop(x);
    if (leaf) break;
    x = below;
  }
  w.drop(a);
  return true;
}

bool tree::remove(key k) {
  place pl = locate(k);
  if (pl.i == k_leaf) return false;
  uint64_t& bm = at(pl.leaf)->bitmap;
  const bool last = pl.fork && (bm & k_full) == uint64_t{1} << pl.i;
  if (tx()) {
    pm::transaction t(p_);
    writer w{*this, &t};
    if (!last || !unlink_leaf(w, pl)) t.set(&bm, bm & ~(uint64_t{1} << pl.i));
    t.commit();
    return true;
  }
  writer w{*this, nullptr};
  if (last && unlink_leaf(w, pl)) return true;
  p_.store_persist(&bm, bm & ~(uint64_t{1} << pl.i));
  return true;
}

// --- check, trace, stats

std::string tree::check_node(uint64_t x, int depth, int& leaf_depth, const key* lo, const key* hi, uint64_t& live) {
  if (!p_.valid_block(x, sizeof(head)) || at(x)->leaf > 1 || !p_.valid_block(x, node_size(at(x)->leaf)))
    return "node offset " + std::to_string(x) + " outside the heap";
  if (depth > 64) return "deeper than 64 levels";
  const head& h = *at(x);
  if (h.leaf) {
    if (h.bitmap & ~k_full) return "leaf bitmap with bits past its slots";
    uint32_t order[k_leaf];
    const uint32_t n = sorted(x, order);
    for (uint32_t j = 0; j < n; ++j) {
      key k = rec_key(x, order[j]);
      uint64_t m = rec_meta(x, order[j]);
      if (k.len > k_max_key || (u64_ && k.len != 8) || meta_vlen(m) > max_value_ || (u64_ && meta_vlen(m) != 8))
        return "record with key length " + std::to_string(k.len) + ", value length " + std::to_string(meta_vlen(m));
      if (!u64_ && !key_canonical(k)) return "key with bytes past its length";
      if ((j > 0 && !(rec_key(x, order[j - 1]) < k)) || (lo && k < *lo) || (hi && !(k < *hi)))
        return "leaf keys duplicated or outside the parent's separators";
    }
    live += n;
    if (leaf_depth < 0) leaf_depth = depth;
    return leaf_depth == depth ? "" : "leaves at depths " + std::to_string(leaf_depth) + " and " + std::to_string(depth);
  }
  // Removes take emptied leaves out, nodes never merge: 0..16 keys.
  if (h.n > k_inner) return "inner node with " + std::to_string(h.n) + " keys";
  for (uint32_t i = 0; i < h.n; ++i) {
    key k = inner_key(x, i);
    if ((i > 0 && !(inner_key(x, i - 1) < k)) || (lo && !(*lo < k)) || (hi && !(k < *hi)))
      return "separators out of order";
  }
  for (uint32_t i = 0; i <= h.n; ++i) {
    key a, b;
    if (i > 0) a = inner_key(x, i - 1);
    if (i < h.n) b = inner_key(x, i);
    auto why = check_node(child(x)[i], depth + 1, leaf_depth, i > 0 ? &a : lo, i < h.n ? &b : hi, live);
    if (!why.empty()) return why;
  }
  return "";
}

check_result tree::check() {
  int leaf_depth = -1;
  uint64_t live = 0;
  auto why = check_node(root_->tree, 0, leaf_depth, nullptr, nullptr, live);
  return why.empty() ? check_result{} : check_result::fail("bplustree: " + why);
}

void tree::trace(pm::pool::trace_sink& s) {
  s.add(p_.root(), sizeof(root_block));
  // Bounded and checked: a damaged pool is an error, never a wild walk.
  std::vector<std::pair<uint64_t, int>> todo{{root_->tree, 0}};
  while (!todo.empty()) {
    auto [x, depth] = todo.back();
    todo.pop_back();
    if (!p_.valid_block(x, sizeof(head)) || at(x)->leaf > 1 || !p_.valid_block(x, node_size(at(x)->leaf)) ||
        depth > 64 || (!at(x)->leaf && at(x)->n > k_inner))
      throw error(errc::corrupt, "bplustree: a damaged node during recovery");
    s.add(x, node_size(at(x)->leaf));
    if (!at(x)->leaf)
      for (uint32_t i = 0; i <= at(x)->n; ++i) todo.push_back({child(x)[i], depth + 1});
  }
}

index_stats tree::stats() {
  index_stats st;
  uint64_t leaves = 0, inner = 0, depth = 0;
  std::vector<std::pair<uint64_t, uint64_t>> todo{{root_->tree, 1}};
  while (!todo.empty()) {
    auto [x, d] = todo.back();
    todo.pop_back();
    depth = std::max(depth, d);
    if (at(x)->leaf) {
      ++leaves;
      st.records += static_cast<uint64_t>(std::popcount(at(x)->bitmap & k_full));
      continue;
    }
    ++inner;
    for (uint32_t i = 0; i <= at(x)->n; ++i) todo.push_back({child(x)[i], d + 1});
  }
  add_pool_usage(st, p_);
  st.extra = {{"leaves", double(leaves)}, {"inner_nodes", double(inner)}, {"depth", double(depth)}};
  return st;
}

}  // namespace pmindex::pmemids::bplustree
