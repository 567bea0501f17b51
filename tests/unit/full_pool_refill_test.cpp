// Full pools, as a user meets them: fill a small pool with random keys
// until the first insert fails with pool_full, update every record, remove
// every record (a remove must always succeed, also in a full pool), then
// insert new random keys until the first pool_full again; the refill must
// hold >= 90% of the first fill. An index that keeps the space of removed
// records (emptied leaves left in place, removed slots that only the same
// key reuses) meets pool_full early in the refill, when its first old
// node fills up. Run for every registered persistent index, with u64 keys
// and, for an index that takes them, byte keys (keys=bytes; 23-byte keys,
// past PermART's 16-byte inline keys, and 8-byte values), with 1 thread,
// and with 2 threads once (byte keys where it takes them).
//
// Every cycle ends with a dirty reopen: tracing must find exactly the
// blocks in use. An index that does not meet the refill yet is listed in
// known_failing(): FullPoolRemove still requires every remove to succeed,
// and the DISABLED_ twin (--gtest_also_run_disabled_tests
// --gtest_filter='*FullPool*' prints its figures) the whole cycle.
// Listed: none. P-Masstree was, until a remove that empties a leaf
// dropped it (pmasstree.hpp, "emptied leaf"): its u64 refill held 29% of
// the first fill, 91-92% with byte keys. The pmemids
// bplustree was, until a remove that empties a leaf unlinked it
// (bplustree.hpp): its u64 refill held 30%. FPTree and LB+-Tree were, until a remove that empties a
// leaf unlinked and freed it (hybrid_core.hpp, "Empty leaves"): the refill
// held 60% (FPTree) and 24% (LB+-Tree) of the first fill with u64 keys
// (92-97% with byte keys, whose record blocks were freed). The
// pmemids btree was, until its removes merged nodes (before, a remove left
// a tombstone that only the same key reused: the refill with new keys held
// 0%). PermART and PermART-2Log were, until removed slots' version links
// went back to null after their grace period (permart.hpp, "Full pools"):
// before, the refill held 0% of the first fill (u64) and 76-91%
// (keys=bytes), the links holding every chunk of the leaves' size classes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/util/hash.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

struct refill_param {
  std::string index;
  unsigned threads;
  bool bytes;
};

// An index listed here (see above) still runs FullPoolRemove.
bool known_failing(const std::string&) { return false; }

std::vector<refill_param> refill_params(bool failing) {
  std::vector<refill_param> v;
  for (auto& e : registered_indexes()) {
    if (!e->persistent() || known_failing(e->name) != failing) continue;
    if (e->key_limit) continue;  // a fixed array (arraylist): its memory is taken at creation
    // Two threads once per index: with byte keys where it takes them, else
    // with u64 keys. The u64 twin of a byte-capable index (the same
    // algorithm, instantiated for the other key kind; 100 s of the default
    // suite's CPU time) is not run: its 1-thread cycle still is.
    const bool takes_bytes = e->supports(key_kind::bytes) && e->max_key >= 23;  // 23-byte keys
    for (bool bytes : {false, true}) {
      if (bytes && !takes_bytes) continue;
      v.push_back({e->name, 1, bytes});
      if (e->concurrent && bytes == takes_bytes) v.push_back({e->name, 2, bytes});
    }
  }
  return v;
}

std::string refill_name(const testing::TestParamInfo<refill_param>& p) {
  std::string s = p.param.index + "_t" + std::to_string(p.param.threads) + (p.param.bytes ? "_bytes" : "");
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class FullPoolRefill : public testing::TestWithParam<refill_param> {};
class FullPoolRemove : public testing::TestWithParam<refill_param> {};
class FullPoolRefillKnownFailing : public testing::TestWithParam<refill_param> {};

// Record i: key mix64(i) (u64), or "refill/" and its 16 hex digits (bytes).
struct records {
  bool bytes;
  std::string key(uint64_t i) const {
    char s[24];
    std::snprintf(s, sizeof s, "refill/%016llx", static_cast<unsigned long long>(util::mix64(i)));
    return s;
  }
  bool insert(index& idx, uint64_t i) const {
    if (!bytes) return idx.insert(util::mix64(i), i);
    return idx.insert(key(i), std::string_view(reinterpret_cast<const char*>(&i), 8));
  }
  bool update(index& idx, uint64_t i) const {
    const uint64_t v = ~i;
    if (!bytes) return idx.update(util::mix64(i), v);
    return idx.update(key(i), std::string_view(reinterpret_cast<const char*>(&v), 8));
  }
  bool remove(index& idx, uint64_t i) const { return bytes ? idx.remove(key(i)) : idx.remove(util::mix64(i)); }
};

// Inserts distinct records (thread t: t, t + T, ... from `first` on) until
// an insert fails with pool_full (in any thread: the others stop at their
// next record); returns the records inserted per thread.
std::vector<std::vector<uint64_t>> fill(index& idx, const records& r, unsigned threads, uint64_t first) {
  std::vector<std::vector<uint64_t>> ids(threads);
  std::atomic<bool> full{false};
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      for (uint64_t i = first + t; !full.load(std::memory_order_relaxed); i += threads) {
        try {
          if (r.insert(idx, i)) ids[t].push_back(i);
        } catch (const error& e) {
          if (e.code() != errc::pool_full) throw;
          full.store(true, std::memory_order_relaxed);
        }
      }
    });
  for (auto& t : ts) t.join();
  return ids;
}

// Runs f(t, i) for every record i of thread t, on one thread per list.
template <class F>
void each_record(const std::vector<std::vector<uint64_t>>& ids, F&& f) {
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < ids.size(); ++t)
    ts.emplace_back([&, t] {
      for (uint64_t i : ids[t]) f(t, i);
    });
  for (auto& t : ts) t.join();
}

// The cycle; `refill`: also require the refill to hold 90% (else only that
// every update finds its record and every remove succeeds). Ends with a
// dirty reopen: tracing finds exactly the blocks in use (no leak, none
// lost; the remove reserve is free space).
void refill_cycle(const refill_param& prm, bool refill) {
  options o;
  o.index = prm.index;
  o.pool_path = "/dev/shm/pmindex-refill-" + std::to_string(getpid()) + "-" + refill_name({prm, 0}) + ".pool";
  o.pool_size = 16 << 20;
  o.params = prm.bytes ? "keys=bytes" : "";
  o.quiet = true;
  ::unlink(o.pool_path.c_str());
  auto idx = open(o);
  const records r{prm.bytes};
  auto first = fill(*idx, r, prm.threads, 0);
  size_t n1 = 0;
  for (auto& k : first) n1 += k.size();
  // Updates of a full pool: one that needs a new block (a copy-on-write
  // index, a record block) may fail with pool_full; any other answer but
  // `true` is a lost record. After 4,096 refusals the default run updates
  // no more records: each refusal is an exception, and refusing the rest
  // (up to a quarter million) took half of this suite's time; a refusal
  // that leaks or lets the remove reserve run out shows by then. The long
  // run (PMINDEX_LONG=1) updates every record.
  const uint64_t max_refusals = test::long_run() ? UINT64_MAX : 4096;
  std::atomic<uint64_t> lost{0}, update_full{0}, refused{0};
  each_record(first, [&](unsigned, uint64_t i) {
    if (update_full.load(std::memory_order_relaxed) >= max_refusals) return;
    try {
      if (!r.update(*idx, i)) lost.fetch_add(1);
    } catch (const error& e) {
      if (e.code() != errc::pool_full) throw;
      update_full.fetch_add(1);
    }
  });
  each_record(first, [&](unsigned, uint64_t i) {
    try {
      if (!r.remove(*idx, i)) refused.fetch_add(1);
    } catch (const error&) {
      refused.fetch_add(1);
    }
  });
  auto second = fill(*idx, r, prm.threads, uint64_t{1} << 40);
  size_t n2 = 0;
  for (auto& k : second) n2 += k.size();
  std::printf(
      "[ refill ] %s%s, %u thread(s): first fill %zu, updates refused (pool_full) %llu, removes refused %llu, "
      "refill %zu (%.0f%%)\n",
      prm.index.c_str(), prm.bytes ? " keys=bytes" : "", prm.threads, n1,
      static_cast<unsigned long long>(update_full.load()), static_cast<unsigned long long>(refused.load()),
      n2, n1 ? 100.0 * static_cast<double>(n2) / static_cast<double>(n1) : 0.0);
  EXPECT_EQ(lost.load(), 0u) << "updates of present records returned false";
  EXPECT_EQ(refused.load(), 0u) << "removes refused in a full pool";
  if (refill) {
    EXPECT_GE(static_cast<double>(n2), 0.9 * static_cast<double>(n1)) << "refill below 90% of the first fill";
  }
  auto c = idx->check();
  EXPECT_TRUE(c.ok) << c.message;
  idx->abandon();
  idx = open(o);
  EXPECT_EQ(idx->report().traced_blocks, idx->pool().usage().used_blocks);
  c = idx->check();
  EXPECT_TRUE(c.ok) << c.message;
  idx->close();
  ::unlink(o.pool_path.c_str());
}

TEST_P(FullPoolRefill, RemoveAlwaysSucceedsAndRefillHolds90Percent) { refill_cycle(GetParam(), true); }
// The known-failing indexes still must never refuse a remove.
TEST_P(FullPoolRemove, RemoveAlwaysSucceeds) { refill_cycle(GetParam(), false); }
TEST_P(FullPoolRefillKnownFailing, DISABLED_RemoveAlwaysSucceedsAndRefillHolds90Percent) {
  refill_cycle(GetParam(), true);
}

INSTANTIATE_TEST_SUITE_P(Indexes, FullPoolRefill, testing::ValuesIn(refill_params(false)), refill_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FullPoolRemove);
INSTANTIATE_TEST_SUITE_P(Indexes, FullPoolRemove, testing::ValuesIn(refill_params(true)), refill_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FullPoolRefillKnownFailing);
INSTANTIATE_TEST_SUITE_P(Indexes, FullPoolRefillKnownFailing, testing::ValuesIn(refill_params(true)), refill_name);

}  // namespace
}  // namespace pmindex
