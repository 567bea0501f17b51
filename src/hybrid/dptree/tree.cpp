// DPTree (see dptree.hpp): open and recovery (stamps, leaf chain, log
// replay), base reads and the public calls of both key kinds; the buffer's
// write path is write.cpp.
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>

#include "hybrid/dptree/dptree.hpp"
#include "common/prefetch.hpp"
#include "common/atomics.hpp"
#include "common/root_block.hpp"
#include "pmindex/util/hash.hpp"

namespace pmindex::hybrid::dptree {

using common::load_acq;
using common::store_rel;

namespace {
constexpr uint32_t k_layer_fanout = 64;
constexpr uint32_t k_remove_reserve = 2;  // log chunks a remove may take from a full pool
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

// A probe reads the stamp's line, then the current copy's first line, then
// the fingerprint lines: asked for together, their misses overlap instead
// of following one another.
template <class K>
void tree<K>::prefetch_probe(const leaf* l) const noexcept {
  __builtin_prefetch(l);
  __builtin_prefetch(&l->m[0]);
  __builtin_prefetch(&l->m[1]);
  common::prefetch_lines(l->fp, nslots_);
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
  prefetch_probe(l);
  return base_find(l, k, word);
}

template <class K>
bool tree<K>::base_find(const leaf* l, ukey k, uint64_t* word) const noexcept {
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
bool tree<K>::find(ukey k, uint64_t h, uint64_t* word, bool* upsert_in_active, bool likely_absent) {
  auto in = [&](buffer& b, int& res) {
    auto it = b.map.find(k);
    if (it == b.map.end()) return false;
    res = it->second.tomb ? 0 : 1;
    if (res && word) *word = it->second.word;
    return true;
  };
  // The base leaf is asked for first: its misses overlap the filters'
  // (most keys are not in a buffer, so most finds end in the base). An
  // insert's key is usually in no part: the base filter answers for the
  // base, and the leaf is read only if it names the key.
  const bloom* bf = likely_absent ? base_filter_.get() : nullptr;
  const leaf* l = nullptr;
  if (!bf) {
    l = at(leaf_for(k));
    prefetch_probe(l);
  } else {  // three filters, three misses: asked for together
    active_->filter.prefetch(h);
    if (frozen_) frozen_->filter.prefetch(h);
    bf->prefetch(h);
  }
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
  if (bf) {
    if (!bf->maybe(h)) return false;
    return base_find(k, word);
  }
  return base_find(l, k, word);
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
