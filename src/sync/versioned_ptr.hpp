// Versioned pointers with indirection on demand (after VERLIB, Blelloch & Wei,
// PPoPP'24), the part that is not specific to one index.
//
// Every versioned object starts with a `version_header` {stamp, prev}. A
// pointer slot always holds its current version; the object it points to
// carries the stamp at which it became current and the slot's previous value.
// A new object is installed with stamp k_stamp_tbd ("to be decided"); the
// installer, or any thread that loads it first, settles the stamp to the
// clock's current value (helping), so an object's stamp is fixed before
// anybody acts on it. Storing a value that cannot carry its own version (null,
// or an object already current elsewhere) goes through a small version link:
// an object with only the header, standing for that value.
//
// A snapshot takes `snapshot_stamp()` (inside an epoch) and reads each slot at
// that stamp: follow `prev` while the object's stamp is greater. The clock
// makes write stamps strictly greater than every earlier snapshot stamp (a
// snapshot bumps the clock after reading it), so a snapshot sees exactly the
// writes whose stamps are <= its own: an atomic cut.
//
// Reclamation: a replaced object may be retired (epochs) only after its
// successor's stamp is settled; a thread pinned later reads a snapshot stamp
// >= that stamp and never walks back to it.
#pragma once

#include <atomic>
#include <cstdint>

namespace pmindex::sync {

inline constexpr uint64_t k_stamp_tbd = ~uint64_t{0};

struct version_header {
  uint64_t stamp;  // 0  k_stamp_tbd until settled
  uint64_t prev;   // 8  the slot's previous value (owner-defined encoding)
};

class stamp_clock {
 public:
  explicit stamp_clock(uint64_t start = 1) noexcept : now_(start) {}
  void reset(uint64_t start) noexcept { now_.store(start, std::memory_order_release); }
  // The stamp a write settles to.
  uint64_t write_stamp() const noexcept { return now_.load(std::memory_order_acquire); }
  // A snapshot's stamp: later write stamps are strictly greater.
  uint64_t snapshot_stamp() noexcept {
    uint64_t t = now_.load(std::memory_order_acquire);
    uint64_t e = t;
    // A failed CAS means another snapshot moved the clock past t already.
    now_.compare_exchange_strong(e, t + 1, std::memory_order_acq_rel);
    return t;
  }

 private:
  alignas(64) std::atomic<uint64_t> now_;
};

// Settles the stamp of an installed object (helping) and returns it.
inline uint64_t settle_stamp(uint64_t* stamp, const stamp_clock& clock) noexcept {
  std::atomic_ref<uint64_t> s(*stamp);
  uint64_t v = s.load(std::memory_order_acquire);
  if (v != k_stamp_tbd) [[likely]] return v;
  uint64_t now = clock.write_stamp();
  if (s.compare_exchange_strong(v, now, std::memory_order_acq_rel)) return now;
  return v;  // somebody else settled it first
}

}  // namespace pmindex::sync
