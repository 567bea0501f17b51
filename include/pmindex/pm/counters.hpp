// Per-thread persistence and allocation counters: always on, one add each.
// Read a snapshot before and after a piece of work and subtract.
#pragma once

#include <cstdint>

namespace pmindex::pm {

struct counters {
  uint64_t lines_flushed = 0;  // flush instructions executed (one per line)
  uint64_t fences = 0;         // sfence executed
  uint64_t allocs = 0;         // blocks handed out by the pool allocator
  uint64_t frees = 0;          // blocks given back (after their epoch)
  uint64_t bytes_allocated = 0;

  counters& operator+=(const counters& o) noexcept {
    lines_flushed += o.lines_flushed;
    fences += o.fences;
    allocs += o.allocs;
    frees += o.frees;
    bytes_allocated += o.bytes_allocated;
    return *this;
  }
  friend counters operator-(counters a, const counters& b) noexcept {
    a.lines_flushed -= b.lines_flushed;
    a.fences -= b.fences;
    a.allocs -= b.allocs;
    a.frees -= b.frees;
    a.bytes_allocated -= b.bytes_allocated;
    return a;
  }
};

// Constant-initialised so every access is a plain TLS access (no wrapper).
inline constinit thread_local counters t_counters{};

// This thread's counters so far.
inline counters thread_counters() noexcept { return t_counters; }

}  // namespace pmindex::pm
