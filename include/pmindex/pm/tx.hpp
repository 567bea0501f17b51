// Undo-log transactions (the `tx` persistence mode; docs/substrate.md,
// "Transactions"): what any index may use to make a multi-word change
// failure-atomic without designing its own protocol.
//
//   pm::transaction tx(pool);          // claims one of the pool's undo logs
//   tx.snapshot(&node->n, 8);          // old bytes to the log (flush, fence)
//   node->n += 1;                      // then modify in place, no flush
//   uint64_t b = tx.alloc(256);        // freed again if the transaction rolls back
//   tx.free(old);                      // takes effect at commit
//   tx.commit();                       // flush what changed, fence, one 8-byte
//                                      // store invalidates the log (flush, fence)
//   // leaving the scope without commit() (an exception) rolls back
//
// Rules: snapshot a range before its first store in the transaction (a range
// inside a block this transaction allocated needs none); ranges lie in the
// heap; one transaction at a time per thread and pool (no nesting); the
// caller provides the isolation (the pmemids structures run behind one lock).
// A pool opened in tx mode rolls back every incomplete transaction before
// the index sees it (pool::open, on a dirty open).
//
// Log full: snapshot() throws error(errc::pool_full) ("undo log full"), and
// the transaction rolls back when it goes out of scope: the pool is never
// left half-changed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pmindex/pm/pool.hpp"

namespace pmindex::pm {

class tx_log_state;

class transaction {
 public:
  // Begins a transaction on `p`, which must be open in tx mode
  // (error(unsupported) otherwise). Waits while every log is in use.
  explicit transaction(pool& p);
  ~transaction();  // rolls back unless committed
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;

  // Saves the old bytes of [p, p + n) in the log and makes them durable
  // before returning; the caller may then store into the range freely.
  // A range already saved (or inside a block of alloc()) costs nothing.
  void snapshot(const void* p, size_t n);
  template <class T>
  void snapshot(const T* obj) {
    snapshot(obj, sizeof(T));
  }
  // Snapshot then store: the common single-word case.
  void set(uint64_t* word, uint64_t v) {
    snapshot(word, 8);
    *word = v;
  }

  // A block of n bytes: flushed whole at commit, freed if the transaction
  // rolls back. Throws error(pool_full) when the pool is full.
  uint64_t alloc(size_t n);
  // Frees `off` when the transaction commits (epoch-deferred); nothing if it
  // rolls back.
  void free(uint64_t off);

  // Makes every change durable at once. After it, the object is inert.
  void commit();
  // Restores every snapshot and frees the allocations. Idempotent.
  void abort() noexcept;
  bool active() const noexcept { return log_ != nullptr; }

 private:
  pool& p_;
  tx_log_state* log_ = nullptr;
};

// Rolls back the incomplete transaction of every log of a tx pool (pool::open
// calls it on a dirty open). Idempotent: a crash during it leaves the logs
// valid and the next open rolls back again. Returns the entries restored;
// throws error(corrupt) for an entry that points outside the heap.
uint64_t tx_recover(pool& p);

}  // namespace pmindex::pm
