// Whether a commit marker a reader waits on has a writer to clear it.
//
// Some indexes publish a word with a COMMIT MARKER (PermART: a slot's or a
// log entry's UNPERSISTED tag) set while it is not yet durable, and readers
// wait until the writer clears it, a flush and a fence later. A clean close
// leaves no marker and a dirty open clears them all; a damaged clean pool
// may still hold one, and a reader then waited for a writer that did not
// exist: forever (`pmindex verify` of such a pool hung).
//
// So each writer counts its passes through the sections in which it holds
// a marker, on its pool thread slot's own line, and a reader that has
// waited long asks whether any writer was inside while it read the marker
// again. None was: the marker is damage (errc::corrupt). The writer's cost
// is two stores to its own line per section; the reader reads every slot's
// counter, twice, only after thousands of waits.
//
// A held lock in a pool word is such a marker too (PermART's node locks, the
// lock words of ROART, PACTree and P-Masstree: a clean open trusts those of
// its own generation), and a writer holds several at once: sections nest.
// The waiter's own slot is left out: it may be inside a section of its own
// (it holds the parent's lock), and no thread waits for a marker that only
// it could clear. A thread that waits for a lock must not be inside a
// section FOR that lock: two writers waiting on one damaged lock word would
// each see the other inside and wait forever. So a section opens only when
// the word was seen free, just before the CAS that takes it, and closes
// again if the CAS fails (take()); a waiter's count stays still while it
// waits.
//
// Why it is sound: a writer raises its count before it stores a marker
// (release) and raises it again after it cleared it (release). A reader
// that reads every other count outside a section, then the marker set, then
// the same counts, read the marker while no section was open; a marker a
// finished section stored was cleared before that section's count was
// raised.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "pmindex/error.hpp"
#include "pmindex/sync/epoch.hpp"
#include "pmindex/sync/version_lock.hpp"

namespace pmindex::common {

class marker_passes {
 public:
  static constexpr uint32_t k_slots = sync::epoch_manager::k_max_slots;  // pool thread slots

  marker_passes() : n_(new counter[k_slots]) {}

  // A writer's section (slot: pool::thread_slot()); sections nest. enter()
  // before the marker is stored, leave() after it is cleared.
  void enter(uint32_t slot) noexcept {
    std::atomic<uint64_t>& c = n_[slot].n;
    c.store(c.load(std::memory_order_relaxed) + k_pass + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);  // before the marker (a lock's CAS is acquire only)
  }
  void leave(uint32_t slot) noexcept {
    std::atomic<uint64_t>& c = n_[slot].n;
    c.store(c.load(std::memory_order_relaxed) + k_pass - 1, std::memory_order_release);
  }
  // Takes a marker the caller saw free: enter(), then `cas` (true: it stored
  // the marker), and leave() again when the CAS failed. The one way a lock
  // word is taken, so that no section is open while its thread waits.
  template <class Cas>
  bool take(uint32_t slot, Cas&& cas) noexcept {
    static_assert(noexcept(cas()), "a section must not leak on a throw");
    enter(slot);
    if (cas()) return true;
    leave(slot);
    return false;
  }
  class section {  // RAII enter / leave
   public:
    section(marker_passes& m, uint32_t slot) noexcept : m_(m), slot_(slot) { m_.enter(slot_); }
    ~section() { m_.leave(slot_); }
    section(const section&) = delete;
    section& operator=(const section&) = delete;

   private:
    marker_passes& m_;
    uint32_t slot_;
  };

  // One step of a wait (`spins`: its steps so far) while a marker is set;
  // still_set() reads it again. Throws errc::corrupt (`what`) when no writer
  // but the waiter (`own`: its slot) was inside.
  template <class StillSet>
  void wait(unsigned& spins, StillSet&& still_set, const char* what, uint32_t own) const {
    sync::version_lock::backoff(spins);
    if (++spins % 4096) return;
    uint64_t before[k_slots];
    for (uint32_t i = 0; i < k_slots; ++i)
      if (i != own && ((before[i] = n_[i].n.load(std::memory_order_acquire)) & k_depth)) return;  // one is inside
    if (!still_set()) return;
    for (uint32_t i = 0; i < k_slots; ++i)
      if (i != own && n_[i].n.load(std::memory_order_acquire) != before[i]) return;
    throw error(errc::corrupt, what);
  }

 private:
  // A slot's word: the sections open (low bits), then the passes.
  static constexpr uint64_t k_pass = uint64_t{1} << 16, k_depth = k_pass - 1;
  struct alignas(64) counter {
    std::atomic<uint64_t> n{0};
  };
  std::unique_ptr<counter[]> n_;
};

}  // namespace pmindex::common
