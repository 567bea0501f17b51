// DPTree (see dptree.hpp): open and recovery (stamps, leaf chain, log
// replay), the buffer's write path and the public calls of both key kinds.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>

#include "hybrid/dptree/dptree.hpp"
#include "common/atomics.hpp"
#include "common/root_block.hpp"
#include "pmindex/util/hash.hpp"

namespace pmindex::hybrid::dptree {

using common::load_acq;
using common::store_rel;

namespace {
constexpr uint32_t k_layer_fanout = 64;
constexpr uint32_t k_remove_reserve = 2;  // log chunks a remove may take from a full pool
constexpr unsigned k_forced_merges = 6;   // merges a remove may force in a full pool
}  // namespace

// ---------------------------------------------------------------- bloom filter

template <class K>
void tree<K>::bloom::reset(uint64_t want) {
  uint64_t b = std::bit_ceil(std::clamp<uint64_t>(want, 4096, uint64_t{1} << 32));
  if (b != bits) {
    w.reset(new std::atomic<uint64_t>[b / 64]);
    bits = b;
  }
  for (uint64_t i = 0; i < bits / 64; ++i) w[i].store(0, std::memory_order_relaxed);
}

namespace {
// The word of h (its low bits) and its two bits in it (bits 40-51: apart
// from the word's bits and from the stripe's, bits 60-63).
inline uint64_t bloom_mask(uint64_t h) noexcept { return uint64_t{1} << (h >> 40 & 63) | uint64_t{1} << (h >> 46 & 63); }
}  // namespace

template <class K>
void tree<K>::bloom::add(uint64_t h) noexcept {
  std::atomic<uint64_t>& x = w[h & (bits / 64 - 1)];
  const uint64_t m = bloom_mask(h);
  if ((x.load(std::memory_order_relaxed) & m) != m) x.fetch_or(m, std::memory_order_relaxed);
}

template <class K>
bool tree<K>::bloom::maybe(uint64_t h) const noexcept {
  const uint64_t m = bloom_mask(h);
  return (w[h & (bits / 64 - 1)].load(std::memory_order_relaxed) & m) == m;
}

template <class K>
uint64_t tree<K>::hash(ukey k) noexcept {
  if constexpr (k_bytes) {
    // Eight bytes at a time through mix64 (std::hash may differ between
    // library versions; a key's stripe must not).
    uint64_t h = util::mix64(k.size() ^ 0x445054737472ull);
    size_t i = 0;
    for (; i + 8 <= k.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, k.data() + i, 8);
      h = util::mix64(h ^ w);
    }
    if (i < k.size()) {
      uint64_t w = 0;
      std::memcpy(&w, k.data() + i, k.size() - i);
      h = util::mix64(h ^ w ^ (uint64_t{1} << 63));
    }
    return h;
  } else {
    return util::mix64(k);
  }
}

template <class K>
int64_t tree<K>::live() const noexcept {
  int64_t n = live0_;
  for (unsigned s = 0; s < k_stripes; ++s) n += stripes_[s].live.load(std::memory_order_relaxed);
  return n;
}

template <class K>
std::vector<std::unique_lock<std::mutex>> tree<K>::lock_stripes() {
  std::vector<std::unique_lock<std::mutex>> v;
  v.reserve(k_stripes);
  for (unsigned s = 0; s < k_stripes; ++s) v.emplace_back(stripes_[s].mu);
  return v;
}

// ---------------------------------------------------------------- open

template <class K>
tree<K>::tree(pm::pool& p, open_kind kind, const index_config& cfg) : bytes_index(p), p_(p), mut_(cfg) {
  cap_ = unsigned(cfg.u64("leaf"));
  nslots_ = std::min(k_slots, 2 * cap_);
  merge_min_ = cfg.u64("merge_min");
  merge_permille_ = cfg.u64("merge_permille");
  fail_leaves_ = cfg.u64("fail_leaves");
  p_.keep_for_removes(sizeof(log_chunk), k_remove_reserve);
  if (kind == open_kind::created) {
    uint64_t h = new_leaf();
    p_.persist(at(h), 64 + 64);  // stamp {0, copy 0}, copy 0 empty
    uint64_t logs[2][k_stripes];
    for (auto& ls : logs)
      for (auto& l : ls) {
        l = p_.alloc_or_throw(sizeof(log_chunk));
        chunk_at(l)->next = 0;
        p_.flush(chunk_at(l), 64);  // its records: garbage the checksum refuses
      }
    p_.fence();
    root_ = common::create_root<root_block>(p_, k_magic, [&](root_block& r) {
      r.gen = 0;
      r.head = h;
      r.leaf_cap = cap_;
      r.stripes = k_stripes;
      std::memcpy(r.log, logs, sizeof(logs));
    });
    leaves_ = {h};
    for (unsigned s = 0; s < k_stripes; ++s)
      for (unsigned li = 0; li < 2; ++li) {
        stripes_[s].tail[li] = chunk_at(logs[li][s]);
        stripes_[s].cap[li] = k_chunk_recs;
      }
    rebuild_layer();
    for (auto& b : bufs_) b.filter.reset(16 * threshold());
    active_->tag = 0;
    for (unsigned s = 0; s < k_stripes; ++s) active_->cur[s].chunk = chunk_at(logs[0][s]);
  } else {
    const uint64_t ro = p_.root();
    const uint64_t magic = p_.valid_block(ro, 8) ? *p_.template ptr<uint64_t>(ro) : 0;
    if (magic == k_magic_v1 || magic == k_magic_v2)
      throw error(errc::bad_version,
                  std::string("dptree: the pool has the layout ") +
                      (magic == k_magic_v1 ? "before base-leaf fingerprints" : "with one log per buffer") +
                      " (an older pmindex); recreate it with this version");
    root_ = common::attach_root<root_block>(p_, k_magic, "dptree");
    if (root_->leaf_cap != cap_) corrupt("leaf size in the pool does not match its parameters");
    if (root_->stripes != k_stripes) corrupt("the pool's log stripes do not match this build");
    for (auto& ls : root_->log)
      for (uint64_t l : ls)
        if (!p_.valid_block(l, sizeof(log_chunk))) corrupt("a log outside the heap");
    gen_ = root_->gen;
    for (unsigned s = 0; s < k_stripes; ++s)
      for (unsigned li = 0; li < 2; ++li) measure_log(s, li);
    recover_leaves(kind == open_kind::dirty);
    live0_ = int64_t(base_records_);
    for (auto& b : bufs_) b.filter.reset(16 * threshold());
    const uint64_t g = gen_;
    // The buffer of tag gen, then (if a merge was running) that of gen + 1.
    bufs_[0].tag = g;
    active_ = &bufs_[0];
    size_t n0 = replay(bufs_[0], g);
    bufs_[1].tag = g + 1;
    frozen_ = &bufs_[0];
    active_ = &bufs_[1];
    size_t n1 = replay(bufs_[1], g + 1);
    if (n1 == 0) {
      active_ = &bufs_[0];
      frozen_ = nullptr;
    } else {
      resume_ = true;  // the merge resumes at the first call (after tracing)
    }
    replayed_ = n0 + n1;
  }
}

template <class K>
tree<K>::~tree() {
  if (bg_.joinable()) stop_thread(true);
}

template <class K>
uint64_t tree<K>::new_leaf() {
  uint64_t s = p_.alloc_or_throw(nslots_ * sizeof(entry));
  uint64_t off = p_.alloc(sizeof(leaf));
  if (!off) {
    p_.free(s);
    throw error(errc::pool_full, "dptree: the pool is full");
  }
  leaf* l = at(off);
  std::memset(static_cast<void*>(l), 0, sizeof(leaf));
  l->slots = s;
  return off;
}

template <class K>
void tree<K>::free_leaf(uint64_t off) {
  p_.free(at(off)->slots);
  p_.free(off);
}

template <class K>
unsigned tree<K>::cur_copy(const leaf* l) const noexcept {
  uint64_t st = load_acq(&l->stamp);
  unsigned s = unsigned(st & 1);
  return (st >> 1) <= gen_.load(std::memory_order_relaxed) ? s : 1 - s;
}

template <class K>
uint64_t tree<K>::threshold() const noexcept {
  return std::max<uint64_t>(merge_min_, base_records_ * merge_permille_ / 1000);
}

// ---------------------------------------------------------------- recovery

// Every open: stamps left by a merge that did not commit (gen > root.gen)
// name the other copy; they are reset to the current one. Then the chain is
// walked at the current version (words checked before they are followed),
// counted, and the inner nodes built.
template <class K>
void tree<K>::recover_leaves(bool dirty) {
  (void)dirty;
  const uint64_t g = gen_;
  bool fixed = false;
  leaves_.clear();
  base_records_ = 0;
  for (uint64_t off = root_->head; off;) {
    if (!leaf_in_heap(off)) corrupt("a leaf link outside the heap");
    if (leaves_.size() > p_.size() / sizeof(leaf)) corrupt("the leaf chain has a cycle");
    leaf* l = at(off);
    if (!p_.valid_block(l->slots, nslots_ * sizeof(entry))) corrupt("a slot block outside the heap");
    if ((l->stamp >> 1) > g) {
      l->stamp = (g << 1) | (1 - (l->stamp & 1));
      p_.flush(&l->stamp, 8);
      fixed = true;
    }
    const meta& m = cur(l);
    if (m.count > cap_) corrupt("a leaf with more records than its size");
    for (unsigned j = 0; j < m.count; ++j) {
      if (m.order[j] >= nslots_) corrupt("a leaf's order names a slot past its end");
      if constexpr (k_bytes)
        if (!K::valid_record(p_, slots(l)[m.order[j]].value)) corrupt("a record block outside the heap");
    }
    base_records_ += m.count;
    leaves_.push_back(off);
    off = m.next;
  }
  if (fixed) p_.fence();
  rebuild_layer();
}

// The inner nodes over leaves_ (each leaf routed by its smallest key; the
// head by the smallest key of all). Not concurrent with readers.
template <class K>
void tree<K>::rebuild_layer() {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<typename K::key, uint64_t>> v;
  v.reserve(leaves_.size());
  for (size_t i = 0; i < leaves_.size(); ++i) {
    const leaf* l = at(leaves_[i]);
    const meta& m = cur(l);
    if (i == 0)
      v.emplace_back(K::k_min, leaves_[i]);
    else if (m.count)
      v.emplace_back(layer_key(slots(l)[m.order[0]]), leaves_[i]);
  }
  auto layer = std::make_unique<detail::inner_layer<K>>(k_layer_fanout);
  layer->build(v);
  layer_ = std::move(layer);
  rebuild_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class K>
uint64_t tree<K>::checksum(const log_rec& r) noexcept {
  uint64_t h = util::mix64(r.tag ^ 0x44505472656331ull);
  h = util::mix64(h ^ r.op);
  h = util::mix64(h ^ r.value);
  return util::mix64(h ^ r.key) | 1;  // never 0: a zeroed line is no record
}

template <class K>
uint64_t tree<K>::block_hash(uint64_t off) const noexcept {
  const auto* b = common::kv_at(p_, off);
  std::string_view all(reinterpret_cast<const char*>(b), common::kv_block_bytes(b->klen, b->vlen));
  return util::mix64(std::hash<std::string_view>{}(all));
}

// keys=bytes: the record's block is a block with the contents it had when
// the record was written.
template <class K>
bool tree<K>::block_ok(const log_rec& r) const noexcept {
  if constexpr (k_bytes)
    return K::valid_record(p_, r.key) && block_hash(r.key) == r.value;
  else
    return true;
}

// Log li of stripe s: its last chunk and the records its chunks hold (links checked).
template <class K>
void tree<K>::measure_log(unsigned s, unsigned li) {
  log_chunk* c = chunk_at(root_->log[li][s]);
  uint64_t chunks = 1;
  for (uint64_t nx; (nx = c->next) != 0; ++chunks) {
    if (!p_.valid_block(nx, sizeof(log_chunk))) corrupt("a log chunk outside the heap");
    if (chunks > p_.size() / sizeof(log_chunk)) corrupt("a log with a cycle");
    c = chunk_at(nx);
  }
  stripes_[s].tail[li] = c;
  stripes_[s].cap[li] = chunks * k_chunk_recs;
}

// Applies the records of b's logs (tag b.tag), stripe by stripe, each from
// its start, in order, up to the first that is not one (another tag, a bad
// checksum: the end of what was written, or a torn last record); b's
// cursors are left there. A key's records are all in its stripe's log, so
// the order of the stripes does not matter.
template <class K>
size_t tree<K>::replay(buffer& b, uint64_t tag) {
  size_t n = 0;
  for (unsigned s = 0; s < k_stripes; ++s) {
    cursor& c = b.cur[s];
    c.chunk = chunk_at(root_->log[tag % 2][s]);
    c.pos = 0;
    size_t chunks = 0, here = 0;
    for (;;) {
      if (c.pos == k_chunk_recs) {
        uint64_t nx = c.chunk->next;
        if (!nx) break;  // the end: the next append links a chunk
        if (!p_.valid_block(nx, sizeof(log_chunk))) corrupt("a log chunk outside the heap");
        if (++chunks > p_.size() / sizeof(log_chunk)) corrupt("a log with a cycle");
        c.chunk = chunk_at(nx);
        c.pos = 0;
      }
      const log_rec& r = c.chunk->r[c.pos];
      if (r.tag != tag || r.check != checksum(r) || (r.op != k_upsert && r.op != k_remove)) break;
      ukey k;
      if constexpr (k_bytes) {
        // The block was flushed under the record's fence, not before it: a
        // record of a write in flight may be durable without its block.
        if (!block_ok(r)) break;
        k = common::kv_key(p_, r.key);
      } else {
        k = r.key;
      }
      const uint64_t h = hash(k);
      if (stripe_of(h) != s) corrupt("a log record in the log of another stripe");
      const bool tomb = r.op == k_remove;
      uint64_t w = 0;
      bool present = find(k, h, &w);
      // keys=bytes: a remove naming a block the key does not hold any more
      // had an owner that a partial merge did not carry (trace()): the block
      // is this buffer's to free once its merge commits.
      if constexpr (k_bytes)
        if (tomb && (!present || w != r.key)) b.garbage.push_back(r.key);
      if (frozen_ && !tomb) {  // the newer log: an upsert that a carry copied from the frozen one?
        auto it = frozen_->map.find(k);
        if (it != frozen_->map.end() && !it->second.tomb && it->second.word == (k_bytes ? r.key : r.value) &&
            !b.map.contains(k)) {
          b.carried.fetch_add(1, std::memory_order_relaxed);
          if constexpr (k_bytes) recarried_.insert(r.key);
        }
      }
      apply(b, s, k, h, k_bytes ? r.key : r.value, tomb);
      stripes_[s].live.fetch_add(tomb ? -int64_t(present) : !present, std::memory_order_relaxed);
      ++c.pos;
      ++here;
    }
    c.used = here;
    n += here;
  }
  return n;
}

// ---------------------------------------------------------------- base reads

template <class K>
unsigned tree<K>::lower(const leaf* l, const meta& m, ukey k, bool* found) const noexcept {
  unsigned lo = 0, hi = unsigned(std::min<uint64_t>(m.count, k_slots));
  const entry* s = slots(l);
  auto below = [&](const entry& e) {
    if constexpr (k_bytes) {
      // The slot's key word is its key's prefix: a block (a miss of its
      // own, one per step of the search) is read only on a tie.
      const uint64_t kp = detail::key_prefix(k), ep = __atomic_load_n(&e.key, __ATOMIC_RELAXED);
      if (ep != kp) return ep < kp;
    }
    return key_of(e) < k;
  };
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    if (below(s[m.order[mid]]))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (found) *found = lo < m.count && key_of(s[m.order[lo]]) == k;
  return lo;
}

template <class K>
uint64_t tree<K>::leaf_for(ukey k) const noexcept {
  if constexpr (k_bytes)
    return layer_->find(K::make(k));
  else
    return layer_->find(k);
}

// One 64-byte compare per 64 slots (nslots_ <= 256; the fingerprint array
// always has 256 bytes, so the last line is whole); a slot outside m's
// bitmap is masked out whatever its byte (a merge may be writing it).
template <class K>
int tree<K>::slot_of(const leaf* l, const meta& m, ukey k) const noexcept {
  const uint8_t f = fp_of(k);
  const entry* s = slots(l);
  uint64_t word;  // the slot's key word: u64 the key, bytes its prefix
  if constexpr (k_bytes)
    word = detail::key_prefix(k);
  else
    word = k;
  for (unsigned g = 0; g * 64 < nslots_; ++g) {
    for (uint64_t hit = detail::match_bytes64(l->fp + 64 * g, f) & m.bitmap[g]; hit; hit &= hit - 1) {
      const unsigned i = 64 * g + unsigned(std::countr_zero(hit));
      if (s[i].key != word) continue;
      if constexpr (k_bytes)
        if (key_of(s[i]) != k) continue;
      return int(i);
    }
  }
  return -1;
}

// Caller holds the structure lock (shared): the base is the current version.
template <class K>
bool tree<K>::base_find(ukey k, uint64_t* word) const noexcept {
  const leaf* l = at(leaf_for(k));
  const int i = slot_of(l, cur(l), k);
  if (i >= 0 && word) *word = __atomic_load_n(&slots(l)[i].value, __ATOMIC_ACQUIRE);  // updates in place
  return i >= 0;
}

// The newest state of k: the active buffer, the frozen one, the base. The
// caller is inside the structure lock and holds no buffer lock; the active
// buffer's is taken (shared) only when its filter names k (an entry is in
// the filter before it is in the map: a reader the filter turns away reads
// before that write); the frozen buffer is immutable.
template <class K>
bool tree<K>::find(ukey k, uint64_t h, uint64_t* word, bool* upsert_in_active) {
  auto in = [&](buffer& b, int& res) {
    auto it = b.map.find(k);
    if (it == b.map.end()) return false;
    res = it->second.tomb ? 0 : 1;
    if (res && word) *word = it->second.word;
    return true;
  };
  int res = 0;
  buffer& a = *active_;
  if (a.filter.bits && a.filter.maybe(h)) {
    std::shared_lock lk(a.mu);
    if (in(a, res)) {
      if (upsert_in_active) *upsert_in_active = res;
      return res;
    }
  }
  if (upsert_in_active) *upsert_in_active = false;
  if (frozen_ && frozen_->filter.bits && frozen_->filter.maybe(h) && in(*frozen_, res)) return res;
  return base_find(k, word);
}

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
    const bool present = find(k, h, &cur_word, &had);
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

// ---------------------------------------------------------------- calls

template <class K>
bool tree<K>::insert(uint64_t k, uint64_t v) {
  if constexpr (k_bytes)
    return bytes_index::insert(k, v);
  else
    return write(k, v, wop::insert, nullptr);
}

template <class K>
bool tree<K>::update(uint64_t k, uint64_t v) {
  if constexpr (k_bytes)
    return bytes_index::update(k, v);
  else
    return write(k, v, wop::update, nullptr);
}

template <class K>
bool tree<K>::upsert(uint64_t k, uint64_t v) {
  if constexpr (k_bytes) {
    return bytes_index::upsert(k, v);
  } else {
    uint64_t was = 0;
    write(k, v, wop::upsert, &was);
    return !was;
  }
}

template <class K>
bool tree<K>::remove(uint64_t k) {
  if constexpr (k_bytes)
    return bytes_index::remove(k);
  else
    return write(k, 0, wop::remove, nullptr);
}

template <class K>
std::optional<uint64_t> tree<K>::lookup(uint64_t k) {
  if constexpr (k_bytes) {
    return bytes_index::lookup(k);
  } else {
    common::writer_gate::writer in(gate_, p_.thread_slot());
    uint64_t w = 0;
    const bool found = find(k, hash(k), &w);
    return found ? std::optional<uint64_t>(w) : std::nullopt;
  }
}

template <class K>
bool tree<K>::insert(std::string_view k, std::string_view v) {
  return put_bytes(k, v, wop::insert);
}

template <class K>
bool tree<K>::update(std::string_view k, std::string_view v) {
  return put_bytes(k, v, wop::update);
}

template <class K>
bool tree<K>::upsert(std::string_view k, std::string_view v) {
  return put_bytes(k, v, wop::upsert);
}

template <class K>
bool tree<K>::remove(std::string_view k) {
  check_key(k);
  if constexpr (!k_bytes)
    return remove(key_u64(k));
  else
    return write(k, 0, wop::remove, nullptr);
}

template <class K>
bool tree<K>::lookup(std::string_view k, std::string* v) {
  check_key(k);
  if constexpr (!k_bytes) {
    auto r = lookup(key_u64(k));
    if (r && v) v->assign(value_bytes(*r));
    return r.has_value();
  } else {
    // Blocks are freed only after a commit, which closes the structure lock.
    common::writer_gate::writer in(gate_, p_.thread_slot());
    uint64_t w = 0;
    const bool found = find(k, hash(k), &w);
    if (found && v) v->assign(common::kv_value(p_, w));
    return found;
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::dptree
