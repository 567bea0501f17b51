// pmemids `hashtable`: operations (see hashtable.hpp for the layout and the
// costs).
#include "pmemids/hashtable/hashtable.hpp"

#include <algorithm>
#include <cstring>

#include "common/root_block.hpp"
#include "pmindex/util/hash.hpp"

namespace pmindex::pmemids::hashtable {

hash_table::hash_table(pm::pool& p, open_kind k, const index_config& c) : p_(p), el_(16, c), mut_(c) {
  if (k == open_kind::created) {
    root_ = common::create_root<root_block>(p, k_root_magic, [&](root_block& r) {
      r.table = p_.alloc_or_throw(table_bytes(k_min_buckets));
      table* t = p_.ptr<table>(r.table);
      t->n = k_min_buckets;
      t->gen = 0;
      std::memset(t->head(), 0, 8 * k_min_buckets);
      p_.persist(t, table_bytes(k_min_buckets));
      r.slot = el_.slot;
      r.kind = el_.u64 ? 0 : 1;
    });
    return;
  }
  root_ = common::attach_root<root_block>(p, k_root_magic, "hashtable");
  if (root_->slot != el_.slot || root_->kind != (el_.u64 ? 0u : 1u))
    throw error(errc::corrupt, "hashtable: the root block does not match the pool's parameters");
  count_ = walk([](uint64_t) {});
}

template <class F>
uint64_t hash_table::walk(F&& f) const {
  const uint64_t toff = root_->table;
  if (!p_.valid_block(toff, sizeof(table))) throw error(errc::corrupt, "hashtable: the bucket array is outside the heap");
  table* t = tab();
  const uint64_t n = t->n;
  if (n < k_min_buckets || (n & (n - 1)) || n > p_.size() / 8 || !p_.valid_block(toff, table_bytes(n)) || t->gen > 1)
    throw error(errc::corrupt, "hashtable: a damaged bucket array");
  // Bounded: no more elements than the pool holds (a cycle is damage).
  const uint64_t most = p_.size() / el_.bytes();
  uint64_t seen = 0;
  for (uint64_t b = 0; b < n; ++b)
    for (uint64_t e = t->head()[b]; e; e = *next(e, t->gen)) {
      if (!p_.valid_block(e, el_.bytes()) || ++seen > most)
        throw error(errc::corrupt, "hashtable: a damaged chain");
      f(e);
    }
  return seen;
}

uint64_t hash_table::hash(const key& k) const {
  return el_.u64 ? util::mix64(k.w) : util::mix64(k.w ^ util::mix64(k.w1 ^ (uint64_t{k.len} << 56)));
}

uint64_t* hash_table::locate(key k) const {
  table* t = tab();
  uint64_t* ref = &t->head()[hash(k) & (t->n - 1)];
  for (; *ref; ref = next(*ref, t->gen))
    if (key_at(*ref) == k) return ref;
  return nullptr;
}

const char* hash_table::find(key k, uint32_t* n) const {
  uint64_t* ref = locate(k);
  if (!ref) return nullptr;
  *n = meta_vlen(*el_.meta(elem(*ref)));
  return el_.value(elem(*ref));
}

// A filled element (not flushed): in a transaction its block is the
// transaction's (flushed at commit, freed on rollback).
uint64_t hash_table::new_elem(key k, const char* v, uint32_t n, uint64_t next_off, pm::transaction* tx) {
  const uint64_t off = tx ? tx->alloc(el_.bytes()) : p_.alloc_or_throw(el_.bytes());
  const uint64_t gen = tab()->gen;
  *next(off, gen) = next_off;
  *next(off, 1 - gen) = 0;
  el_.fill(elem(off), k, v, n);
  return off;
}

// Doubling: every element relinked through next[1 - gen] into the new
// array (the current chains untouched), all flushed, one fence, then the
// root's table word: the commit.
void hash_table::grow() {
  table* t = tab();
  const uint64_t n = t->n, gen = t->gen, m = 2 * n, ngen = mut_.on(mutant::resize_in_place) ? gen : 1 - gen;
  const uint64_t noff = p_.alloc_or_throw(table_bytes(m));
  table* nt = p_.ptr<table>(noff);
  nt->n = m;
  nt->gen = ngen;
  std::memset(nt->head(), 0, 8 * m);
  for (uint64_t b = 0; b < n; ++b)
    for (uint64_t e = t->head()[b], after; e; e = after) {
      after = *next(e, gen);  // read before a mutant's in-place relink overwrites it
      uint64_t& h = nt->head()[hash(key_at(e)) & (m - 1)];
      *next(e, ngen) = h;
      h = e;
      p_.flush(next(e, ngen), 8);
    }
  p_.flush(nt, table_bytes(m));
  p_.fence();
  const uint64_t old = root_->table;
  p_.store_persist(&root_->table, noff);
  p_.free(old);
}

bool hash_table::insert(key k, const char* v, uint32_t n) {
  if (locate(k)) return false;
  if ((count_ + 1) * 4 > tab()->n * 3) grow();
  table* t = tab();
  uint64_t* head = &t->head()[hash(k) & (t->n - 1)];
  if (tx()) {
    pm::transaction tx(p_);
    const uint64_t e = new_elem(k, v, n, *head, &tx);
    if (mut_.on(mutant::tx_unlogged_head)) *head = e;
    else tx.set(head, e);
    tx.commit();
  } else {
    const uint64_t e = new_elem(k, v, n, *head, nullptr);
    if (mut_.on(mutant::publish_before_flush)) p_.store_persist(head, e);
    p_.persist(elem(e), el_.used(n));
    p_.store_persist(head, e);
  }
  ++count_;
  return true;
}

bool hash_table::update(key k, const char* v, uint32_t n) {
  uint64_t* ref = locate(k);
  if (!ref) return false;
  const uint64_t e = *ref;
  if (el_.u64) {
    el_.store_u64_value(p_, elem(e), v);
    return true;
  }
  if (tx()) {
    el_.update_in_tx(p_, elem(e), k, v, n);
    return true;
  }
  const uint64_t y = new_elem(k, v, n, *next(e, tab()->gen), nullptr);
  p_.persist(elem(y), el_.used(n));
  p_.store_persist(ref, y);
  p_.free(e);
  return true;
}

bool hash_table::remove(key k) {
  uint64_t* ref = locate(k);
  if (!ref) return false;
  const uint64_t e = *ref, after = *next(e, tab()->gen);
  if (tx()) {
    pm::transaction tx(p_);
    tx.set(ref, after);
    tx.free(e);
    tx.commit();
  } else {
    p_.store_persist(ref, after);
    p_.free(e);
  }
  --count_;
  return true;
}

// --- check, trace, stats

check_result hash_table::check() {
  auto fail = [](const std::string& m) { return check_result::fail("hashtable: " + m); };
  uint64_t n = 0;
  try {
    n = walk([](uint64_t) {});
  } catch (const error& e) {
    return check_result::fail(e.what());
  }
  table* t = tab();
  for (uint64_t b = 0; b < t->n; ++b)
    for (uint64_t e = t->head()[b]; e; e = *next(e, t->gen)) {
      if (auto why = el_.bad_record(elem(e)); !why.empty()) return fail(why);
      key k = key_at(e);
      if ((hash(k) & (t->n - 1)) != b) return fail("an element in bucket " + std::to_string(b) + " hashes elsewhere");
      for (uint64_t o = *next(e, t->gen); o; o = *next(o, t->gen))
        if (key_at(o) == k) return fail("a key twice in one chain");
    }
  if (n != count_) return fail(std::to_string(n) + " elements, but " + std::to_string(count_) + " counted");
  if (n * 4 > t->n * 3) return fail(std::to_string(n) + " elements in " + std::to_string(t->n) + " buckets");
  return {};
}

void hash_table::trace(pm::pool::trace_sink& s) {
  s.add(p_.root(), sizeof(root_block));
  walk([&](uint64_t e) { s.add(e, el_.bytes()); });
  s.add(root_->table, table_bytes(tab()->n));
}

index_stats hash_table::stats() {
  index_stats st;
  st.records = count_;
  uint64_t longest = 0;
  table* t = tab();
  for (uint64_t b = 0; b < t->n; ++b) {
    uint64_t len = 0;
    for (uint64_t e = t->head()[b]; e; e = *next(e, t->gen)) ++len;
    longest = std::max(longest, len);
  }
  auto u = p_.usage();
  st.pm_bytes_used = u.used_bytes;
  st.pm_bytes_reserved = u.reserved_bytes;
  st.dram_bytes = u.dram_bytes;
  st.alloc_dram_bytes = u.dram_bytes;
  st.extra = {{"buckets", double(t->n)},
              {"load_factor", double(count_) / double(t->n)},
              {"longest_chain", double(longest)},
              {"elem_bytes", double(el_.bytes())}};
  return st;
}

}  // namespace pmindex::pmemids::hashtable
