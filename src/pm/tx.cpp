// Undo-log transactions: the protocol of pm/tx.hpp on the log layout of
// pm/tx_log.hpp. Per transaction: one flush run and one fence per snapshot;
// at commit the modified lines and the allocated blocks flushed, one fence,
// one 8-byte store (flush, fence). A transaction that saved nothing commits
// without a store.
#include "pmindex/pm/tx.hpp"

#include <cstring>
#include <string>
#include <thread>

#include "pm/tx_log.hpp"
#include "pmindex/error.hpp"

namespace pmindex::pm {

namespace {

uint64_t entry_sum(const tx_entry_head& e, const void* data) {
  return detail::checksum(data, e.len, detail::checksum(&e, 3 * sizeof(uint64_t)));
}

// Restores the saved ranges newest first (a range saved twice keeps its
// oldest bytes) and flushes them; the caller fences.
template <class Saved>
void restore(pool& p, const tx_log_state& l, const Saved& saved, size_t n, bool newest_first) {
  char* log = p.ptr<char>(l.log_off);
  for (size_t k = 0; k < n; ++k) {
    const auto& s = saved[newest_first ? n - 1 - k : k];
    std::memcpy(p.ptr<char>(s.off), log + s.at + sizeof(tx_entry_head), s.len);
    p.flush(p.ptr<char>(s.off), s.len);
  }
}

void finish(pool& p, tx_log_state& l) {
  auto* head = p.ptr<tx_log_head>(l.log_off);
  p.store_persist(&head->done_gen, l.gen);
  ++l.gen;
  l.tail = 0;
}

}  // namespace

transaction::transaction(pool& p) : p_(p) {
  tx_logs* t = p.tx_state();
  if (!t)
    throw error(errc::unsupported, "transactions need a pool open in tx mode (" + p.path() + " is in " +
                                       std::string(to_string(p.pm_mode())) + " mode)");
  // Start at the thread's own log: with one thread per slot, no contention.
  const size_t n = t->logs.size();
  for (size_t i = p.thread_slot() % n;; i = (i + 1) % n) {
    auto& l = *t->logs[i];
    bool idle = false;
    if (!l.busy.load(std::memory_order_relaxed) && l.busy.compare_exchange_strong(idle, true)) {
      log_ = &l;
      break;
    }
    if ((i + 1) % n == p.thread_slot() % n) std::this_thread::yield();
  }
  log_->ranges.clear();
  log_->allocs.clear();
  log_->frees.clear();
  log_->tail = 0;
}

transaction::~transaction() { abort(); }

void transaction::snapshot(const void* ptr, size_t n) {
  PMINDEX_ASSERT(log_);
  if (n == 0) return;
  auto& l = *log_;
  const uint64_t off = p_.off(ptr);
  if (off < p_.heap_begin() || off > p_.size() || n > p_.size() - off)
    throw error(errc::usage, "transaction::snapshot: a range outside the pool's heap");
  // Inside a block of this transaction, or saved already: nothing to do.
  for (auto& a : l.allocs)
    if (off >= a.off && off + n <= a.off + a.len) return;
  for (auto& s : l.ranges)
    if (off >= s.off && off + n <= s.off + s.len) return;
  const uint64_t need = tx_entry_bytes(n);
  if (need > l.size - k_tx_entries - l.tail)
    throw error(errc::pool_full, "transaction undo log full (" + std::to_string(l.size) +
                                     " bytes per log): the transaction is rolled back");
  char* at = p_.ptr<char>(l.log_off) + k_tx_entries + l.tail;
  tx_entry_head e{off, n, l.gen, 0};
  std::memcpy(at + sizeof e, ptr, n);
  e.sum = entry_sum(e, at + sizeof e);
  std::memcpy(at, &e, sizeof e);
  // Durable before the caller's first store into the range.
  if (!tx_mutant_on(tx_mutant::entry_not_persisted)) p_.persist(at, need);
  l.ranges.push_back({off, n, k_tx_entries + l.tail});
  l.tail += need;
}

uint64_t transaction::alloc(size_t n) {
  PMINDEX_ASSERT(log_);
  uint64_t off = p_.alloc_or_throw(n);
  log_->allocs.push_back({off, n});
  return off;
}

void transaction::free(uint64_t off) {
  PMINDEX_ASSERT(log_);
  log_->frees.push_back(off);
}

void transaction::commit() {
  PMINDEX_ASSERT(log_);
  auto& l = *log_;
  const bool early = tx_mutant_on(tx_mutant::commit_before_flush);
  if (early && l.tail) finish(p_, l);
  bool flushed = false;
  for (auto& s : l.ranges) p_.flush(p_.ptr(s.off), s.len), flushed = true;
  for (auto& a : l.allocs) p_.flush(p_.ptr(a.off), a.len), flushed = true;
  if (flushed) p_.fence();
  // The commit point: every entry stale at once.
  if (!early && l.tail) finish(p_, l);
  for (uint64_t off : l.frees) p_.retire(off);
  log_ = nullptr;
  l.busy.store(false, std::memory_order_release);
}

void transaction::abort() noexcept {
  if (!log_) return;
  auto& l = *log_;
  if (l.tail) {
    restore(p_, l, l.ranges, l.ranges.size(), true);
    p_.fence();
    finish(p_, l);
  }
  if (!tx_mutant_on(tx_mutant::abort_keeps_allocs))
    for (auto& a : l.allocs) p_.free(a.off);
  log_ = nullptr;
  l.busy.store(false, std::memory_order_release);
}

uint64_t tx_recover(pool& p) {
  tx_logs* t = p.tx_state();
  if (!t) return 0;
  uint64_t restored = 0;
  std::vector<tx_log_state::saved> saved;
  for (auto& lp : t->logs) {
    auto& l = *lp;
    const char* log = p.ptr<char>(l.log_off);
    l.gen = p.ptr<tx_log_head>(l.log_off)->done_gen + 1;
    // The valid entries: this generation's, checksums holding, in bounds.
    saved.clear();
    for (uint64_t at = k_tx_entries; l.size - at >= sizeof(tx_entry_head);) {
      tx_entry_head e;
      std::memcpy(&e, log + at, sizeof e);
      if (e.gen != l.gen || e.len > l.size - at - sizeof e) break;
      if (entry_sum(e, log + at + sizeof e) != e.sum) break;
      if (e.off < p.heap_begin() || e.off > p.size() || e.len > p.size() - e.off)
        throw error(errc::corrupt, p.path() + ": a transaction log entry points outside the heap");
      saved.push_back({e.off, e.len, at});
      at += tx_entry_bytes(e.len);
    }
    if (saved.empty()) continue;
    if (tx_mutant_on(tx_mutant::recover_invalidate_first)) finish(p, l);
    restore(p, l, saved, saved.size(), !tx_mutant_on(tx_mutant::recover_forward));
    p.fence();
    if (!tx_mutant_on(tx_mutant::recover_invalidate_first)) finish(p, l);
    restored += saved.size();
  }
  return restored;
}

}  // namespace pmindex::pm
