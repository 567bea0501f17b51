#include "pmindex/alloc/heap.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "pmindex/error.hpp"
#include "pmindex/pm/detail/header.hpp"

namespace pmindex::alloc {

using pm::detail::k_chunk_free;
using pm::detail::k_large_head;
using pm::detail::k_large_tail;
static_assert(pm::detail::k_chunk_size == 64 * 1024);
static_assert(pm::detail::k_bitmap_bytes == 64 * 1024 / 16 / 8);

namespace {
uint32_t blocks_per_chunk(unsigned cls) {
  return static_cast<uint32_t>(64 * 1024 / class_size(cls));
}
bool is_small(uint32_t kind) { return kind != k_chunk_free && kind <= k_nclasses; }
[[noreturn]] void corrupt(const std::string& what, uint64_t off) {
  throw error(errc::corrupt, "recovery: " + what + " at pool offset " + std::to_string(off));
}
}  // namespace

heap::heap(char* base, uint64_t heap_offset, uint64_t nchunks)
    : base_(base),
      heap_offset_(heap_offset),
      nchunks_(nchunks),
      batch_(uint32_t(std::clamp<uint64_t>(nchunks / 8, 4, thread_cache::k_batch))),
      kind_(nchunks, k_chunk_free),
      used_(nchunks, 0),
      bitmap_(nchunks * k_words, 0),
      next_(nchunks, k_nil),
      prev_(nchunks, k_nil) {
  for (auto& p : partial_) p = k_nil;
  if (nchunks_) {
    make_spare();
    give_run(0, nchunks_);
  }
}

uint64_t heap::alloc(thread_cache& tc, size_t n) {
  if (n > k_max_small) return alloc_large(n);
  unsigned cls = class_of(n);
  auto& b = tc.bins[cls];
  if (b.count == 0) [[unlikely]] {
    refill(b, cls);
    if (b.count == 0) return 0;
  }
  return b.blocks[--b.count];
}

void heap::free(thread_cache& tc, uint64_t off) {
  uint32_t kind = kind_[chunk_of(off)];
  if (!is_small(kind)) return free_large(off);
  unsigned cls = kind - 1;
  if (reserve_short_[cls].load(std::memory_order_relaxed)) [[unlikely]]
    if (repay(cls, off)) return;
  auto& b = tc.bins[cls];
  if (b.count == 2 * batch_) [[unlikely]] {
    b.count -= batch_;
    release(cls, &b.blocks[b.count], batch_);
  }
  b.blocks[b.count++] = off;
}

void heap::drain(thread_cache& tc) {
  for (unsigned cls = 0; cls < k_nclasses; ++cls) {
    auto& b = tc.bins[cls];
    if (b.count) release(cls, b.blocks, b.count);
    b.count = 0;
  }
}

size_t heap::block_size(uint64_t off) const {
  uint32_t kind = kind_[chunk_of(off)];
  if (is_small(kind)) return class_size(kind - 1);
  return (kind & ~k_large_head) * k_chunk;
}

void heap::refill(thread_cache::bin& b, unsigned cls) {
  std::lock_guard lk(mu_);
  const uint32_t per_chunk = blocks_per_chunk(cls);
  const uint64_t size = class_size(cls);
  while (b.count < batch_) {
    int64_t c = partial_[cls];
    if (c == k_nil && (c = new_small_chunk(cls)) < 0) return;  // full: hand out what we have
    uint64_t* w = bits(c);
    for (uint32_t i = 0; i < k_words && b.count < batch_; ++i) {
      while (~w[i] != 0 && b.count < batch_) {
        uint32_t bit = std::countr_one(w[i]);
        uint32_t idx = i * 64 + bit;
        if (idx >= per_chunk) break;
        w[i] |= uint64_t{1} << bit;
        ++used_[c];
        b.blocks[b.count++] = chunk_start(c) + idx * size;
      }
    }
    if (used_[c] == per_chunk) list_remove(cls, c);
  }
}

void heap::release(unsigned cls, const uint64_t* offs, uint32_t n) {
  std::lock_guard lk(mu_);
  release_locked(cls, offs, n);
}

void heap::release_locked(unsigned cls, const uint64_t* offs, uint32_t n) {
  const uint32_t per_chunk = blocks_per_chunk(cls);
  const uint64_t size = class_size(cls);
  for (uint32_t k = 0; k < n; ++k) {
    uint64_t c = chunk_of(offs[k]);
    uint64_t idx = (offs[k] - chunk_start(c)) / size;
    uint64_t& w = bits(c)[idx / 64];
    PMINDEX_ASSERT(w & (uint64_t{1} << (idx % 64)));
    w &= ~(uint64_t{1} << (idx % 64));
    if (used_[c]-- == per_chunk) list_push(cls, c);
    if (used_[c] == 0) {
      list_remove(cls, c);
      kind_[c] = k_chunk_free;
      give_run(c, 1);
    }
  }
}

uint64_t heap::take_block_locked(unsigned cls) {
  int64_t c = partial_[cls];
  if (c == k_nil && (c = new_small_chunk(cls)) < 0) return 0;
  uint64_t* w = bits(c);
  uint32_t i = 0;
  while (~w[i] == 0) ++i;  // a partial chunk has a free block
  uint32_t idx = i * 64 + std::countr_one(w[i]);
  w[i] |= uint64_t{1} << (idx % 64);
  if (++used_[c] == blocks_per_chunk(cls)) list_remove(cls, c);
  return chunk_start(c) + idx * class_size(cls);
}

// ---------------------------------------------------------------- remove reserve

void heap::note_reserve_locked(unsigned cls) {
  auto& r = reserve_[cls];
  reserve_short_[cls].store(r.held.size() < r.want, std::memory_order_relaxed);
  uint32_t owed = 0;
  for (auto& x : reserve_) owed += x.owed;
  owed_total_.store(owed, std::memory_order_relaxed);
}

void heap::fill_reserve_locked(unsigned cls) {
  auto& r = reserve_[cls];
  while (r.held.size() < r.want) {
    uint64_t off = take_block_locked(cls);
    if (!off) break;  // a full pool: frees of the class pay the rest
    r.held.push_back(off);
  }
  note_reserve_locked(cls);
}

void heap::refill_reserves_locked() {
  for (unsigned cls = 0; cls < k_nclasses; ++cls) fill_reserve_locked(cls);
}

void heap::set_reserve(size_t n, uint32_t count) {
  PMINDEX_ASSERT(n > 0 && n <= k_max_small);
  unsigned cls = class_of(n);
  std::lock_guard lk(mu_);
  auto& r = reserve_[cls];
  r.want = count;
  r.held.reserve(count);  // so repay() never allocates DRAM under the lock
  if (r.held.size() > count) {
    release_locked(cls, r.held.data() + count, uint32_t(r.held.size() - count));
    r.held.resize(count);
  }
  fill_reserve_locked(cls);
}

uint64_t heap::take_reserved(size_t n) {
  if (n == 0 || n > k_max_small) return 0;
  unsigned cls = class_of(n);
  std::lock_guard lk(mu_);
  auto& r = reserve_[cls];
  if (r.held.empty()) return 0;
  uint64_t off = r.held.back();
  r.held.pop_back();
  ++r.owed;
  note_reserve_locked(cls);
  return off;
}

bool heap::reserve_expected(size_t n) const {
  if (n == 0 || n > k_max_small) return false;
  std::lock_guard lk(mu_);
  auto& r = reserve_[class_of(n)];
  return !r.held.empty() || r.owed != 0;
}

bool heap::repay(unsigned cls, uint64_t off) {
  std::lock_guard lk(mu_);
  auto& r = reserve_[cls];
  if (r.held.size() >= r.want) return false;  // paid meanwhile: a plain free
  r.held.push_back(off);  // stays marked allocated: alloc() cannot see it
  if (r.owed) --r.owed;
  note_reserve_locked(cls);
  return true;
}

void heap::release_reserve() {
  std::lock_guard lk(mu_);
  for (unsigned cls = 0; cls < k_nclasses; ++cls) {
    auto& r = reserve_[cls];
    release_locked(cls, r.held.data(), uint32_t(r.held.size()));
    r = reserve{};
    note_reserve_locked(cls);
  }
}

// A fresh chunk for class `cls`, on its partial list; -1 if none is free.
int64_t heap::new_small_chunk(unsigned cls) {
  int64_t c = take_run(1);
  if (c < 0) return -1;
  kind_[c] = cls + 1;
  used_[c] = 0;
  std::memset(bits(c), 0, k_words * 8);
  list_push(cls, c);
  return c;
}

uint64_t heap::alloc_large(size_t n) {
  uint64_t count = (n + k_chunk - 1) / k_chunk;
  std::lock_guard lk(mu_);
  int64_t c = take_run(count);
  if (c < 0) return 0;
  kind_[c] = k_large_head | static_cast<uint32_t>(count);
  for (uint64_t i = 1; i < count; ++i) kind_[c + i] = k_large_tail;
  return chunk_start(c);
}

void heap::free_large(uint64_t off) {
  uint64_t c = chunk_of(off);
  std::lock_guard lk(mu_);
  PMINDEX_ASSERT(kind_[c] & k_large_head);
  uint64_t count = kind_[c] & ~k_large_head;
  for (uint64_t i = 0; i < count; ++i) kind_[c + i] = k_chunk_free;
  give_run(c, count);
}

// A free never throws: a bad_alloc there would lose the chunks (and, as
// before, take_run's re-insert of a run's rest lost the rest of the heap).
// take_run shortens a run in place (node reuse); give_run, when no DRAM is
// left for a run of its own, takes the spare node, which the next take_run,
// on an alloc path that may throw, makes again.
void heap::make_spare() {
  if (spare_.empty()) spare_ = runs_.extract(runs_.emplace(~uint64_t{0}, 0).first);  // no chunk has that number
}

int64_t heap::take_run(uint64_t n) {
  if (free_chunks_ < n) return -1;
  make_spare();  // may throw bad_alloc: nothing has changed yet
  for (auto it = runs_.begin(); it != runs_.end(); ++it) {
    if (it->second < n) continue;
    const uint64_t first = it->first, len = it->second;
    if (len > n) {
      auto nh = runs_.extract(it);
      nh.key() = first + n;
      nh.mapped() = len - n;
      runs_.insert(std::move(nh));
    } else {
      runs_.erase(it);
    }
    free_chunks_ -= n;
    return static_cast<int64_t>(first);
  }
  return -1;
}

void heap::give_run(uint64_t first, uint64_t n) noexcept {
  auto next = runs_.lower_bound(first);
  if (next != runs_.end() && next->first == first + n) {
    const uint64_t more = next->second;
    next = runs_.erase(next);
    free_chunks_ -= more;
    n += more;
  }
  free_chunks_ += n;
  if (next != runs_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == first) {
      prev->second += n;
      return;
    }
  }
  try {
    runs_.emplace_hint(next, first, n);
    return;
  } catch (const std::bad_alloc&) {
  }
  if (spare_.empty()) {  // two failures in a row: the chunks stay out of use until the next open
    free_chunks_ -= n;
    lost_chunks_ += n;
    return;
  }
  spare_.key() = first;
  spare_.mapped() = n;
  runs_.insert(next, std::move(spare_));
}

void heap::list_push(unsigned cls, uint64_t c) {
  prev_[c] = k_nil;
  next_[c] = partial_[cls];
  if (partial_[cls] != k_nil) prev_[partial_[cls]] = static_cast<int64_t>(c);
  partial_[cls] = static_cast<int64_t>(c);
}

void heap::list_remove(unsigned cls, uint64_t c) {
  if (prev_[c] != k_nil) next_[prev_[c]] = next_[c];
  else partial_[cls] = next_[c];
  if (next_[c] != k_nil) prev_[next_[c]] = prev_[c];
  next_[c] = prev_[c] = k_nil;
}

heap_usage heap::usage() const {
  std::lock_guard lk(mu_);
  heap_usage u;
  for (uint64_t c = 0; c < nchunks_; ++c) {
    uint32_t k = kind_[c];
    if (k == k_chunk_free) continue;
    u.reserved_bytes += k_chunk;
    if (is_small(k)) {
      u.used_blocks += used_[c];
      u.used_bytes += uint64_t{used_[c]} * class_size(k - 1);
    } else if (k & k_large_head) {
      u.used_blocks += 1;
      u.used_bytes += (k & ~k_large_head) * k_chunk;
    }
  }
  for (unsigned cls = 0; cls < k_nclasses; ++cls) {  // free space, set aside
    u.used_blocks -= reserve_[cls].held.size();
    u.used_bytes -= reserve_[cls].held.size() * class_size(cls);
  }
  u.capacity_bytes = nchunks_ * k_chunk;
  u.dram_bytes = nchunks_ * (4 + 2 + 16 + k_words * 8) + runs_.size() * 48;
  return u;
}

bool heap::is_allocated(uint64_t off) const {
  if (off < heap_offset_ || off >= heap_offset_ + nchunks_ * k_chunk) return false;
  std::lock_guard lk(mu_);
  uint64_t c = chunk_of(off);
  uint32_t k = kind_[c];
  if (is_small(k)) {
    uint64_t size = class_size(k - 1);
    uint64_t idx = (off - chunk_start(c)) / size;
    if ((off - chunk_start(c)) % size) return false;
    return bits(c)[idx / 64] >> (idx % 64) & 1;
  }
  return (k & k_large_head) && off == chunk_start(c);
}

void heap::save(char* meta) const {
  std::lock_guard lk(mu_);
  std::memcpy(meta, kind_.data(), nchunks_ * 4);
  std::memcpy(meta + nchunks_ * 4, bitmap_.data(), bitmap_.size() * 8);
}

void heap::load(const char* meta) {
  std::lock_guard lk(mu_);
  std::memcpy(kind_.data(), meta, nchunks_ * 4);
  std::memcpy(bitmap_.data(), meta + nchunks_ * 4, bitmap_.size() * 8);
  for (uint64_t c = 0; c < nchunks_; ++c) {
    used_[c] = 0;
    if (!is_small(kind_[c])) continue;
    for (uint64_t i = 0; i < k_words; ++i) used_[c] += std::popcount(bits(c)[i]);
  }
  for (auto& r : reserve_) r.held.clear(), r.owed = 0;  // the saved state holds none
  rebuild_lists();
  refill_reserves_locked();
}

void heap::rebuild_begin() {
  std::lock_guard lk(mu_);
  // Reserved blocks are free space to the tracing (taken again at
  // rebuild_end); a block lent before the crash is the tree's, or free.
  for (auto& r : reserve_) r.held.clear(), r.owed = 0;
  std::fill(kind_.begin(), kind_.end(), k_chunk_free);
  std::fill(used_.begin(), used_.end(), 0);
  std::fill(bitmap_.begin(), bitmap_.end(), 0);
}

void heap::rebuild_mark(uint64_t off, size_t n) {
  // Single-threaded by contract (recovery); no lock on this hot loop.
  if (off < heap_offset_ || off >= heap_offset_ + nchunks_ * k_chunk || n == 0)
    corrupt("block outside the heap", off);
  uint64_t c = chunk_of(off);
  if (n > k_max_small) {
    uint64_t count = (n + k_chunk - 1) / k_chunk;
    if (off != chunk_start(c) || c + count > nchunks_) corrupt("misaligned large block", off);
    for (uint64_t i = 0; i < count; ++i)
      if (kind_[c + i] != k_chunk_free) corrupt("large block overlaps another block", off);
    kind_[c] = k_large_head | static_cast<uint32_t>(count);
    for (uint64_t i = 1; i < count; ++i) kind_[c + i] = k_large_tail;
    return;
  }
  unsigned cls = class_of(n);
  if (kind_[c] == k_chunk_free) kind_[c] = cls + 1;
  else if (kind_[c] != cls + 1) corrupt("block of another size class in its chunk", off);
  uint64_t rel = off - chunk_start(c), size = class_size(cls);
  if (rel % size || rel / size >= blocks_per_chunk(cls)) corrupt("misaligned block", off);
  uint64_t idx = rel / size;
  uint64_t& w = bits(c)[idx / 64];
  if (w >> (idx % 64) & 1) corrupt("block reachable twice", off);
  w |= uint64_t{1} << (idx % 64);
  ++used_[c];
}

void heap::rebuild_end() {
  std::lock_guard lk(mu_);
  rebuild_lists();
  refill_reserves_locked();
}

// Rebuilds partial lists and free runs from kind_, used_ and bitmap_.
void heap::rebuild_lists() {
  for (auto& p : partial_) p = k_nil;
  std::fill(next_.begin(), next_.end(), k_nil);
  std::fill(prev_.begin(), prev_.end(), k_nil);
  runs_.clear();
  free_chunks_ = 0;
  lost_chunks_ = 0;
  make_spare();  // at open: may throw
  for (uint64_t c = 0; c < nchunks_; ++c) {
    uint32_t k = kind_[c];
    if (k == k_chunk_free) {
      give_run(c, 1);
    } else if (is_small(k)) {
      if (used_[c] == 0) {  // cannot come from a save, but be safe
        kind_[c] = k_chunk_free;
        give_run(c, 1);
      } else if (used_[c] < blocks_per_chunk(k - 1)) {
        list_push(k - 1, c);
      }
    }
  }
}

}  // namespace pmindex::alloc
