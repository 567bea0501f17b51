// Epoch-based reclamation (EBR). A thread pins the current epoch around each
// operation; a block retired in epoch e is handed back to the allocator only
// once the global epoch reaches e + 2, when no pinned thread can still hold a
// reference to it. Limbo lists live in DRAM: after a crash, blocks waiting in
// them are unreachable and tracing recovery reclaims them.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace pmindex::sync {

class epoch_manager {
 public:
  static constexpr uint32_t k_max_slots = 512;
  // Called for each block whose grace period ended, on the retiring thread.
  using reclaim_fn = void (*)(void* ctx, uint64_t item);

  epoch_manager(reclaim_fn fn, void* ctx) : reclaim_(fn), ctx_(ctx) { orphans_.reserve(k_headroom); }

  uint32_t register_slot();
  void release_slot(uint32_t s);  // reclaims what it can, moves the rest

  // Pin/unpin; nests. An unpinned thread may hold no reference into the pool.
  void enter(uint32_t s) noexcept {
    auto& sl = slots_[s];
    if (sl.nest++ == 0) {
      sl.epoch.store(global_.load(std::memory_order_relaxed), std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  }
  void exit(uint32_t s) noexcept {
    auto& sl = slots_[s];
    if (--sl.nest == 0) sl.epoch.store(0, std::memory_order_release);
  }

  void retire(uint32_t s, uint64_t item) noexcept;  // never allocates in practice (epoch.cpp)
  // Like retire, but into the shared list that every slot's collect()
  // reclaims (slow: takes the mutex), not into slot s's limbo.
  void retire_shared(uint32_t s, uint64_t item) noexcept;
  // Tries to advance the epoch and reclaims this slot's expired blocks.
  void collect(uint32_t s);
  // Reclaims everything; only when no thread is pinned (close, tests).
  void drain_all();

  uint64_t global_epoch() const noexcept { return global_.load(std::memory_order_acquire); }
  uint64_t pending() const;  // retired, not yet reclaimed (approximate)
  // Slot s's retired blocks not yet reclaimed; only s's thread may ask.
  size_t pending(uint32_t s) const noexcept { return slots_[s].limbo.size(); }
  // Retired blocks no list had room for (out of DRAM): allocated until the
  // next dirty open traces the pool.
  uint64_t lost() const noexcept { return lost_.load(std::memory_order_relaxed); }

 private:
  struct entry {
    uint64_t item;
    uint64_t epoch;
  };
  struct alignas(64) slot {
    std::atomic<uint64_t> epoch{0};  // 0: not pinned
    uint32_t nest = 0;
    uint32_t since_collect = 0;
    bool in_use = false;
    std::vector<entry> limbo;
  };
  bool try_advance() noexcept;
  bool push(std::vector<entry>& l, entry e) noexcept;
  static constexpr size_t k_headroom = 16;
  void reclaim_expired(slot& sl);

  static constexpr uint32_t k_collect_every = 64;
  reclaim_fn reclaim_;
  void* ctx_;
  alignas(64) std::atomic<uint64_t> global_{2};
  std::atomic<uint32_t> high_water_{0};
  std::mutex mu_;                 // slot registration and the orphan list
  std::vector<entry> orphans_;    // limbo of released slots
  std::atomic<size_t> norphans_{0};
  std::atomic<uint64_t> lost_{0};
  slot slots_[k_max_slots];
};

// RAII pin.
class epoch_guard {
 public:
  epoch_guard(epoch_manager& m, uint32_t s) noexcept : m_(m), s_(s) { m_.enter(s_); }
  ~epoch_guard() { m_.exit(s_); }
  epoch_guard(const epoch_guard&) = delete;
  epoch_guard& operator=(const epoch_guard&) = delete;

 private:
  epoch_manager& m_;
  uint32_t s_;
};

}  // namespace pmindex::sync
