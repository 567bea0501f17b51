#include "pmindex/sync/epoch.hpp"

#include "pmindex/error.hpp"

namespace pmindex::sync {

uint32_t epoch_manager::register_slot() {
  std::lock_guard lk(mu_);
  for (uint32_t s = 0; s < k_max_slots; ++s) {
    if (slots_[s].in_use) continue;
    if (slots_[s].limbo.capacity() < k_headroom) slots_[s].limbo.reserve(k_headroom);  // may throw: before any retire
    slots_[s].in_use = true;
    slots_[s].nest = 0;
    slots_[s].epoch.store(0, std::memory_order_relaxed);
    uint32_t hw = high_water_.load(std::memory_order_relaxed);
    if (s + 1 > hw) high_water_.store(s + 1, std::memory_order_release);
    return s;
  }
  throw error(errc::unsupported, "more than 512 threads use one pool");
}

void epoch_manager::release_slot(uint32_t s) {
  auto& sl = slots_[s];
  reclaim_expired(sl);
  std::lock_guard lk(mu_);
  orphans_.insert(orphans_.end(), sl.limbo.begin(), sl.limbo.end());
  norphans_.store(orphans_.size(), std::memory_order_relaxed);
  sl.limbo.clear();
  sl.epoch.store(0, std::memory_order_release);
  sl.in_use = false;
}

// A retire comes after the unlink committed, often under the index's
// locks: it never throws. The list keeps k_headroom free places, grown
// after each push (a bad_alloc there is swallowed: the places left serve
// the next retires); only a push with none left can fail, and its block
// stays allocated until the next open's tracing (counted in lost()).
bool epoch_manager::push(std::vector<entry>& l, entry e) noexcept {
  try {
    l.push_back(e);  // within capacity unless k_headroom growths failed in a row
  } catch (const std::bad_alloc&) {
    lost_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (l.capacity() - l.size() < k_headroom) {
    try {
      l.reserve(2 * l.capacity() + k_headroom);
    } catch (const std::bad_alloc&) {
    }
  }
  return true;
}

void epoch_manager::retire(uint32_t s, uint64_t item) noexcept {
  auto& sl = slots_[s];
  push(sl.limbo, {item, global_.load(std::memory_order_acquire)});
  if (++sl.since_collect >= k_collect_every) collect(s);
}

void epoch_manager::retire_shared(uint32_t s, uint64_t item) noexcept {
  {
    std::lock_guard lk(mu_);
    push(orphans_, {item, global_.load(std::memory_order_acquire)});
    norphans_.store(orphans_.size(), std::memory_order_relaxed);
  }
  if (++slots_[s].since_collect >= k_collect_every) collect(s);  // as retire: they come back
}

void epoch_manager::collect(uint32_t s) {
  auto& sl = slots_[s];
  sl.since_collect = 0;
  try_advance();
  reclaim_expired(sl);
  if (norphans_.load(std::memory_order_relaxed) && mu_.try_lock()) {
    uint64_t g = global_.load(std::memory_order_acquire);
    size_t keep = 0;
    for (auto& e : orphans_) {
      if (e.epoch + 2 <= g) reclaim_(ctx_, e.item);
      else orphans_[keep++] = e;
    }
    orphans_.resize(keep);
    norphans_.store(keep, std::memory_order_relaxed);
    mu_.unlock();
  }
}

bool epoch_manager::try_advance() noexcept {
  uint64_t g = global_.load(std::memory_order_acquire);
  uint32_t hw = high_water_.load(std::memory_order_acquire);
  for (uint32_t s = 0; s < hw; ++s) {
    uint64_t e = slots_[s].epoch.load(std::memory_order_acquire);
    if (e != 0 && e != g) return false;
  }
  return global_.compare_exchange_strong(g, g + 1, std::memory_order_acq_rel);
}

void epoch_manager::reclaim_expired(slot& sl) {
  uint64_t g = global_.load(std::memory_order_acquire);
  size_t keep = 0;
  for (size_t i = 0; i < sl.limbo.size(); ++i) {
    if (sl.limbo[i].epoch + 2 <= g) reclaim_(ctx_, sl.limbo[i].item);
    else sl.limbo[keep++] = sl.limbo[i];
  }
  sl.limbo.resize(keep);
}

void epoch_manager::drain_all() {
  // Reclaim outside mu_: reclaim_ may register the calling thread with the
  // pool (its first touch), which takes mu_ in register_slot.
  std::vector<entry> all;
  {
    std::lock_guard lk(mu_);
    uint32_t hw = high_water_.load(std::memory_order_acquire);
    for (uint32_t s = 0; s < hw; ++s) {
      all.insert(all.end(), slots_[s].limbo.begin(), slots_[s].limbo.end());
      slots_[s].limbo.clear();
    }
    all.insert(all.end(), orphans_.begin(), orphans_.end());
    orphans_.clear();
    norphans_.store(0, std::memory_order_relaxed);
    global_.fetch_add(2, std::memory_order_acq_rel);
  }
  for (auto& e : all) reclaim_(ctx_, e.item);
}

uint64_t epoch_manager::pending() const {
  uint64_t n = orphans_.size();
  uint32_t hw = high_water_.load(std::memory_order_acquire);
  for (uint32_t s = 0; s < hw; ++s) n += slots_[s].limbo.size();
  return n;
}

}  // namespace pmindex::sync
