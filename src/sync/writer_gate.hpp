// A gate that writers pass at the cost of one atomic exchange on a cache
// line of their own (their pool thread slot's) and that a rare caller --
// check(), stats(), trace() -- closes to exclude them all (a "big-reader"
// lock with the roles named for what they do here: the many are writers).
// A shared reader-writer lock would cost each writer two RMWs on one line
// that every core writes, which stops writers from scaling.
//
// Dekker's pattern: a writer raises its flag, then reads `closed_`; the
// closer sets `closed_`, then reads every flag. Both sides are sequentially
// consistent, so at least one of them sees the other: a writer that saw the
// gate open is seen (and waited for) by the closer; one that saw it closed
// lowers its flag and waits.
//
// `closed_` counts closers: close() (check, stats, trace) runs one at a
// time; close_shared() (a scan that must see no writer: WORT family) runs
// beside other closers. A writer that had to wait raises `waiting_`, and
// close_shared() waits for it to drop first, so back-to-back scans on other
// threads cannot shut writers out for good. Closers read the flags of the
// slots that ever entered (`high_`), not all 512: a slot's first enter
// raises it (seq_cst) before the flag, later ones read it with acquire, so
// the raise comes before the flag in the single order of seq_cst operations
// and a closer that reads `high_` after raising `closed_` covers every
// writer it could miss.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "sync/polite_wait.hpp"
#include "pmindex/sync/epoch.hpp"
#include "sync/optimistic_lock.hpp"

namespace pmindex::common {

class alignas(64) writer_gate {  // whole lines: nothing else shares `closed_`'s
 public:
  static constexpr uint32_t k_slots = sync::epoch_manager::k_max_slots;  // pool thread slots

  writer_gate() : flags_(new flag[k_slots]) {}

  // `slot`: the calling thread's pool slot (pool::thread_slot()). Not nested.
  void enter(uint32_t slot) noexcept {
    std::atomic<uint32_t>& f = flags_[slot].busy;
    if (slot >= high_.load(std::memory_order_acquire)) [[unlikely]] raise_high(slot);  // (acquire: see above)
    f.exchange(1, std::memory_order_seq_cst);  // the flag, then the fence, on this thread's own line
    if (!closed_.load(std::memory_order_seq_cst)) [[likely]] return;
    f.store(0, std::memory_order_release);
    waiting_.fetch_add(1, std::memory_order_seq_cst);  // holds new shared closers back
    for (;;) {
      for (unsigned spins = 0; closed_.load(std::memory_order_acquire); ++spins) polite_wait(spins);
      f.exchange(1, std::memory_order_seq_cst);
      if (!closed_.load(std::memory_order_seq_cst)) break;
      f.store(0, std::memory_order_release);
    }
    waiting_.fetch_sub(1, std::memory_order_release);
  }
  void exit(uint32_t slot) noexcept { flags_[slot].busy.store(0, std::memory_order_release); }

  // Excludes every writer until open(); closers run one at a time.
  void close() {
    mu_.lock();
    closed_.fetch_add(1, std::memory_order_seq_cst);
    drain();
  }
  void open() noexcept {
    closed_.fetch_sub(1, std::memory_order_release);
    mu_.unlock();
  }
  // Excludes every writer until open_shared(), beside other closers; waits
  // first for writers that are waiting (a writer that starts to wait after
  // this closer is in waits for it: one scan at most).
  void close_shared() noexcept {
    for (unsigned spins = 0; waiting_.load(std::memory_order_acquire); ++spins) polite_wait(spins);
    closed_.fetch_add(1, std::memory_order_seq_cst);
    drain();
  }
  void open_shared() noexcept { closed_.fetch_sub(1, std::memory_order_release); }

  struct writer {  // RAII enter / exit
    writer_gate& g;
    uint32_t slot;
    writer(writer_gate& gate, uint32_t s) noexcept : g(gate), slot(s) { g.enter(slot); }
    ~writer() { g.exit(slot); }
    writer(const writer&) = delete;
    writer& operator=(const writer&) = delete;
  };
  struct closed {  // RAII close / open
    writer_gate& g;
    explicit closed(writer_gate& gate) : g(gate) { g.close(); }
    ~closed() { g.open(); }
    closed(const closed&) = delete;
    closed& operator=(const closed&) = delete;
  };
  struct shared_closed {  // RAII close_shared / open_shared
    writer_gate& g;
    explicit shared_closed(writer_gate& gate) noexcept : g(gate) { g.close_shared(); }
    ~shared_closed() { g.open_shared(); }
    shared_closed(const shared_closed&) = delete;
    shared_closed& operator=(const shared_closed&) = delete;
  };

  // True if no writer is inside now (the caller's own slot included). For
  // a reader that read words writers store inside: each word's writer had
  // left, if it was read with acquire before this call (the writer raised
  // its flag and `high_` before it stored). Costs a load per slot that ever
  // entered: for lookups, whose only alternative is a load per node.
  bool quiet() const noexcept {
    std::atomic_thread_fence(std::memory_order_acquire);
    const uint32_t h = high_.load(std::memory_order_acquire);
    for (uint32_t s = 0; s < h; ++s)
      if (flags_[s].busy.load(std::memory_order_relaxed)) return false;
    return true;
  }

  static constexpr size_t dram_bytes() noexcept { return k_slots * sizeof(flag); }

 private:
  struct alignas(64) flag {
    std::atomic<uint32_t> busy{0};
  };
  // Waits until no writer is inside (closed_ already raised, seq_cst).
  void drain() noexcept {
    const uint32_t h = high_.load(std::memory_order_seq_cst);
    for (uint32_t s = 0; s < h; ++s)
      for (unsigned spins = 0; flags_[s].busy.load(std::memory_order_seq_cst); ++spins) polite_wait(spins);
  }
  void raise_high(uint32_t slot) noexcept {
    uint32_t h = high_.load(std::memory_order_relaxed);
    while (h <= slot && !high_.compare_exchange_weak(h, slot + 1, std::memory_order_seq_cst)) {
    }
  }
  std::unique_ptr<flag[]> flags_;
  alignas(64) std::atomic<uint32_t> closed_{0};   // closers inside; read by every writer, written only by closers
  std::atomic<uint32_t> high_{0};                 // 1 + the highest slot that ever entered (read-mostly)
  alignas(64) std::atomic<uint32_t> waiting_{0};  // writers waiting behind closers (slow path only)
  std::mutex mu_;
};

}  // namespace pmindex::common
