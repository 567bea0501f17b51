// DPTree (see dptree.hpp, "MERGE"): freezing the active buffer, the merge
// thread, the merge of a frozen buffer into the base leaves and its commit
// (the version flip), close() and abandon().
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <new>
#include <thread>
#include <utility>

#include "hybrid/dptree/dptree.hpp"
#include "common/atomics.hpp"
#include "common/background_thread.hpp"
#include "common/prefetch.hpp"

namespace pmindex::hybrid::dptree {

using common::store_rel;

// ---------------------------------------------------------------- freeze

// The active buffer becomes the frozen one; the other buffer (empty, its
// filter reset when its last merge committed) takes the next tag and log.
// Structure lock held exclusively.
template <class K>
void tree<K>::freeze_locked() {
  buffer* nb = active_ == &bufs_[0] ? &bufs_[1] : &bufs_[0];
  if (!nb->map.empty() || frozen_) corrupt("freeze with a buffer still in use");
  nb->tag = active_->tag + 1;
  for (unsigned s = 0; s < k_stripes; ++s) nb->cur[s] = {chunk_at(root_->log[nb->tag % 2][s]), 0, 0, 0};
  nb->carried.store(0, std::memory_order_relaxed);
  nb->entries.store(0, std::memory_order_relaxed);
  frozen_ = active_;
  active_ = nb;
}

template <class K>
void tree<K>::maybe_freeze() {
  {
    std::lock_guard l(mmu_);
    // The thread looks again when its merge is done. (The mutant freezes
    // at once, as a write in a full pool does, to land freezes between a
    // commit and its trim.)
    if ((merging_ && !mut_.on(mutant::trim_active_log)) || stop_) return;
  }
  {
    common::writer_gate::closed s(gate_);
    if (!frozen_) {
      if (!due(*active_)) return;
      freeze_locked();
    }
  }
  kick();
}

template <class K>
void tree<K>::kick() {
  {
    std::lock_guard l(mmu_);
    resume_.store(false, std::memory_order_relaxed);
    if (stop_) return;
    want_ = true;
    if (!bg_.joinable()) bg_ = common::background_thread([this] { merge_thread(); });  // not on the writer's CPU
  }
  mcv_.notify_one();
}

// ---------------------------------------------------------------- thread

template <class K>
void tree<K>::merge_thread() {
  std::unique_lock l(mmu_);
  for (;;) {
    mcv_.wait(l, [&] { return stop_ || want_; });
    if (stop_) break;
    want_ = false;
    merging_ = true;
    l.unlock();
    buffer* f;
    {
      common::writer_gate::writer in(gate_, p_.thread_slot());
      f = frozen_;
    }
    bool again = false;
    if (f) {
      try {
        again = merge(*f);
      } catch (const error&) {  // a full pool: the buffer stays frozen, a later write retries
        merge_failures_.fetch_add(1, std::memory_order_relaxed);
      } catch (const std::bad_alloc&) {  // no DRAM: the same (a throw out of this thread would end the process)
        merge_failures_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (again) {  // writes during the merge may have filled the next buffer
      common::writer_gate::closed s(gate_);
      again = !frozen_ && due(*active_);
      if (again) freeze_locked();
    }
    l.lock();
    merging_ = false;
    ended_gen_ = gen_.load();
    if (again) want_ = true;
    idle_cv_.notify_all();
  }
  merging_ = false;
  idle_cv_.notify_all();
}

template <class K>
void tree<K>::stop_thread(bool drain) {
  {
    std::lock_guard l(mmu_);
    stop_ = true;
    if (!drain) abort_ = true;  // abandon(): an unfinished merge does not commit
  }
  mcv_.notify_all();
  if (bg_.joinable()) bg_.join();
}

template <class K>
void tree<K>::wait_idle() {
  std::unique_lock l(mmu_);
  idle_cv_.wait(l, [&] { return !merging_ && (!want_ || stop_ || !bg_.joinable()); });
}

// close(): the thread stopped, every buffer merged here, so the logs hold
// no live record and a clean open replays nothing. A full pool leaves the
// rest to the next open's replay.
template <class K>
void tree<K>::merge_all() {
  try {
    for (int round = 0; round < 3; ++round) {
      buffer* f;
      {
        common::writer_gate::closed s(gate_);
        if (!frozen_) {
          if (active_->map.empty()) return;
          freeze_locked();
        }
        f = frozen_;
      }
      if (!merge(*f)) return;
    }
  } catch (const error&) {
    merge_failures_.fetch_add(1, std::memory_order_relaxed);
  } catch (const std::bad_alloc&) {  // what is not merged is the next open's replay
    merge_failures_.fetch_add(1, std::memory_order_relaxed);
  }
}

template <class K>
void tree<K>::close() {
  stop_thread(true);
  merge_all();
  index::close();
}

template <class K>
void tree<K>::abandon() {
  stop_thread(false);  // as a crash leaves it: buffers unmerged, a merge cut short
  index::abandon();
}

// ---------------------------------------------------------------- merge

// Leaf li's part of the frozen entries (items[i..), the keys below the next
// leaf's smallest) merged with its current records, split into the leaves
// that will hold them: li itself (its records that stay keep their slots;
// new ones need slots free at the current version) and new leaves. A leaf
// left with nothing (not the head) leaves the chain. With `carry` (the pool
// had no leaf for the full plan), the leaf stays one leaf: the removes
// apply, and the new records that find a free slot and room (in key order);
// the other entries go to *carry (see merge(), "CARRY").
template <class K>
typename tree<K>::plan tree<K>::plan_leaf(size_t li, const items_t& items, size_t& i,
                                          std::vector<uint64_t>& free_after, int64_t& delta, items_t* carry) {
  const leaf* l = at(leaves_[li]);
  const meta& m = cur(l);
  const entry* s = slots(l);
  const bool has_next = li + 1 < leaves_.size();
  ukey end{};
  if (has_next) end = min_of(li + 1);
  std::vector<mrec>& all = merge_scratch_;  // reused: its lines stay in the cache from leaf to leaf
  all.clear();
  unsigned used = 0;
  for (uint64_t w : m.bitmap) used += unsigned(std::popcount(w));
  const unsigned free = nslots_ > used ? nslots_ - used : 0;
  unsigned j = 0, fresh = 0, adds = 0;  // carry: new slots taken, keys added
  for (; i < items.size() && (!has_next || items[i].first < end); ++i) {
    const ukey k = items[i].first;
    const bval& v = items[i].second;
    for (; j < m.count && key_of(s[m.order[j]]) < k; ++j) all.push_back({s[m.order[j]], m.order[j], l->fp[m.order[j]]});
    const bool match = j < m.count && key_of(s[m.order[j]]) == k;
    if (carry && !v.tomb) {  // a new record needs a free slot and, if the key is new, room
      if (fresh >= free || (!match && m.count + adds >= cap_)) {
        carry->push_back(items[i]);  // the base record it would replace (if any) stays
        continue;
      }
      ++fresh;
      adds += !match;
    }
    if (match) {
      // The replaced or removed record's block (a tombstone's own word is
      // borrowed: never freed through it).
      if constexpr (k_bytes) free_after.push_back(s[m.order[j]].value);
      ++j;
    }
    if (!v.tomb) {
      uint64_t kw;
      if constexpr (k_bytes)
        kw = detail::key_prefix(k);
      else
        kw = k;
      all.push_back({entry{kw, v.word}, -1, fp_of(k)});
      delta += !match;
    } else {
      delta -= match;
    }
  }
  for (; j < m.count; ++j) all.push_back({s[m.order[j]], m.order[j], l->fp[m.order[j]]});

  const unsigned n = unsigned(all.size());
  unsigned per = n;  // records per output leaf
  if (n > cap_) {
    unsigned fill = std::max(1u, cap_ * 3 / 4), parts = (n + fill - 1) / fill;
    per = (n + parts - 1) / parts;
  }
  unsigned a = 0, fresh_slots = 0;
  for (; a < n && a < per; ++a)
    if (all[a].slot < 0 && fresh_slots++ == free) break;
  plan pl{li, {}};
  const unsigned rest = n - a;
  if (a > 0 || li == 0) {
    out_leaf o{leaves_[li], false, {}, {}};
    if (a) o.first = all[0].e, o.last = all[a - 1].e;
    o.seq.reserve(a);
    for (unsigned x = 0; x < a; ++x) {
      if (all[x].slot >= 0) {
        o.seq.push_back(int16_t(all[x].slot));
      } else {
        o.seq.push_back(int16_t(~int(o.recs.size())));
        o.recs.push_back(all[x]);
      }
    }
    pl.outs.push_back(std::move(o));
  }
  if (rest) {
    if (carry) corrupt("merge: a leaf that only shrinks needs a new leaf");
    const unsigned parts = (rest + per - 1) / per;
    unsigned at_rec = a;
    for (unsigned q = 0; q < parts; ++q) {
      unsigned size = rest / parts + (q < rest % parts);
      out_leaf o{0, true, {all.begin() + at_rec, all.begin() + at_rec + size}, {}};
      for (auto& r : o.recs) r.slot = -1;
      o.first = o.recs.front().e, o.last = o.recs.back().e;
      at_rec += size;
      pl.outs.push_back(std::move(o));
    }
    try {  // all or none of this leaf's new leaves
      for (auto& o : pl.outs) {
        if (!o.fresh) continue;
        if (fail_leaves_ && leaf_asks_.fetch_add(1) % fail_leaves_ == fail_leaves_ - 1) {
          refused_ = true;  // not a full pool: writes go on (see base_full_)
          throw error(errc::pool_full, "dptree: a merge leaf refused (fail_leaves)");
        }
        o.off = new_leaf();  // throws pool_full
      }
    } catch (...) {
      for (auto& o : pl.outs)
        if (o.fresh && o.off) free_leaf(o.off);
      throw;
    }
  }
  return pl;
}

template <class K>
void tree<K>::prefetch_leaf(size_t li, bool with_slots) const noexcept {
  const leaf* l = at(leaves_[li]);
  if (!with_slots) {
    common::prefetch_lines(l, sizeof(leaf));
    return;
  }
  common::prefetch_lines(slots(l), nslots_ * sizeof(entry));
}

// Writes one output leaf at version g: new records into free slots with
// their fingerprints, the other metadata copy (a new leaf: copy 0), the
// stamp. Nothing is flushed here: the lines to flush are appended to
// `lines` (a fingerprint line once per 64-slot group that got a record).
template <class K>
void tree<K>::write_leaf(out_leaf& o, uint64_t next, uint64_t g,
                         std::vector<std::pair<const void*, size_t>>& lines) {
  leaf* l = at(o.off);
  entry* s = slots(l);
  uint64_t taken[4] = {0, 0, 0, 0};
  unsigned alt = 0;
  if (!o.fresh) {
    const unsigned c = cur_copy(l);
    alt = 1 - c;
    std::memcpy(taken, l->m[c].bitmap, sizeof taken);
  }
  meta& nm = l->m[alt];
  uint64_t bm[4] = {0, 0, 0, 0}, slot_lines = 0;
  unsigned fp_lines = 0;
  unsigned cursor = 0;
  const unsigned n = unsigned(o.size());
  for (unsigned x = 0; x < n; ++x) {
    const mrec* r = nullptr;
    int slot;
    if (o.seq.empty())
      r = &o.recs[x], slot = r->slot;
    else if (o.seq[x] >= 0)
      slot = o.seq[x];
    else
      r = &o.recs[size_t(~o.seq[x])], slot = -1;
    if (slot < 0) {
      while (taken[cursor / 64] >> (cursor % 64) & 1) ++cursor;
      if (cursor >= nslots_) corrupt("merge: no free slot");  // planning guarantees one
      slot = int(cursor);
      taken[cursor / 64] |= uint64_t{1} << (cursor % 64);
      s[slot] = r->e;  // a slot free at the current version: no reader, no recovery reads it
      slot_lines |= uint64_t{1} << (unsigned(slot) / 4);
      if (!mut_.on(mutant::fingerprint_skipped)) l->fp[slot] = r->fp;  // masked out for readers
      fp_lines |= 1u << (unsigned(slot) / 64);
    }
    bm[slot / 64] |= uint64_t{1} << (slot % 64);
    nm.order[x] = uint8_t(slot);
  }
  nm.next = next;
  nm.max_key = n ? o.last.key : 0;
  nm.count = n;
  std::memcpy(nm.bitmap, bm, sizeof bm);
  for (uint64_t m = slot_lines; m; m &= m - 1) lines.emplace_back(s + 4 * std::countr_zero(m), 64);
  if (mut_.on(mutant::fingerprint_unflushed)) fp_lines = 0;
  for (unsigned m = fp_lines; m; m &= m - 1) lines.emplace_back(l->fp + 64 * std::countr_zero(m), 64);
  lines.emplace_back(&nm, 64);             // next, max key, count, bitmap: one line
  if (n) lines.emplace_back(nm.order, n);  // the order lines in use
  store_rel(&l->stamp, (g << 1) | alt);
  lines.emplace_back(&l->stamp, 64);
}

// Appends a partial merge's unplaced entries (all upserts) to the active
// buffer, each to its stripe's log, under every stripe's lock, skipping a
// key it holds a newer entry for. Each record is flushed, and one fence
// covers them all: none is needed before the commit (the frozen log still
// holds them all), and the active buffer's own writes wait for the locks.
// The room was kept by the writes (dptree.hpp, "Full pools"): grow_log
// links nothing, unless the pool was recovered from a state that predates
// the rule (then it may throw pool_full: nothing carried, the merge is
// retried later).
// keys=bytes: a skipped entry's block is freed when the active buffer's
// merge commits (the active log may name it in a remove record). Records
// carried before a crash are not carried again (merge(), recarried_).
template <class K>
void tree<K>::carry(const items_t& rest) {
  common::writer_gate::writer in(gate_, p_.thread_slot());
  auto locks = lock_stripes();
  buffer& a = *active_;
  // No writer applies while every stripe is locked: the map is read as is.
  uint64_t n[k_stripes] = {};
  std::vector<uint64_t> hs(rest.size());
  for (size_t i = 0; i < rest.size(); ++i) {
    hs[i] = hash(rest[i].first);
    n[stripe_of(hs[i])] += !a.map.contains(rest[i].first);
  }
  for (unsigned s = 0; s < k_stripes; ++s)
    if (n[s]) grow_log(s, unsigned(a.tag % 2), a.cur[s].used + n[s], true);
  size_t carried = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    auto& [k, v] = rest[i];
    if (auto it = a.map.find(k); it != a.map.end()) {
      // keys=bytes: the same block is this entry carried by an earlier
      // try of this merge that a throw cut short (std::bad_alloc in
      // apply): it stays the active buffer's, not garbage.
      if constexpr (k_bytes)
        if (it->second.word != v.word) {
          std::unique_lock lk(a.mu);
          a.garbage.push_back(v.word);
        }
      continue;
    }
    const unsigned s = stripe_of(hs[i]);
    append(a, s, k, v.word, false, false);
    apply(a, s, k, hs[i], v.word, false);
    ++carried;
  }
  a.carried.fetch_add(carried, std::memory_order_relaxed);
  if (carried) p_.fence();
}

// After a commit: each stripe's recycled log li gives back the chunks it
// grew to beyond twice what the next buffer needs (the active buffer's
// carry and a buffer's worth of records): a buffer that once outran its
// merges (or removes that forced merges in a full pool) does not keep that
// space. The cut is durable (1 flush, 1 fence) before the chunks past it
// are freed; a crash in between leaves them to recovery's tracing. Nothing
// reads the recycled log (its records have an old tag) and the stripes'
// locks keep writers from growing it meanwhile.
// A buffer may have been frozen since the commit (a write in a full pool
// does so while the merge thread still runs, and so may a writer that saw
// no merge running just before this one began): the new active buffer
// writes to log li already, its cursors possibly past any cut. That log
// is left whole; a later merge trims it. (The writer gate held here keeps
// any freeze out while it is looked at.)
template <class K>
void tree<K>::trim_log(unsigned li) {
  common::writer_gate::writer in(gate_, p_.thread_slot());
  const bool in_use = active_->tag % 2 == li;
  if (in_use && !mut_.on(mutant::trim_active_log)) return;
  auto locks = lock_stripes();
  const uint64_t per = 2 * (threshold() / k_stripes + 1);
  for (unsigned s = 0; s < k_stripes; ++s) {
    stripe& st = stripes_[s];
    const uint64_t keep = active_->cur[s].upserts + per;
    if (st.cap[li] <= 2 * keep) continue;
    log_chunk* c = chunk_at(root_->log[li][s]);
    uint64_t chunks = 1;
    for (uint64_t cap = k_chunk_recs; cap < keep; cap += k_chunk_recs, ++chunks) c = chunk_at(c->next);
    uint64_t cut = c->next;
    if (!cut) continue;  // nothing past what it keeps: no store, no flush
    p_.store_persist(&c->next, uint64_t{0});
    st.tail[li] = c;
    st.cap[li] = chunks * k_chunk_recs;
    // The mutant leaves what it cut allocated: its damage is the new
    // buffer's records outside its log (lost by a crash, refused by
    // check()), not a freed chunk written to, which may crash the checker.
    if (in_use) continue;
    while (cut) {
      uint64_t nx = chunk_at(cut)->next;
      p_.free(cut);
      cut = nx;
    }
  }
}

template <class K>
bool tree<K>::merge(buffer& f) {
  const auto t0 = std::chrono::steady_clock::now();
  const pm::counters c0 = pm::thread_counters();
  const uint64_t g0 = gen_.load(), g = g0 + 1;
  if (f.tag != g0) corrupt("merge of a buffer that is not the oldest");
  items_t items, rest;
  bool pool_full = false;  // a leaf was refused for lack of space (not by fail_leaves)
  items.reserve(f.map.size());
  for (auto& [k, v] : f.map) {
    // keys=bytes: a record carried before a crash cut its merge short is
    // the active buffer's now (replay found it in both logs): its merge
    // places it, this one leaves it alone (placed by both, its block would
    // have two owners).
    if constexpr (k_bytes)
      if (!v.tomb && recarried_.contains(v.word)) continue;
    items.emplace_back(ukey(k), v);
  }

  {
    std::lock_guard ml(move_mu_);
    moving_.clear();
  }
  std::vector<plan> plans;  // by leaf index, ascending (the first `sorted`)
  size_t sorted = 0;
  auto plan_of = [&](size_t idx) -> plan* {
    auto end = plans.begin() + ptrdiff_t(sorted);
    auto it = std::lower_bound(plans.begin(), end, idx, [](const plan& pl, size_t x) { return pl.index < x; });
    return it != end && it->index == idx ? &*it : nullptr;
  };
  std::vector<uint64_t> free_after, dead;
  int64_t delta = 0;
  // A merge that will not commit: its new leaves (unreachable) are freed,
  // and each leaf it stamped {g, other copy} is stamped {g0, current copy}
  // again. Readers read the same copy either way; a crash leaves either
  // stamp to recovery; check() and the next merge see no trace of it.
  auto undo = [&] {
    for (auto& pl : plans)
      for (auto& o : pl.outs)
        if (o.fresh && o.off) free_leaf(o.off);
        else if (!o.fresh) store_rel(&at(o.off)->stamp, (g0 << 1) | cur_copy(at(o.off)));
  };
  std::vector<std::pair<const void*, size_t>> lines;
  std::vector<uint64_t> chain;
  std::vector<std::pair<typename K::key, uint64_t>> mins;
  std::unique_ptr<detail::inner_layer<K>> layer;
  bloom fresh_filter;
  std::unique_ptr<bloom> new_filter;  // a new base filter, swapped in at the commit
  uint64_t new_filter_cap = 0;
  // Until the commit a throw (pool_full, std::bad_alloc) leaves the
  // current version as it was: what was written is unreachable from it,
  // and the fresh leaves are freed.
  try {
    // 1. Plans: the leaves the frozen entries fall in, in key order.
    size_t i = 0;
    while (i < items.size()) {
      if (abort_.load(std::memory_order_relaxed)) {
        undo();
        return false;
      }
      size_t lo = plans.empty() ? 0 : plans.back().index + 1, hi = leaves_.size();
      if (lo >= hi) lo = hi - 1;
      // The last leaf whose smallest key is <= the item's: at lo or after
      // it (the items before went to the leaves before), and usually close
      // (a buffer due at a few percent of the base touches most leaves), so
      // found by doubling steps from lo, then halving (each probe reads a
      // leaf's smallest key: three PM lines).
      for (size_t step = 1; lo + step < hi; step *= 2) {
        if (items[i].first < min_of(lo + step)) {
          hi = lo + step;
          break;
        }
        lo += step;
      }
      while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (!(items[i].first < min_of(mid)))
          lo = mid;
        else
          hi = mid;
      }
      // The walk reads a leaf's slots in key order, not in place order, and
      // the leaves one after another: asked for a leaf or two ahead, their
      // misses overlap (the merge thread's main cost when every leaf takes
      // a few records).
      if (lo + 2 < leaves_.size()) prefetch_leaf(lo + 2, false);
      if (lo + 1 < leaves_.size()) prefetch_leaf(lo + 1, true);
      plans.push_back(plan{lo, {}});
      plan* it = &plans.back();
      const size_t i0 = i, freed0 = free_after.size();
      const int64_t delta0 = delta;
      // The leaf's records are read under move_mu_, and listed in moving_
      // if they go elsewhere: no update in place is lost (update_in_base).
      std::lock_guard ml(move_mu_);
      try {
        *it = plan_leaf(lo, items, i, free_after, delta, nullptr);
      } catch (const error& e) {
        if (e.code() != errc::pool_full) throw;
        pool_full |= !std::exchange(refused_, false);
        i = i0;  // no leaf to split into: this leaf only shrinks, the rest is carried
        free_after.resize(freed0);
        delta = delta0;
        *it = plan_leaf(lo, items, i, free_after, delta, &rest);
      }
      const auto& outs = it->outs;
      if (!mut_.on(mutant::moving_unlisted) &&
          (outs.empty() || std::any_of(outs.begin(), outs.end(), [](const out_leaf& o) { return o.fresh; })))
        moving_.insert(leaves_[lo]);
    }
    // A leaf that leaves the chain: its nearest kept predecessor takes a
    // new next (an untouched one gets a copy of its metadata that says so).
    sorted = plans.size();
    std::vector<size_t> relink;
    for (auto& pl : plans) {
      const size_t idx = pl.index;
      if (idx == 0 || (!pl.outs.empty() && !pl.outs[0].fresh)) continue;
      dead.push_back(leaves_[idx]);
      for (size_t q = idx - 1;; --q) {
        const plan* at_q = plan_of(q);
        if (!at_q) {
          relink.push_back(q);
          break;
        }
        if (!at_q->outs.empty()) break;
      }
    }
    const size_t planned = plans.size();  // plan_of() searches these (sorted) until the sort below
    for (size_t q : relink) {
      if (plan_of(q) || std::any_of(plans.begin() + ptrdiff_t(planned), plans.end(),
                                    [&](const plan& pl) { return pl.index == q; }))
        continue;
      const leaf* l = at(leaves_[q]);
      const meta& m = cur(l);
      out_leaf o{leaves_[q], false, {}, {m.order, m.order + m.count}};
      if (m.count) o.first = slots(l)[m.order[0]], o.last = slots(l)[m.order[m.count - 1]];
      plan pl{q, {}};
      pl.outs.push_back(std::move(o));
      plans.push_back(std::move(pl));
    }
    if (plans.size() > planned)
      std::sort(plans.begin(), plans.end(), [](const plan& a, const plan& b) { return a.index < b.index; });
    sorted = plans.size();
    auto first_after = [&](size_t idx) -> uint64_t {
      for (size_t j = idx + 1; j < leaves_.size(); ++j) {
        const plan* at_j = plan_of(j);
        if (!at_j) return leaves_[j];
        if (!at_j->outs.empty()) return at_j->outs[0].off;
      }
      return 0;
    };
    // 2. Next-version leaves and metadata, the new chain and its inner nodes.
    for (size_t p = 0; p < plans.size(); ++p) {
      if (abort_.load(std::memory_order_relaxed)) {
        undo();
        return false;
      }
      if (p + 1 < plans.size())  // the lines the next leaf's write stores to
        for (const out_leaf& o : plans[p + 1].outs)
          if (!o.fresh) common::prefetch_lines(at(o.off), offsetof(leaf, fp));
      plan& pl = plans[p];
      const uint64_t after = first_after(pl.index);
      for (size_t o = 0; o < pl.outs.size(); ++o)
        write_leaf(pl.outs[o], o + 1 < pl.outs.size() ? pl.outs[o + 1].off : after, g, lines);
    }
    chain.reserve(leaves_.size() + 8);
    mins.reserve(leaves_.size() + 8);
    auto pit = plans.begin();
    for (size_t j = 0; j < leaves_.size(); ++j) {
      if (pit != plans.end() && pit->index == j) {
        for (auto& o : pit->outs) {
          chain.push_back(o.off);
          if (chain.size() == 1)
            mins.emplace_back(K::k_min, o.off);
          else
            mins.emplace_back(layer_key(o.first), o.off);
        }
        ++pit;
      } else {
        chain.push_back(leaves_[j]);
        const leaf* l = at(leaves_[j]);
        if (j == 0)
          mins.emplace_back(K::k_min, leaves_[j]);
        else
          mins.emplace_back(layer_key(slots(l)[cur(l).order[0]]), leaves_[j]);
      }
    }
    layer = std::make_unique<detail::inner_layer<K>>(64);
    layer->build(mins);
    // BASE FILTER: every key of the next version is in it before the
    // commit (a superset: removed keys stay until the next build). Built
    // anew from every base key at the first merge after an open and when
    // the base outgrows it; else this merge's new keys are added to it
    // (writers read it meanwhile: its words are atomic, and an early bit
    // only sends a write to the base).
    const uint64_t next_records = uint64_t(int64_t(base_records_) + delta);
    if (!base_filter_ || next_records > base_filter_cap_) {
      new_filter = std::make_unique<bloom>();
      new_filter->reset(k_base_filter_bits * std::max<uint64_t>(next_records, merge_min_));
      // At the largest size a filter takes, it is not built again.
      new_filter_cap = new_filter->bits >= (uint64_t{1} << 32) ? UINT64_MAX : new_filter->bits / k_base_filter_min_bits;
      for (uint64_t off : leaves_) {
        const leaf* l = at(off);
        const meta& m = cur(l);
        for (unsigned j = 0; j < m.count; ++j) new_filter->add(hash(slot_key(l, m.order[j])));
      }
    }
    bloom& bf = new_filter ? *new_filter : *base_filter_;
    if (!mut_.on(mutant::base_filter_skipped))
      for (auto& [k, v] : items)
        if (!v.tomb) bf.add(hash(k));
    fresh_filter.reset(
        16 * std::max<uint64_t>(merge_min_, uint64_t(int64_t(base_records_) + delta) * merge_permille_ / 1000));
  } catch (...) {
    undo();
    throw;
  }

  // CARRY (a partial merge: the pool had no leaf for some leaf's new
  // records): those records are appended to the active buffer's log (its
  // newer entry, if it has one, wins), each durable before the commit that
  // recycles the frozen log (mutant carry_after_commit). Replay then finds
  // them in the next log, after any older record of theirs.
  const bool late_carry = mut_.on(mutant::carry_after_commit);
  try {
    if (!rest.empty() && !late_carry) carry(rest);
  } catch (...) {
    undo();
    throw;
  }

  // 3. Durable, then the flip. Every line written above is unreachable at
  // the current version: one fence orders them all before the commit.
  const bool early = mut_.on(mutant::flip_before_flush);
  if (!early) {
    for (auto& [a, n] : lines) p_.flush(a, n);
    p_.fence();
  }
  if (mut_.on(mutant::log_truncated_early)) {
    for (uint64_t l : root_->log[f.tag % 2]) p_.store_persist(&chunk_at(l)->r[0].tag, ~uint64_t{0});
  }
  buffer_map dead_map;
  std::vector<uint64_t> garbage;
  {
    common::writer_gate::closed s(gate_);
    p_.store_persist(&root_->gen, g);  // the commit: 1 flush, 1 fence
    gen_.store(g, std::memory_order_relaxed);
    layer_.swap(layer);
    leaves_.swap(chain);
    base_records_ = uint64_t(int64_t(base_records_) + delta);
    frozen_ = nullptr;
    {
      std::lock_guard ml(move_mu_);
      moving_.clear();
    }
    dead_map.swap(f.map);
    garbage.swap(f.garbage);
    for (auto& c : f.cur) c.used = c.upserts = 0;
    f.carried.store(0, std::memory_order_relaxed);
    f.entries.store(0, std::memory_order_relaxed);
    recarried_.clear();
    std::swap(f.filter.w, fresh_filter.w);
    std::swap(f.filter.bits, fresh_filter.bits);
    if (new_filter) {
      base_filter_.swap(new_filter);  // the old one is freed below: no writer is inside
      base_filter_cap_ = new_filter_cap;
      base_filter_builds_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  new_filter.reset();
  if (early) {
    for (auto& [a, n] : lines) p_.flush(a, n);
    p_.fence();
  }
  if (!rest.empty() && late_carry) carry(rest);
  // 4. Nothing reaches these any more (operations of the old version ended
  // before the commit took the lock exclusively).
  for (uint64_t b : free_after) p_.free(b);
  for (uint64_t b : garbage) p_.free(b);
  for (uint64_t d : dead) free_leaf(d);
  // The mutant widens the window in which a buffer is frozen before the
  // trim, so that short runs on 2 cores write into a trimmed log.
  if (mut_.on(mutant::trim_active_log)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  try {  // committed: nothing after the commit may throw; giving log space back can wait for the next merge
    trim_log(unsigned(f.tag % 2));
  } catch (const std::bad_alloc&) {
  }
  // This thread allocates little (new leaves): what it freed would stay in
  // its cache, out of the writers' reach (a writer that met a full pool and
  // waits for this merge to make room would find none).
  p_.release_cache();
  const pm::counters c1 = pm::thread_counters();
  merge_lines_.fetch_add(c1.lines_flushed - c0.lines_flushed, std::memory_order_relaxed);
  merge_fences_.fetch_add(c1.fences - c0.fences, std::memory_order_relaxed);
  merges_.fetch_add(1, std::memory_order_relaxed);
  merged_records_.fetch_add(items.size() - rest.size(), std::memory_order_relaxed);
  base_full_.store(pool_full, std::memory_order_relaxed);
  if (!rest.empty()) {
    partial_merges_.fetch_add(1, std::memory_order_relaxed);
    carried_.fetch_add(rest.size(), std::memory_order_relaxed);
  }
  merge_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::dptree
