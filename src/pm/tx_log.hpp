// The undo logs behind pm::transaction (include/pmindex/pm/tx.hpp): their
// on-media layout and the DRAM state of each.
//
// A tx pool holds tx_log_count logs of tx_log_size bytes (pool header words
// tx_log_*), between the allocator state and the heap, outside the heap: the
// allocator and tracing never see them.
//
//   log, line 0:  uint64_t done_gen    the last finished transaction; the one in
//                                      progress (if any) is done_gen + 1
//                 56 bytes zero
//   from byte 64: entries, back to back, each 8-aligned:
//                 uint64_t off         pool offset of the saved range
//                 uint64_t len         its length in bytes
//                 uint64_t gen         the transaction that wrote it
//                 uint64_t sum         checksum of (off, len, gen) and the data
//                 len bytes            the old contents, padded to 8
//
// An entry counts only if its gen is done_gen + 1 and its checksum holds; the
// walk stops at the first that does not. Entries are appended with a flush and
// a fence each, so a torn entry can only be the last one, and its range was
// not modified yet (the fence comes before the caller's stores). Commit (and
// rollback) ends with the one 8-byte store done_gen = gen: every entry of the
// log is stale at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace pmindex::pm {

struct tx_log_head {
  uint64_t done_gen;
  uint64_t zero[7];
};
static_assert(sizeof(tx_log_head) == 64);

struct tx_entry_head {
  uint64_t off;
  uint64_t len;
  uint64_t gen;
  uint64_t sum;
};
inline constexpr uint64_t k_tx_entries = 64;  // first entry's byte in a log
inline constexpr uint64_t tx_entry_bytes(uint64_t len) { return sizeof(tx_entry_head) + (len + 7) / 8 * 8; }

// The DRAM side of one log: who holds it and what its transaction did.
class tx_log_state {
 public:
  struct saved {
    uint64_t off, len, at;  // range, and its entry's offset in the log
  };
  struct block {
    uint64_t off, len;
  };
  std::atomic<bool> busy{false};
  uint64_t log_off = 0;  // pool offset of the log
  uint64_t size = 0;     // bytes of the log
  uint64_t gen = 1;      // the transaction in progress (done_gen + 1)
  uint64_t tail = 0;     // bytes of entries it wrote
  std::vector<saved> ranges;
  std::vector<block> allocs;
  std::vector<uint64_t> frees;
};

// All logs of one open tx pool (owned by the pool).
class tx_logs {
 public:
  std::vector<std::unique_ptr<tx_log_state>> logs;
};

// Deliberately broken protocols (test builds): the tx unit suite proves that
// each is caught. Selected per process with set_tx_mutant.
enum class tx_mutant : unsigned {
  none,
  entry_not_persisted,    // a log entry is neither flushed nor fenced before the caller's stores
  commit_before_flush,    // commit invalidates the log before the modified lines are flushed
  recover_forward,        // recovery restores entries oldest first (a re-saved range keeps a newer value)
  recover_invalidate_first,  // recovery invalidates the log before restoring (a crash in it loses the undo)
  abort_keeps_allocs,     // a rolled-back transaction does not free its blocks (a leak)
};
#ifdef PMINDEX_MUTANTS
// Hidden: the tests that select a mutant link the objects, and the shared
// library of a test build exports no test machinery either.
[[gnu::visibility("hidden")]] inline tx_mutant g_tx_mutant = tx_mutant::none;
inline bool tx_mutant_on(tx_mutant m) noexcept { return g_tx_mutant == m; }
inline void set_tx_mutant(tx_mutant m) noexcept { g_tx_mutant = m; }
#else
constexpr bool tx_mutant_on(tx_mutant) noexcept { return false; }
#endif

}  // namespace pmindex::pm
