// pmemids `btree`: operations (see btree.hpp for the layout and the costs).
#include "pmemids/btree/btree.hpp"

#include <algorithm>
#include <cstring>
#include <vector>


namespace pmindex::pmemids::btree {

tree::tree(pm::pool& p, open_kind k, const index_config& c, bool by_ref) : p_(p), by_ref_(by_ref), mut_(c) {
  u64_ = c.keys() == key_kind::u64;
  // btree-ref: an 8-byte slot (the value block's offset), values of any
  // length up to k_max_ref_value.
  max_value_ = u64_ ? 8 : by_ref ? k_max_ref_value : static_cast<uint32_t>(c.u64("value"));
  const uint32_t slot = by_ref ? 8 : value_slot(c);
  const uint64_t magic = by_ref ? k_root_magic_ref : k_root_magic;
  kw_ = u64_ ? 8 : 16;
  rec_ = kw_ + 8 + slot;
  node_bytes_ = sizeof(node) + k_max * rec_;
  root_ = open_root(p, k, magic, by_ref ? "btree-ref" : "btree", slot, u64_, [&](root_block& r) {
    r.tree = new_node(true);
    p_.persist(node_at(r.tree), sizeof(node));
  });
  if (!p.valid_block(root_->tree, node_bytes_)) throw error(errc::corrupt, "btree: the root node is outside the heap");
  // Copy-on-write removes allocate before they free: a full pool keeps
  // blocks back for them (tx removes change nodes in place).
  if (!tx()) p_.keep_for_removes(node_bytes_, k_remove_reserve);
}

uint64_t tree::new_node(bool leaf) {
  uint64_t off = p_.alloc_or_throw(node_bytes_);
  node* x = node_at(off);
  x->n = 0;
  x->leaf = leaf;
  return off;
}

tree::place tree::locate(key k) const {
  uint64_t* slot = &root_->tree;
  for (;;) {
    node* x = node_at(*slot);
    uint32_t i = position(x, k);
    if (i < x->n && key_at(x, i) == k) return {x, i, slot};
    if (x->leaf) return {};
    slot = &x->child[i];
  }
}

const char* tree::find(key k, uint32_t* n) const {
  place pl = locate(k);
  if (!pl.x) return nullptr;
  if (!meta_live(meta_at(pl.x, pl.i))) return nullptr;
  return value_of(pl.x, pl.i, n);
}

void tree::write_rec(char* r, key k, const char* v, uint32_t n, uint64_t ref) const {
  auto* w = reinterpret_cast<uint64_t*>(r);
  w[0] = k.w;
  if (kw_ == 16) w[1] = k.w1;
  if (by_ref_) {  // the length is the block's
    w[kw_ / 8] = make_meta(k.len, 0);
    w[kw_ / 8 + 1] = ref;
    return;
  }
  w[kw_ / 8] = make_meta(k.len, n);
  if (n) std::memcpy(r + kw_ + 8, v, n);
}

// btree-ref: a value block, flushed (persist; the caller's fence makes it
// durable before the store that links it) or allocated in the transaction.
uint64_t tree::new_value(pm::transaction* tx, const char* v, uint32_t n) {
  const bool outside = mut_.on(mutant::tx_value_outside);
  const uint64_t b = tx && !outside ? tx->alloc(8 + n) : p_.alloc_or_throw(8 + n);
  char* d = p_.ptr<char>(b);
  *reinterpret_cast<uint64_t*>(d) = n;
  if (n) std::memcpy(d + 8, v, n);
  if (!tx && !mut_.on(mutant::value_not_flushed)) p_.flush(d, 8 + n);
  return b;
}

// Persist mode: the new nodes durable, then the one 8-byte store that
// links them (the parent's child word, or the root word).
void tree::publish(uint64_t* slot, uint64_t off, const uint64_t* fresh, size_t n) {
  if (mut_.on(mutant::publish_before_flush)) p_.store_persist(slot, off);
  for (size_t j = 0; j < n; ++j) p_.flush(node_at(fresh[j]), sizeof(node) + node_at(fresh[j])->n * rec_);
  p_.fence();
  if (!mut_.on(mutant::publish_before_flush)) p_.store_persist(slot, off);
}

// Allocates n nodes, all or none (a full pool, or no DRAM for the heap's
// bookkeeping, changes nothing).
void tree::new_nodes(uint64_t* out, int n, bool leaf) {
  for (int i = 0; i < n; ++i) {
    try {
      out[i] = p_.alloc(node_bytes_);
    } catch (...) {  // std::bad_alloc
      while (i-- > 0) p_.free(out[i]);
      throw;
    }
    if (!out[i]) {
      while (i-- > 0) p_.free(out[i]);
      throw error(errc::pool_full, "pool " + p_.path() + " is full (" + std::to_string(p_.size()) + " bytes)");
    }
    node_at(out[i])->n = 0;
    node_at(out[i])->leaf = leaf;
  }
}

// Persist mode: the node *xslot (x, which may be a DRAM stand-in for the
// parent of the root) is replaced by a copy holding child i's median, with
// the child's two halves as new nodes.
void tree::split_child(uint64_t* xslot, node* x, uint32_t i) {
  const uint64_t old_c = x->child[i];
  node* c = node_at(old_c);
  uint64_t o[3];
  new_nodes(o, 3, false);
  const uint64_t lo = o[0], ro = o[1], xo = o[2];
  node *L = node_at(lo), *R = node_at(ro), *X = node_at(xo);
  L->leaf = R->leaf = c->leaf;
  L->n = R->n = k_t - 1;
  std::memcpy(rec_at(L, 0), rec_at(c, 0), (k_t - 1) * rec_);
  std::memcpy(rec_at(R, 0), rec_at(c, k_t), (k_t - 1) * rec_);
  if (!c->leaf) {
    std::memcpy(L->child, c->child, k_t * 8);
    std::memcpy(R->child, c->child + k_t, k_t * 8);
  }
  X->n = x->n + 1;
  if (i) std::memcpy(rec_at(X, 0), rec_at(x, 0), i * rec_);
  std::memcpy(rec_at(X, i), rec_at(c, k_t - 1), rec_);
  if (x->n > i) std::memcpy(rec_at(X, i + 1), rec_at(x, i), (x->n - i) * rec_);
  std::memcpy(X->child, x->child, i * 8);
  X->child[i] = lo;
  X->child[i + 1] = ro;
  std::memcpy(X->child + i + 2, x->child + i + 1, (x->n - i) * 8);
  const uint64_t old_x = *xslot;
  const bool x_in_pool = p_.contains(x);
  publish(xslot, xo, {lo, ro, xo});
  p_.free(old_c);
  if (x_in_pool) p_.free(old_x);
}

// Persist mode: a full root is split under a new root, committed by the
// root word.
void tree::split_root() {
  node above{};
  above.child[0] = root_->tree;
  split_child(&root_->tree, &above, 0);
}

void tree::insert_leaf(uint64_t* slot, uint32_t i, key k, const char* v, uint32_t n) {
  const uint64_t old = *slot;
  node* x = node_at(old);
  const uint64_t ref = by_ref_ ? new_value(nullptr, v, n) : 0;
  uint64_t yo;
  try {
    new_nodes(&yo, 1, true);
  } catch (...) {  // pool_full or std::bad_alloc
    if (ref) p_.free(ref);
    throw;
  }
  node* y = node_at(yo);
  y->n = x->n + 1;
  std::memcpy(rec_at(y, 0), rec_at(x, 0), i * rec_);
  write_rec(rec_at(y, i), k, v, n, ref);
  std::memcpy(rec_at(y, i + 1), rec_at(x, i), (x->n - i) * rec_);
  publish(slot, yo, {yo});
  p_.free(old);
}

// Tx mode: child i of x is split in place; its right half goes to a block
// of the transaction.
void tree::split_child_tx(pm::transaction& tx, node* x, uint32_t i) {
  node* c = node_at(x->child[i]);
  const uint64_t ro = tx.alloc(node_bytes_);
  node* R = node_at(ro);
  R->leaf = c->leaf;
  R->n = k_t - 1;
  std::memcpy(rec_at(R, 0), rec_at(c, k_t), (k_t - 1) * rec_);
  if (!c->leaf) std::memcpy(R->child, c->child + k_t, k_t * 8);
  tx.snapshot(c, 8);
  tx.snapshot(x, 8);
  tx.snapshot(rec_at(x, i), (x->n - i + 1) * rec_);
  tx.snapshot(&x->child[i + 1], (x->n - i + 1) * 8);
  std::memmove(rec_at(x, i + 1), rec_at(x, i), (x->n - i) * rec_);
  std::memcpy(rec_at(x, i), rec_at(c, k_t - 1), rec_);
  std::memmove(&x->child[i + 2], &x->child[i + 1], (x->n - i) * 8);
  x->child[i + 1] = ro;
  x->n += 1;
  c->n = k_t - 1;
}

bool tree::insert(key k, const char* v, uint32_t n) {
  if (place pl = locate(k); pl.x) {
    uint64_t& m = meta_at(pl.x, pl.i);
    if (meta_live(m)) return false;
    if (by_ref_) throw error(errc::corrupt, "btree-ref: a dead record (btree-ref never writes one)");
    // A dead record: its value slot is invisible until the meta word says live.
    if (n) {
      std::memcpy(value_at(pl.x, pl.i), v, n);
      p_.persist(value_at(pl.x, pl.i), n);
    }
    p_.store_persist(&m, make_meta(k.len, n));
    return true;
  }
  if (!tx()) {
    if (node_at(root_->tree)->n == k_max) split_root();
    uint64_t* slot = &root_->tree;
    for (;;) {
      node* x = node_at(*slot);
      uint32_t i = position(x, k);
      if (x->leaf) {
        insert_leaf(slot, i, k, v, n);
        return true;
      }
      if (node_at(x->child[i])->n == k_max) {
        split_child(slot, x, i);
        x = node_at(*slot);
        i = position(x, k);
      }
      slot = &x->child[i];
    }
  }
  pm::transaction tx(p_);
  if (node_at(root_->tree)->n == k_max) {
    const uint64_t r = tx.alloc(node_bytes_);
    node* x = node_at(r);
    x->n = 0;
    x->leaf = 0;
    x->child[0] = root_->tree;
    tx.set(&root_->tree, r);
    split_child_tx(tx, x, 0);
  }
  node* x = node_at(root_->tree);
  for (;;) {
    uint32_t i = position(x, k);
    if (x->leaf) {
      tx.snapshot(x, 8);
      if (!mut_.on(mutant::tx_unlogged_shift)) tx.snapshot(rec_at(x, i), (x->n - i + 1) * rec_);
      std::memmove(rec_at(x, i + 1), rec_at(x, i), (x->n - i) * rec_);
      write_rec(rec_at(x, i), k, v, n, by_ref_ ? new_value(&tx, v, n) : 0);
      x->n += 1;
      tx.commit();
      return true;
    }
    if (node_at(x->child[i])->n == k_max) {
      split_child_tx(tx, x, i);
      i = position(x, k);
    }
    x = node_at(x->child[i]);
  }
}

bool tree::update(key k, const char* v, uint32_t n) {
  place pl = locate(k);
  if (!pl.x || !meta_live(meta_at(pl.x, pl.i))) return false;
  if (by_ref_) {  // a new block, then one store of the slot
    uint64_t& slot = ref_at(pl.x, pl.i);
    const uint64_t old = slot;
    if (tx()) {
      pm::transaction tx(p_);
      tx.set(&slot, new_value(&tx, v, n));
      tx.free(old);
      tx.commit();
      return true;
    }
    const uint64_t b = new_value(nullptr, v, n);
    p_.fence();
    p_.store_persist(&slot, b);
    p_.free(old);
    return true;
  }
  if (update_in_place(p_, &meta_at(pl.x, pl.i), k.len, v, n, u64_)) return true;
  const uint64_t old = *pl.slot;
  uint64_t yo;
  new_nodes(&yo, 1, pl.x->leaf);
  node* y = node_at(yo);
  std::memcpy(y, pl.x, sizeof(node) + pl.x->n * rec_);
  write_rec(rec_at(y, pl.i), k, v, n);
  publish(pl.slot, yo, {yo});
  p_.free(old);
  return true;
}

// --- check, trace, stats

std::string tree::check_node(uint64_t off, int depth, int& leaf_depth, const key* lo, const key* hi,
                             uint64_t& live) {
  if (!p_.valid_block(off, node_bytes_)) return "node offset " + std::to_string(off) + " outside the heap";
  if (depth > 64) return "deeper than 64 levels";
  node* x = node_at(off);
  if (x->n > k_max || x->leaf > 1) return "node with n " + std::to_string(x->n) + ", leaf " + std::to_string(x->leaf);
  if (depth > 0 && x->n < k_t - 1) return "non-root node with " + std::to_string(x->n) + " records";
  if (depth == 0 && !x->leaf && x->n == 0) return "internal root without records";
  for (uint32_t i = 0; i < x->n; ++i) {
    key k = key_at(x, i);
    uint64_t m = meta_at(x, i);
    if (k.len > k_max_key || (u64_ && k.len != 8) || meta_vlen(m) > max_value_ ||
        (u64_ && !by_ref_ && meta_vlen(m) != 8))
      return "record with key length " + std::to_string(k.len) + ", value length " + std::to_string(meta_vlen(m));
    if (!u64_ && !key_canonical(k)) return "key with bytes past its length";
    if ((i > 0 && !(key_at(x, i - 1) < k)) || (lo && !(*lo < k)) || (hi && !(k < *hi)))
      return "keys out of order in a node";
    live += meta_live(m);
    if (auto why = check_value(x, i); !why.empty()) return why;
  }
  if (x->leaf) {
    if (leaf_depth < 0) leaf_depth = depth;
    return leaf_depth == depth ? "" : "leaves at depths " + std::to_string(leaf_depth) + " and " + std::to_string(depth);
  }
  for (uint32_t i = 0; i <= x->n; ++i) {
    key a, b;
    if (i > 0) a = key_at(x, i - 1);
    if (i < x->n) b = key_at(x, i);
    auto why = check_node(x->child[i], depth + 1, leaf_depth, i > 0 ? &a : lo, i < x->n ? &b : hi, live);
    if (!why.empty()) return why;
  }
  return "";
}

// btree-ref: a live record naming a valid value block.
std::string tree::check_value(node* x, uint32_t i) {
  if (!by_ref_) return "";
  const uint64_t b = ref_at(x, i);
  if (!meta_live(meta_at(x, i)) || meta_vlen(meta_at(x, i))) return "a dead record or a length in the meta word";
  if (!p_.valid_block(b, 8)) return "value block offset " + std::to_string(b) + " outside the heap";
  const uint64_t n = *p_.ptr<uint64_t>(b);
  if (n > max_value_ || (u64_ && n != 8) || !p_.valid_block(b, 8 + n))
    return "value block of " + std::to_string(n) + " bytes";
  return "";
}

check_result tree::check() {
  int leaf_depth = -1;
  uint64_t live = 0;
  auto why = check_node(root_->tree, 0, leaf_depth, nullptr, nullptr, live);
  return why.empty() ? check_result{} : check_result::fail("btree: " + why);
}

void tree::trace(pm::pool::trace_sink& s) {
  s.add(p_.root(), sizeof(root_block));
  // Bounded and checked: a damaged pool is an error, never a wild walk.
  std::vector<std::pair<uint64_t, int>> todo{{root_->tree, 0}};
  while (!todo.empty()) {
    auto [off, depth] = todo.back();
    todo.pop_back();
    if (!p_.valid_block(off, node_bytes_) || depth > 64 || node_at(off)->n > k_max || node_at(off)->leaf > 1)
      throw error(errc::corrupt, "btree: a damaged node during recovery");
    s.add(off, node_bytes_);
    node* x = node_at(off);
    for (uint32_t i = 0; by_ref_ && i < x->n; ++i) {
      if (auto why = check_value(x, i); !why.empty()) throw error(errc::corrupt, "btree-ref: " + why + " during recovery");
      s.add(ref_at(x, i), 8 + *p_.ptr<uint64_t>(ref_at(x, i)));
    }
    if (!x->leaf)
      for (uint32_t i = 0; i <= x->n; ++i) todo.push_back({x->child[i], depth + 1});
  }
}

index_stats tree::stats() {
  index_stats st;
  uint64_t nodes = 0, depth = 0;
  std::vector<std::pair<node*, uint64_t>> todo{{node_at(root_->tree), 1}};
  while (!todo.empty()) {
    auto [x, d] = todo.back();
    todo.pop_back();
    ++nodes;
    depth = std::max(depth, d);
    for (uint32_t i = 0; i < x->n; ++i) st.records += meta_live(meta_at(x, i));
    if (!x->leaf)
      for (uint32_t i = 0; i <= x->n; ++i) todo.push_back({node_at(x->child[i]), d + 1});
  }
  add_pool_usage(st, p_);
  st.extra = {{"nodes", double(nodes)}, {"depth", double(depth)}, {"node_bytes", double(node_bytes_)}};
  return st;
}

}  // namespace pmindex::pmemids::btree
