// Snapshot linearizability check for range queries, generic over the Index
// interface (`pmindex stress --check snapshot`, unit tests).
//
// Writers insert and remove keys of a fixed universe (scattered over the
// whole 64-bit key space) one at a time in a recorded global order (a mutex
// orders them; the order is the log). Range threads meanwhile call
// range(lo, hi) and scan(from, count). A result taken while ops (s, e] were
// in flight or done must equal the records in range after some prefix k of
// the log with s <= k <= e (values included); otherwise it is a violation.
// Each range thread checks its own results online by replaying the log.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "pmindex/index.hpp"

namespace pmindex::checks {

struct snapshot_check_options {
  unsigned writers = 1;
  unsigned readers = 1;
  double seconds = 2;
  uint32_t universe = 4096;        // distinct keys writers toggle
  uint64_t max_ops = 16u << 20;    // log capacity (writers stop when full)
  uint64_t seed = 1;
  // The i-th key of the universe (default: the harness's sparse universe of
  // `seed`, scattered over all 64 bits).
  // Keys outside the universe in a result are ignored (other threads' keys
  // when the check runs beside other workers).
  std::function<uint64_t(uint64_t)> key;
  // Stop when set instead of after `seconds`.
  const std::atomic<bool>* stop = nullptr;
  // Filled at the end (if given): what the universe keys hold.
  std::map<uint64_t, uint64_t>* final_state = nullptr;
};

struct snapshot_check_result {
  uint64_t ops = 0;         // writes logged
  uint64_t queries = 0;     // range/scan results checked
  uint64_t violations = 0;
  std::string first;        // description of the first violation
  bool ok() const { return violations == 0; }
};

// The index must hold no key of the universe when called (use a fresh one).
// Values written are value_of(key).
uint64_t snapshot_value_of(uint64_t key);
snapshot_check_result run_snapshot_check(index& idx, const snapshot_check_options& o);

}  // namespace pmindex::checks
