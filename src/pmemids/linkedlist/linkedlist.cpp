// pmemids `linkedlist`: operations (see linkedlist.hpp for the layout and
// the costs).
#include "pmemids/linkedlist/linkedlist.hpp"

#include <chrono>

#include "common/root_block.hpp"
#include "pmindex/util/hash.hpp"

namespace pmindex::pmemids::linkedlist {

size_t list::key_hash::operator()(const key& k) const noexcept {
  return util::mix64(k.w ^ util::mix64(k.w1 ^ (uint64_t{k.len} << 56)));
}

list::list(pm::pool& p, open_kind k, const index_config& c) : p_(p), el_(8, c), mut_(c) {
  if (k == open_kind::created) {
    root_ = common::create_root<root_block>(p, k_root_magic, [&](root_block& r) {
      r.slot = el_.slot;
      r.kind = el_.u64 ? 0 : 1;
    });
    return;
  }
  root_ = common::attach_root<root_block>(p, k_root_magic, "linkedlist");
  if (root_->slot != el_.slot || root_->kind != (el_.u64 ? 0u : 1u))
    throw error(errc::corrupt, "linkedlist: the root block does not match the pool's parameters");
  // The DRAM table, from one walk of the list.
  const auto t0 = std::chrono::steady_clock::now();
  walk([&](uint64_t e, uint64_t prev) {
    if (auto why = el_.bad_record(elem(e)); !why.empty()) throw error(errc::corrupt, "linkedlist: " + why);
    if (!map_.emplace(el_.key_at(elem(e)), place{e, prev}).second)
      throw error(errc::corrupt, "linkedlist: a key twice in the list");
    tail_ = e;
  });
  rebuild_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class F>
uint64_t list::walk(F&& f) const {
  const uint64_t most = p_.size() / el_.bytes();  // more is a cycle: damage
  uint64_t seen = 0, prev = 0;
  for (uint64_t e = root_->head; e; prev = e, e = *next(e)) {
    if (!p_.valid_block(e, el_.bytes()) || ++seen > most) throw error(errc::corrupt, "linkedlist: a damaged link");
    f(e, prev);
  }
  return seen;
}

const char* list::find(key k, uint32_t* n) const {
  auto it = map_.find(k);
  if (it == map_.end()) return nullptr;
  char* e = elem(it->second.off);
  *n = meta_vlen(*el_.meta(e));
  return el_.value(e);
}

void list::relink_successor(uint64_t off, uint64_t prev) {
  if (const uint64_t s = *next(off)) map_.find(el_.key_at(elem(s)))->second.prev = prev;
}

bool list::insert(key k, const char* v, uint32_t n) {
  // The DRAM table's entry first: once the link is durable nothing may
  // throw (std::bad_alloc there would leave a durable element the table
  // does not know, which the next insert would unlink and leak).
  auto [it, added] = map_.try_emplace(k, place{0, tail_});
  if (!added) return false;
  uint64_t* at = link(tail_);
  uint64_t e;
  try {
    e = link_new(at, k, v, n);
  } catch (...) {
    map_.erase(it);
    throw;
  }
  it->second.off = e;
  tail_ = e;
  return true;
}

// A new element holding (k, v), durable, then linked at *at.
uint64_t list::link_new(uint64_t* at, key k, const char* v, uint32_t n) {
  uint64_t e;
  if (tx()) {
    pm::transaction tx(p_);
    e = tx.alloc(el_.bytes());
    *next(e) = 0;
    el_.fill(elem(e), k, v, n);
    if (mut_.on(mutant::tx_unlogged_link)) *at = e;
    else tx.set(at, e);
    tx.commit();
  } else {
    e = p_.alloc_or_throw(el_.bytes());
    *next(e) = 0;
    el_.fill(elem(e), k, v, n);
    if (mut_.on(mutant::publish_before_flush)) p_.store_persist(at, e);
    p_.persist(elem(e), el_.used(n));
    p_.store_persist(at, e);
  }
  return e;
}

bool list::update(key k, const char* v, uint32_t n) {
  auto it = map_.find(k);
  if (it == map_.end()) return false;
  const place pl = it->second;
  if (el_.u64) {
    el_.store_u64_value(p_, elem(pl.off), v);
    return true;
  }
  if (tx()) {
    el_.update_in_tx(p_, elem(pl.off), k, v, n);
    return true;
  }
  const uint64_t y = p_.alloc_or_throw(el_.bytes());
  *next(y) = *next(pl.off);
  el_.fill(elem(y), k, v, n);
  p_.persist(elem(y), el_.used(n));
  p_.store_persist(link(pl.prev), y);
  relink_successor(y, y);
  it->second.off = y;
  if (tail_ == pl.off) tail_ = y;
  p_.free(pl.off);
  return true;
}

bool list::remove(key k) {
  auto it = map_.find(k);
  if (it == map_.end()) return false;
  const place pl = it->second;
  const uint64_t after = *next(pl.off);
  if (tx()) {
    pm::transaction tx(p_);
    tx.set(link(pl.prev), after);
    tx.free(pl.off);
    tx.commit();
  } else {
    p_.store_persist(link(pl.prev), after);
  }
  if (after) map_.find(el_.key_at(elem(after)))->second.prev = pl.prev;
  if (tail_ == pl.off) tail_ = pl.prev;
  map_.erase(it);
  if (!tx()) p_.free(pl.off);
  return true;
}

// --- check, trace, stats

check_result list::check() {
  auto fail = [](const std::string& m) { return check_result::fail("linkedlist: " + m); };
  std::string why;
  uint64_t last = 0, n = 0;
  try {
    n = walk([&](uint64_t e, uint64_t prev) {
      last = e;
      if (!why.empty()) return;
      why = el_.bad_record(elem(e));
      if (!why.empty()) return;
      auto it = map_.find(el_.key_at(elem(e)));
      if (it == map_.end() || it->second.off != e || it->second.prev != prev)
        why = "an element the DRAM table does not name at its place";
    });
  } catch (const error& e) {
    return check_result::fail(e.what());
  }
  if (!why.empty()) return fail(why);
  if (n != map_.size()) return fail(std::to_string(n) + " elements, the DRAM table " + std::to_string(map_.size()));
  if (last != tail_) return fail("the last element is not the DRAM tail");
  return {};
}

void list::trace(pm::pool::trace_sink& s) {
  s.add(p_.root(), sizeof(root_block));
  walk([&](uint64_t e, uint64_t) { s.add(e, el_.bytes()); });
}

index_stats list::stats() {
  index_stats st;
  st.records = map_.size();
  auto u = p_.usage();
  st.pm_bytes_used = u.used_bytes;
  st.pm_bytes_reserved = u.reserved_bytes;
  // The table: its bucket array and one node (key, place, link, hash) per record.
  const uint64_t table = map_.bucket_count() * sizeof(void*) + map_.size() * (sizeof(key) + sizeof(place) + 16);
  st.dram_bytes = u.dram_bytes + table;
  st.alloc_dram_bytes = u.dram_bytes;
  st.extra = {{"elem_bytes", double(el_.bytes())},
              {"dram_table_bytes", double(table)},
              {"rebuild_seconds", rebuild_seconds_}};
  return st;
}

}  // namespace pmindex::pmemids::linkedlist
