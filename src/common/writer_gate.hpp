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
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "pmindex/sync/epoch.hpp"
#include "pmindex/sync/optimistic_lock.hpp"

namespace pmindex::common {

class alignas(64) writer_gate {  // whole lines: nothing else shares `closed_`'s
 public:
  static constexpr uint32_t k_slots = sync::epoch_manager::k_max_slots;  // pool thread slots

  writer_gate() : flags_(new flag[k_slots]) {}

  // `slot`: the calling thread's pool slot (pool::thread_slot()). Not nested.
  void enter(uint32_t slot) noexcept {
    std::atomic<uint32_t>& f = flags_[slot].busy;
    for (;;) {
      f.exchange(1, std::memory_order_seq_cst);  // the flag, then the fence, on this thread's own line
      if (!closed_.load(std::memory_order_seq_cst)) return;
      f.store(0, std::memory_order_release);
      for (unsigned spins = 0; closed_.load(std::memory_order_acquire); ++spins)
        sync::optimistic_lock::backoff(spins);
    }
  }
  void exit(uint32_t slot) noexcept { flags_[slot].busy.store(0, std::memory_order_release); }

  // Excludes every writer until open(); closers run one at a time.
  void close() {
    mu_.lock();
    closed_.store(true, std::memory_order_seq_cst);
    for (uint32_t s = 0; s < k_slots; ++s)
      while (flags_[s].busy.load(std::memory_order_seq_cst)) std::this_thread::yield();
  }
  void open() noexcept {
    closed_.store(false, std::memory_order_release);
    mu_.unlock();
  }

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

  static constexpr size_t dram_bytes() noexcept { return k_slots * sizeof(flag); }

 private:
  struct alignas(64) flag {
    std::atomic<uint32_t> busy{0};
  };
  std::unique_ptr<flag[]> flags_;
  alignas(64) std::atomic<bool> closed_{false};  // read by every writer, written only by closers
  std::mutex mu_;
};

}  // namespace pmindex::common
