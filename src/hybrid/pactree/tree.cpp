// PACTree (see pactree.hpp): open and recovery, the per-thread SMO logs, the
// background SMO thread, and the public calls of both key kinds.
#include <bit>
#include <chrono>
#include <cstddef>

#include "hybrid/pactree/pactree.hpp"
#include "common/background_thread.hpp"
#include "common/root_block.hpp"
#include "sync/optimistic_lock.hpp"

namespace pmindex::hybrid::pactree {

using common::load_acq;
using common::store_rel;

namespace {
constexpr uint32_t k_log_full = (uint32_t{1} << k_log_entries) - 1;
}  // namespace

template <class K>
tree<K>::tree(pm::pool& p, open_kind kind, const index_config& cfg)
    : base(p), p_(p), mut_(cfg), layer_(p), busy_(new std::atomic<uint32_t>[k_max_logs]()) {
  spares_.reserve(k_spare_stash);
  cap_ = unsigned(cfg.u64("node"));
  safe_scan_ = cfg.get("scan") == "safe";
  layer_.skip_flushes(mut_.on(mutant::layer_unflushed));
  if (kind == open_kind::created) {
    uint64_t h = p_.alloc_or_throw(sizeof(dnode));
    std::memset(p_.template ptr<void>(h), 0, sizeof(dnode));
    at(h)->lock = uint64_t(gen_) << 32;
    p_.persist(at(h), offsetof(dnode, fp));  // empty: the header line is all recovery reads
    root_ = common::create_root<root_block>(p_, k_magic, [&](root_block& r) {
      r.gen = gen_;
      r.head = h;
      r.node_slots = cap_;
      r.layer = search_layer<anchors<K>>::leaf_word(h);  // the head's anchor, the smallest key
    });
    layer_.attach(&root_->layer);
  } else {
    const uint64_t ro = p_.root();
    if (p_.valid_block(ro, 8) && p_.template ptr<root_block>(ro)->magic == k_magic_v1)
      throw error(errc::bad_version,
                  "pactree: the pool has the DRAM search layer layout (an older pmindex); "
                  "recreate it with this version");
    root_ = common::attach_root<root_block>(p_, k_magic, "pactree");
    if (root_->node_slots != cap_) corrupt("node size in the pool does not match its parameters");
    uint64_t g = root_->gen + 1;
    if (uint32_t(g) == 0) ++g;  // 0 is never a generation
    p_.store_persist(&root_->gen, g);
    gen_ = uint32_t(g);
    layer_.attach(&root_->layer);
    if (kind == open_kind::dirty) {
      recover_logs();
      return;  // the SMO thread starts after the redo (after_recovery)
    }
  }
  bg_ = common::background_thread([this] { smo_thread(); });
}

template <class K>
tree<K>::~tree() {
  if (bg_.joinable()) {  // neither closed nor abandoned: the pool's own close follows
    stop_thread(true);
    free_spares();
  }
}

template <class K>
void tree<K>::close() {
  if (bg_.joinable()) stop_thread(true);  // every SMO applied, every log entry free
  free_spares();
  index::close();
}

template <class K>
void tree<K>::abandon() {
  if (bg_.joinable()) stop_thread(false);  // as a crash leaves it: queued SMOs stay logged
  index::abandon();
}

// ---------------------------------------------------------------- recovery

// Dirty open, before tracing (nothing may be allocated): every non-free log
// entry names a node an SMO was changing: clip it. A merge whose commit (n's
// next link past r) is durable left r out of the list: r is marked obsolete
// (prev = n) for the redo. The entries stay until redo_logs().
template <class K>
void tree<K>::recover_logs() {
  for (unsigned s = 0; s < k_max_logs; ++s) {
    uint64_t lo = root_->logs[s];
    if (!lo) continue;
    if (!p_.valid_block(lo, sizeof(smo_log))) corrupt("an SMO log outside the heap");
    auto* log = p_.template ptr<smo_log>(lo);
    for (auto& e : log->e) {
      if (e.kind == k_smo_free) continue;
      if (e.kind > k_smo_merge || !node_in_heap(e.left)) corrupt("a damaged SMO log entry");
      if (e.kind == k_smo_merge && (!node_in_heap(e.right) || e.right == e.left))
        corrupt("a damaged SMO log entry");
      clip(at(e.left));
      redo_.push_back(&e);
    }
  }
  for (smo_entry* e : redo_)
    if (e->kind == k_smo_merge && at(e->left)->next != e->right) {
      dnode* r = at(e->right);
      r->prev = e->left;
      r->lock = (uint64_t(gen_) << 32) | k_obsolete;
    }
  p_.fence();
}

// Dirty open, after tracing: what the SMO thread had not applied. Merges
// first: a victim the layer still names loses its leaf and is freed (one
// the layer no longer names was not traced: already free). Then the right
// neighbours without a leaf of each split node (or of the live node that
// absorbed it) get one: the nodes its unapplied splits made; their
// reserved blocks were freed by tracing, so the room for these inserts is
// there. Then the entries are freed.
template <class K>
void tree<K>::redo_logs() {
  char buf[8];
  for (smo_entry* e : redo_) {
    if (e->kind != k_smo_merge || !obsolete(at(e->right)->lock) || !traced_leaves_.count(e->right)) continue;
    dnode* r = at(e->right);
    layer_.erase(anchor_of(e->right, buf), e->right);
    if constexpr (K::k_blocks)
      if (r->low) p_.retire(r->low);
    p_.retire(e->right);
    ++redone_;
  }
  for (smo_entry* e : redo_) {
    if (e->kind != k_smo_split) continue;
    // A split node a logged merge took: its nodes follow the node that
    // absorbed it (prev, set by recover_logs(); that one may be gone too).
    uint64_t from = e->left;
    for (unsigned hops = 0; obsolete(at(from)->lock); ++hops) {
      if (hops > redo_.size()) corrupt("a cycle of merged nodes in the SMO logs");
      from = at(from)->prev;
    }
    for (uint64_t y = at(from)->next; y; y = at(y)->next) {
      const std::string_view a = anchor_of(y, buf);
      if (layer_.slot_of(a, y)) break;
      uint64_t spare = p_.alloc(layer_.spare_size(a.size()));
      auto how = layer_.insert(a, y, spare);
      if (how != search_layer<anchors<K>>::put::placed_in_spare && spare) p_.free(spare);
      if (how == search_layer<anchors<K>>::put::no_room)
        throw error(errc::pool_full, "pactree: no room to redo a search-layer insert after the crash");
      ++redone_;
    }
  }
  for (smo_entry* e : redo_) {
    store_rel(&e->kind, uint64_t(k_smo_free));
    p_.flush(&e->kind, 8);
  }
  p_.fence();
  redo_.clear();
  traced_leaves_.clear();
  p_.quiesce();  // no reader exists yet: what the redo retired is free now (no leak left for a checker to see)
}

template <class K>
bool tree<K>::after_recovery() {
  const bool work = !redo_.empty();
  redo_logs();
  bg_ = common::background_thread([this] { smo_thread(); });
  return work;
}

// ---------------------------------------------------------------- SMO log

template <class K>
typename tree<K>::smo tree<K>::log_begin(smo_kind kind, uint64_t left, uint64_t right) {
  const uint32_t s = p_.thread_slot();
  {  // room in the queue for this slot's entries, first (may throw bad_alloc: nothing is taken yet)
    std::lock_guard lk(q_mu_);
    if (ring_counted_.empty()) ring_counted_.resize(k_max_logs);
    if (!ring_counted_[s]) {
      grow_ring(k_log_entries);
      ring_counted_[s] = true;
    }
  }
  uint64_t lo = load_acq(&root_->logs[s]);
  if (!lo) {  // this slot's first SMO: its log block, durable before the root names it
    lo = p_.alloc_or_throw(sizeof(smo_log));
    std::memset(p_.template ptr<void>(lo), 0, sizeof(smo_log));
    p_.flush(p_.template ptr<void>(lo), sizeof(smo_log));
    p_.fence();
    p_.store_persist(&root_->logs[s], lo);
  } else if (!p_.valid_block(lo, sizeof(smo_log))) {
    corrupt("an SMO log outside the heap");
  }
  uint32_t b;
  for (unsigned spins = 0; (b = busy_[s].load(std::memory_order_acquire)) == k_log_full; ++spins) {
    q_cv_.notify_one();  // every entry waits for the SMO thread
    sync::optimistic_lock::backoff(spins);
  }
  unsigned i = unsigned(std::countr_zero(~b));
  busy_[s].fetch_or(uint32_t{1} << i, std::memory_order_relaxed);
  smo_entry* e = &p_.template ptr<smo_log>(lo)->e[i];
  e->left = left;
  e->right = right;
  if ((reinterpret_cast<uintptr_t>(e) & 63) > 64 - 3 * 8) p_.persist(&e->left, 16);  // left, right: another line
  store_rel(&e->kind, uint64_t(kind));  // after left and right: a line holding kind holds them
  p_.persist(e, 24);
  return smo{kind, left, right, e, s, i, 0};
}

template <class K>
void tree<K>::log_release(const smo& s) {
  if (!s.e) return;  // mutant split_unlogged
  store_rel(&s.e->kind, uint64_t(k_smo_free));
  p_.persist(&s.e->kind, 8);
  busy_[s.log_slot].fetch_and(~(uint32_t{1} << s.pos), std::memory_order_release);
}

// ---------------------------------------------------------------- SMO thread

template <class K>
void tree<K>::grow_ring(size_t by) {
  std::vector<smo> r(ring_.size() + by);
  for (size_t i = 0; i < q_len_; ++i) r[i] = ring_[(q_head_ + i) % ring_.size()];
  ring_.swap(r);
  q_head_ = 0;
}

template <class K>
void tree<K>::queue(const smo& s) {
  std::lock_guard lk(q_mu_);  // taken under the SMO's node locks: the queue is in SMO order
  // Full only for a split without a log entry (mutant split_unlogged); an
  // SMO with one has its room since its log_begin.
  if (q_len_ == ring_.size()) grow_ring(k_log_entries);
  ring_[(q_head_ + q_len_++) % ring_.size()] = s;
  q_cv_.notify_one();
}

template <class K>
void tree<K>::smo_thread() {
  std::unique_lock lk(q_mu_);
  for (;;) {
    q_cv_.wait(lk, [&] { return stop_ || (q_len_ && !held_) || room_done_ != room_req_; });
    // A writer met a full pool (make_room): served once the queue is
    // applied (the merges in it free nodes; the splits take layer blocks).
    if (room_done_ != room_req_ && (!q_len_ || held_ || stop_)) {
      const uint64_t r = room_req_;
      lk.unlock();
      p_.collect();        // what this thread retired (merged nodes, replaced layer nodes), grace permitting
      p_.release_cache();  // and what it freed (spares past the stash): back to the heap
      lk.lock();
      room_done_ = r;
      idle_cv_.notify_all();
      continue;
    }
    if (!q_len_ || (stop_ && !drain_on_stop_)) break;
    const smo s = ring_[q_head_];
    q_head_ = (q_head_ + 1) % ring_.size();
    --q_len_;
    applying_ = true;
    lk.unlock();
    apply(s);
    lk.lock();
    applying_ = false;
    if (!q_len_) idle_cv_.notify_all();
  }
  applying_ = false;
  idle_cv_.notify_all();
}

// Search layer first, then the log entry: a crash in between leaves an
// entry whose clip and redo find nothing to do.
template <class K>
void tree<K>::apply(const smo& s) {
  dnode* r = at(s.right);
  char buf[8];
  const std::string_view a = anchor_of(s.right, buf);
  if (s.kind == k_smo_split) {
    using put = typename search_layer<anchors<K>>::put;
    put how = layer_.insert(a, s.right, s.spare);
    if (how == put::placed_in_spare) layer_spares_.fetch_add(1, std::memory_order_relaxed);
    else if (s.spare) stash_spare(s.spare);
    PMINDEX_ASSERT(how != put::no_room);  // the spare always fits
    log_release(s);
  } else {
    layer_.erase(a, s.right);
    // r is out of the list and out of the layer (durably): the entry goes
    // first (a crash after it: tracing frees r; before it: r is still
    // allocated when recovery reads it), then r is retired: readers that
    // still hold it are pinned; it is freed after them.
    log_release(s);
    if constexpr (K::k_blocks)
      if (r->low) p_.retire(r->low);
    p_.retire(s.right);
  }
  applied_.fetch_add(1, std::memory_order_relaxed);
}

template <class K>
void tree<K>::hold_smo(bool on) {
  std::lock_guard lk(q_mu_);
  held_ = on;
  q_cv_.notify_one();
}

template <class K>
void tree<K>::stop_thread(bool drain) {
  {
    std::lock_guard lk(q_mu_);
    stop_ = true;
    drain_on_stop_ = drain;
    q_cv_.notify_one();
  }
  bg_.join();
}

// ---------------------------------------------------------------- room

// Space a remove gives back reaches the heap late and in pieces: blocks
// retired wait for their grace period in the limbo of the thread that
// retired them (merged nodes: the SMO thread's), reclaimed blocks stay in
// that thread's cache, and a chunk serves another size class only once
// all its blocks are back. A writer that meets a full pool, unpinned,
// advances the epochs (twice: what was retired before is then expired),
// asks the SMO thread to reclaim and give back what it holds, gives back
// its own, and retries (k_room_attempts times: what the SMO thread and the
// other writers still held at one round may be back at the next).
// A round that gave the heap nothing back ends the retries: the pool is
// full of live data (a byte-key update in a full pool, which needs a block
// for its copy, met ~600,000 rounds in a refill test, three per update).
template <class K>
template <class F>
auto tree<K>::with_room(F&& f) -> decltype(f()) {
  for (unsigned attempt = 0;; ++attempt) {
    std::exception_ptr full;
    try {
      return f();
    } catch (const error& e) {
      if (e.code() != errc::pool_full || attempt == k_room_attempts) throw;
      full = std::current_exception();
    }
    const uint64_t used = p_.usage().used_bytes;
    make_room();
    if (p_.usage().used_bytes >= used) std::rethrow_exception(full);
  }
}

template <class K>
void tree<K>::make_room() {
  room_calls_.fetch_add(1, std::memory_order_relaxed);
  auto& ep = p_.epochs();
  const uint64_t g = ep.global_epoch();
  for (unsigned spins = 0; spins < 256 && ep.global_epoch() < g + 2; ++spins) {
    p_.collect();
    sync::optimistic_lock::backoff(spins);  // a pinned thread moves on
  }
  {
    std::unique_lock lk(q_mu_);
    if (bg_.joinable() && !stop_) {
      const uint64_t r = ++room_req_;
      q_cv_.notify_one();
      idle_cv_.wait(lk, [&] { return room_done_ >= r || stop_; });
    }
  }
  p_.collect();
  free_spares();  // the stash's blocks hold chunks of their class (and in flight, a split takes a new one)
  p_.release_cache();
}

template <class K>
uint64_t tree<K>::take_spare(size_t n) {
  {
    std::lock_guard lk(spare_mu_);
    for (size_t i = 0; i < spares_.size(); ++i)
      if (p_.block_size(spares_[i]) >= n) {
        const uint64_t off = spares_[i];
        spares_[i] = spares_.back();
        spares_.pop_back();
        return off;
      }
  }
  // A new one: the thread's cache takes a batch of this large class (64
  // blocks: 2.5 chunks) with it; given back at once, they leave the chunks
  // free for other sizes. Rare: the stash is empty only at the start and
  // after make_room emptied it.
  const uint64_t off = p_.alloc(n);
  p_.release_cache();
  return off;
}

template <class K>
void tree<K>::stash_spare(uint64_t off) noexcept {
  {
    std::lock_guard lk(spare_mu_);
    if (spares_.size() < k_spare_stash) {  // within the capacity reserved at construction
      spares_.push_back(off);
      return;
    }
  }
  p_.free(off);
}

// Unreachable blocks: a crash leaves them to tracing; a clean close frees them.
template <class K>
void tree<K>::free_spares() noexcept {
  std::lock_guard lk(spare_mu_);
  for (uint64_t off : spares_) p_.free(off);
  spares_.clear();
}

template <class K>
void tree<K>::drain_smo() {
  std::unique_lock lk(q_mu_);
  idle_cv_.wait(lk, [&] { return (!q_len_ && !applying_) || !bg_.joinable(); });
}

// ---------------------------------------------------------------- calls

// The u64 calls: native with keys=u64 (pinned: merged nodes are retired),
// through the byte calls with keys=bytes.
template <class K>
bool tree<K>::insert(uint64_t k, uint64_t v) {
  if constexpr (K::k_blocks) return bytes_index::insert(k, v);
  else return with_room([&] { return pinned([&] { return insert_word(k, v); }); });
}

template <class K>
bool tree<K>::update(uint64_t k, uint64_t v) {
  uint64_t old;
  if constexpr (K::k_blocks) return bytes_index::update(k, v);
  else return pinned([&] { return update_word(k, v, old); });
}

// keys=bytes: a new record block, a split's blocks (insert), the new value's
// block (update); keys=u64 goes to the u64 calls above.
template <class K>
bool tree<K>::insert(std::string_view k, std::string_view v) {
  if constexpr (K::k_blocks) return with_room([&] { return base::insert(k, v); });
  else return base::insert(k, v);
}

template <class K>
bool tree<K>::update(std::string_view k, std::string_view v) {
  if constexpr (K::k_blocks) return with_room([&] { return base::update(k, v); });
  else return base::update(k, v);
}

template <class K>
bool tree<K>::remove(uint64_t k) {
  uint64_t old;
  if constexpr (K::k_blocks) return bytes_index::remove(k);
  else return pinned([&] { return remove_word(k, old); });
}

template <class K>
std::optional<uint64_t> tree<K>::lookup(uint64_t k) {
  if constexpr (K::k_blocks) {
    return bytes_index::lookup(k);
  } else {
    auto g = p_.pin();
    for (;;) {
      uint64_t v;
      const dnode* n = locate(k, v);
      int i = find_slot(n, k);
      uint64_t val = i >= 0 ? load_acq(&n->slot[i].value) : 0;
      if (validate(n, v)) return i >= 0 ? std::optional<uint64_t>(val) : std::nullopt;
    }
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
    const probe pk = K::make(k);
    for (;;) {
      uint64_t ver;
      const dnode* n = locate(pk, ver);
      int i = find_slot(n, pk);
      uint64_t kv = i >= 0 ? load_acq(&n->slot[i].value) : 0;
      if (!validate(n, ver)) continue;
      if (i >= 0 && v) v->assign(common::kv_value(p_, kv));  // blocks are immutable and pinned
      return i >= 0;
    }
  }
}

template class tree<detail::u64_keys>;
template class tree<detail::byte_keys>;

}  // namespace pmindex::hybrid::pactree
