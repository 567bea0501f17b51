// DPTree (see dptree.hpp): the write path. A write's log record and
// buffer entry, or its update in place in a base slot; the log's room; the
// forced merges of a full pool; the throttle.
#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "hybrid/dptree/dptree.hpp"
#include "common/atomics.hpp"
#include "common/kv_block.hpp"

namespace pmindex::hybrid::dptree {

using common::store_rel;

namespace {
constexpr unsigned k_forced_merges = 6;  // merges a write may force in a full pool
}  // namespace

// ---------------------------------------------------------------- writes

template <class K>
void tree<K>::apply(buffer& b, unsigned s, ukey k, uint64_t h, uint64_t word, bool tomb) {
  cursor& c = b.cur[s];
  c.upserts += !tomb;
  b.filter.add(h);  // before the entry: a reader the filter turns away reads before the write
  std::unique_lock lk(b.mu);
  auto it = b.map.lower_bound(k);  // one descent: the entry, or where it goes
  if (it != b.map.end() && it->first == k) {
    // A superseded upsert's block stays until the merge commits: its log
    // record is replayed until then. A tombstone's block is borrowed.
    if constexpr (k_bytes)
      if (!it->second.tomb) b.garbage.push_back(it->second.word);
    c.upserts -= !it->second.tomb;
    it->second = {word, tomb};
    return;
  }
  b.map.emplace_hint(it, bkey(k), bval{word, tomb});
  b.entries.store(b.map.size(), std::memory_order_relaxed);
}

// A chunk linked at the end of a log: its next word durable (0), then the
// link (1 flush, 1 fence each), before any record goes there.
template <class K>
void tree<K>::grow_log(unsigned s, unsigned li, uint64_t need, bool may_borrow) {
  stripe& st = stripes_[s];
  while (st.cap[li] < need) {
    uint64_t nx = p_.alloc(sizeof(log_chunk));
    if (!nx && may_borrow) nx = p_.alloc_for_remove(sizeof(log_chunk));
    if (!nx) throw error(errc::pool_full, "dptree: the pool is full (log)");
    chunk_at(nx)->next = 0;
    p_.persist(chunk_at(nx), 8);
    p_.store_persist(&st.tail[li]->next, nx);
    st.tail[li] = chunk_at(nx);
    st.cap[li] += k_chunk_recs;
  }
}

// The log record of a write, durable before the write is applied: 1 flush,
// 1 fence (keys=bytes: the kv block, flushed by make_kv_block, is covered by
// the same fence). The checksum and the tag make a torn or stale line no
// record. The chunk it goes to is linked already (grow_log).
template <class K>
void tree<K>::append(buffer& b, unsigned s, ukey k, uint64_t word, bool tomb, bool fence) {
  cursor& c = b.cur[s];
  if (c.pos == k_chunk_recs) {
    if (!c.chunk->next) corrupt("a log record past the log's room");  // grow_log made it
    c.chunk = chunk_at(c.chunk->next);
    c.pos = 0;
  }
  log_rec& r = c.chunk->r[c.pos++];
  ++c.used;
  if constexpr (k_bytes) {
    r.key = word;
    r.value = block_hash(word);
  } else {
    r.key = k;
    r.value = word;
  }
  r.op = tomb ? k_remove : k_upsert;
  log_rec t = r;
  t.tag = b.tag;
  r.check = checksum(t);
  store_rel(&r.tag, b.tag);  // last: a line holding the tag holds the record
  if (mut_.on(mutant::log_unflushed)) return;
  p_.flush(&r, sizeof(r));
  if (fence) p_.fence();
}

// A write that finds no log room while a merge runs waits for it (the room
// kept for its carry comes free) and tries again. When no merge runs, a
// remove merges the active buffer however small (a remove never fails for
// lack of space while merging makes room: see "Full pools" in dptree.hpp),
// and so does an insert or update if the buffer holds what its merge frees
// (removes, superseded blocks): a few removes make room at once, not when
// later writes make the buffer due. At most k_forced_merges tries.
template <class K>
bool tree<K>::write(ukey k, uint64_t word, wop o, uint64_t* old) {
  for (unsigned tries = 0;; ++tries) {
    const uint64_t g = gen_.load();
    try {
      return write_once(k, word, o, old);
    } catch (const error& e) {
      if (e.code() != errc::pool_full || tries == k_forced_merges) throw;
    }
    if (!make_room(g, o == wop::remove)) throw error(errc::pool_full, "dptree: the pool is full");
  }
}

// `force`: merge the active buffer whatever it holds; else only if its
// merge frees something. False: no merge runs or was started.
template <class K>
bool tree<K>::make_room(uint64_t g, bool force) {
  {
    common::writer_gate::closed s(gate_);
    if (!frozen_) {
      if (active_->map.empty() || !(force || merge_frees(*active_))) return false;
      freeze_locked();
    }
  }
  kick();
  wait_merge(g);
  return true;
}

// Whether b's merge frees pool space: it holds a remove (its record's
// slot, keys=bytes its block) or a superseded block. Writers excluded.
template <class K>
bool tree<K>::merge_frees(const buffer& b) const {
  uint64_t upserts = 0;
  for (const cursor& c : b.cur) upserts += c.upserts;
  return b.map.size() > upserts || !b.garbage.empty();
}

template <class K>
void tree<K>::wait_merge(uint64_t g) {
  std::unique_lock l(mmu_);
  idle_cv_.wait(l, [&] {
    return ended_gen_ > g || stop_ || !bg_.joinable() || (!merging_ && !want_);
  });
}

// One write: presence check, log room, log record, buffer entry, under the
// lock of the key's stripe (so the stripe's log is in the order its
// entries were applied; writers of other stripes run beside it).
// keys=bytes: `word` is the new record's block (the caller frees it if the
// write fails); a remove logs the removed record's block. *old: whether the
// key was present. The room (dptree.hpp, "Full pools"), per stripe: the
// active log keeps room for the frozen buffer's carry, the other log for
// this buffer's.
template <class K>
bool tree<K>::write_once(ukey k, uint64_t word, wop o, uint64_t* old) {
  resume();
  const uint64_t h = hash(k);
  const unsigned si = mut_.on(mutant::log_by_thread) ? p_.thread_slot() % k_stripes : stripe_of(h);
  stripe& st = stripes_[si];
  bool due_now;
  {
    common::writer_gate::writer in(gate_, p_.thread_slot());
    std::lock_guard lk(st.mu);
    buffer& b = *active_;
    if constexpr (!k_bytes)
      if (o == wop::update) {
        const int r = update_in_base(b, k, h, word);
        if (r >= 0) {
          if (old) *old = r;
          return r;
        }
      }
    uint64_t cur_word = 0;
    bool had = false;  // an upsert entry of k in the active buffer
    const bool present = find(k, h, &cur_word, &had, o == wop::insert);
    const bool ok = o == wop::insert ? !present : o == wop::upsert ? true : present;
    if (!ok) return false;
    const bool tomb = o == wop::remove;
    const uint64_t w = tomb ? (k_bytes ? cur_word : 0) : word;
    const uint64_t carry = frozen_ ? frozen_->cur[si].upserts : 0;
    const unsigned li = unsigned(b.tag % 2);
    grow_log(si, li, b.cur[si].used + 1 + carry, tomb);
    if (!tomb && !had) {
      // A new upsert entry: one more record this buffer's merge may carry.
      // The last merge could not place every record: the base is full.
      if (base_full_.load(std::memory_order_relaxed))
        throw error(errc::pool_full, "dptree: the pool is full (leaves)");
      grow_log(si, 1 - li, b.cur[si].upserts + 1 + carry, false);
    }
    append(b, si, k, w, tomb);
    apply(b, si, k, h, w, tomb);
    st.live.store(st.live.load(std::memory_order_relaxed) + (tomb ? -1 : !present), std::memory_order_relaxed);
    if (old) *old = present;
    due_now = due(b);
  }
  if (due_now) {
    maybe_freeze();
    throttle();
  }
  return true;
}

// An update of a key no buffer holds (keys=u64) stores its value in the
// key's base slot: 1 flush, 1 fence, no log record and no buffer entry (the
// original's upsert does the same). The leaves and the inner nodes stay
// (a commit closes the structure lock this writer holds). A merge running
// meanwhile keeps a record that stays in its leaf in its slot (write_leaf
// writes only new records), and copies the records of the leaves in
// moving_ elsewhere: a store into one of those would be lost, so the
// buffer takes that write; a leaf not listed yet is planned after the
// store (under move_mu_) and reads the new value. The active buffer's
// lock, held exclusively for the store, keeps scans' snapshots whole; no
// log holds a record of k to replay over it (an entry leaves its map only
// at its merge). Returns 1 (updated), 0 (k absent), -1 (a buffer holds k,
// or a merge moves its leaf: the buffer takes the write).
template <class K>
int tree<K>::update_in_base(buffer& a, ukey k, uint64_t h, uint64_t word) {
  if (a.filter.bits && a.filter.maybe(h)) {
    std::shared_lock lk(a.mu);
    if (a.map.contains(k)) return -1;
  }
  const buffer* f = frozen_;  // immutable while it is frozen
  if (f && f->filter.bits && f->filter.maybe(h) && f->map.contains(k)) return -1;
  const uint64_t off = leaf_for(k);
  const leaf* l = at(off);
  prefetch_probe(l);
  const int i = slot_of(l, cur(l), k);
  if (i < 0) return 0;
  uint64_t* v = &slots(l)[i].value;
  std::unique_lock lk(a.mu);
  std::unique_lock ml(move_mu_, std::defer_lock);
  if (f) {
    ml.lock();
    if (moving_.contains(off)) return -1;
  }
  store_rel(v, word);
  if (!mut_.on(mutant::in_place_unflushed)) p_.persist(v, 8);
  in_place_.fetch_add(1, std::memory_order_relaxed);
  return 1;
}

// The active buffer is due but was not frozen (a merge runs): the writer
// waits for that merge, so the buffer stays near its threshold (the DRAM it
// takes, and the log room its carry may need, stay bounded). Without it,
// writers passing the structure lock in turn starve the merge thread's
// exclusive hold (the freeze after a commit), and the buffer grew to tens
// of times the threshold.
template <class K>
void tree<K>::throttle() {
  uint64_t g;
  {
    common::writer_gate::writer in(gate_, p_.thread_slot());
    if (!due(*active_)) return;
    g = gen_.load();
  }
  kick();  // a merge that failed is retried
  wait_merge(g);
}

template <class K>
bool tree<K>::put_bytes(std::string_view k, std::string_view v, wop o) {
  check_key(k);
  check_value(v);
  if constexpr (!k_bytes) {
    uint64_t was = 0;
    bool ok = write(key_u64(k), value_u64(v), o, &was);
    return o == wop::upsert ? !was : ok;
  } else {
    uint64_t kv = 0;
    for (unsigned tries = 0;; ++tries) {  // the record's block: as write() does for log room
      const uint64_t g = gen_.load();
      try {
        kv = common::make_kv_block(p_, k, v);
        break;
      } catch (const error& e) {
        if (e.code() != errc::pool_full || tries == k_forced_merges || !make_room(g, false)) throw;
      }
    }
    uint64_t was = 0;
    bool ok;
    try {
      ok = write(k, kv, o, &was);
    } catch (...) {
      p_.free(kv);
      throw;
    }
    if (!ok) p_.free(kv);
    return o == wop::upsert ? !was : ok;
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::dptree
