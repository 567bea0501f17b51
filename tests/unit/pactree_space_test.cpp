// PACTree gives freed space back while the pool stays open: a pool filled
// until its first pool_full, every record updated, then removed, takes
// >= 90% as many records again with NEW keys (twice over), without a
// reopen, at 2 MiB and 16 MiB, with 1 and 2 threads, u64 and byte keys.
// Each thread of a fill stops at its first pool_full. A dirty reopen
// at the end finds exactly the blocks in use (nothing leaked, nothing lost).
// It catches space that comes back only at a reopen: merged nodes waiting
// in the SMO thread's limbo and cache, every split's reserved layer block
// passing through that cache, a full pool that never drained them (a 2 MiB
// pool took 80% of its first fill again, and 22% the second time with 2
// threads).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "index_fixture.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/util/hash.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

struct space_param {
  uint64_t pool_mib;
  unsigned threads;
  bool bytes;
};

std::string space_name(const testing::TestParamInfo<space_param>& p) {
  return std::to_string(p.param.pool_mib) + "MiB_t" + std::to_string(p.param.threads) +
         (p.param.bytes ? "_bytes" : "_u64");
}

class PactreeSpace : public test::index_fixture, public testing::WithParamInterface<space_param> {
 protected:
  PactreeSpace() : index_fixture("pactree") {}

  // Record i of a phase: key mix64(salt + i) (u64) or "space/" and its 16
  // hex digits (bytes, 22 bytes); value i.
  struct records {
    bool bytes;
    uint64_t salt;
    uint64_t id(uint64_t i) const { return util::mix64(salt + i); }
    std::string key(uint64_t i) const {
      char s[32];
      std::snprintf(s, sizeof s, "space/%016llx", static_cast<unsigned long long>(id(i)));
      return s;
    }
    bool insert(index& idx, uint64_t i) const {
      return bytes ? idx.insert(key(i), std::string_view(reinterpret_cast<const char*>(&i), 8)) : idx.insert(id(i), i);
    }
    bool update(index& idx, uint64_t i) const {
      const uint64_t v = ~i;
      return bytes ? idx.update(key(i), std::string_view(reinterpret_cast<const char*>(&v), 8)) : idx.update(id(i), v);
    }
    bool remove(index& idx, uint64_t i) const { return bytes ? idx.remove(key(i)) : idx.remove(id(i)); }
  };

  // Thread t inserts records t, t + T, ... until it meets its first
  // pool_full; the records each thread inserted.
  static std::vector<std::vector<uint64_t>> fill(index& idx, const records& r, unsigned threads) {
    std::vector<std::vector<uint64_t>> ids(threads);
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
      ts.emplace_back([&, t] {
        for (uint64_t i = t;; i += threads) {
          try {
            if (r.insert(idx, i)) ids[t].push_back(i);
          } catch (const error& e) {
            if (e.code() != errc::pool_full) throw;
            return;
          }
        }
      });
    for (auto& t : ts) t.join();
    return ids;
  }

  // Each thread updates, then removes, the records it inserted: every
  // remove succeeds, every update but (keys=bytes, copy-on-write) one that
  // finds no block of its size in a pool full in that size class. As in
  // full_pool_refill_test.cpp, the default run updates no more records
  // after 4,096 refusals (each an exception); the long run updates all.
  static void update_then_remove(index& idx, const records& r, const std::vector<std::vector<uint64_t>>& ids) {
    const uint64_t max_refusals = test::long_run() ? UINT64_MAX : 4096;
    std::atomic<uint64_t> refused{0}, full{0};
    std::vector<std::thread> ts;
    for (size_t t = 0; t < ids.size(); ++t)
      ts.emplace_back([&, t] {
        for (uint64_t i : ids[t]) {
          if (full.load(std::memory_order_relaxed) >= max_refusals) break;
          try {
            refused += !r.update(idx, i);
          } catch (const error& e) {
            if (e.code() != errc::pool_full) throw;
            ++full;
          }
        }
        for (uint64_t i : ids[t]) refused += !r.remove(idx, i);
      });
    for (auto& t : ts) t.join();
    EXPECT_EQ(refused.load(), 0u);
    std::printf("[ space ] updates refused for a full pool: %llu\n", (unsigned long long)full.load());
  }

  void refill_cycle();

  static size_t total(const std::vector<std::vector<uint64_t>>& ids) {
    size_t n = 0;
    for (auto& v : ids) n += v.size();
    return n;
  }
};

void PactreeSpace::refill_cycle() {
  const space_param& prm = GetParam();
  auto idx = open_idx(prm.bytes ? "keys=bytes" : "", prm.pool_mib << 20);
  auto ids = fill(*idx, {prm.bytes, seed_ << 32}, prm.threads);
  const size_t first = total(ids);
  ASSERT_GT(first, 1000u);
  for (unsigned round = 1; round <= 2; ++round) {
    const records old{prm.bytes, (seed_ << 32) + ((round - 1) << 28)};
    update_then_remove(*idx, old, ids);
    ASSERT_EQ(idx->stats().records, 0u);
    const records fresh{prm.bytes, (seed_ << 32) + (uint64_t(round) << 28)};
    ids = fill(*idx, fresh, prm.threads);
    const size_t again = total(ids);
    std::printf("[ space ] %llu MiB, %u thread(s), %s: first fill %zu, refill %u %zu (%.0f%%), %.0f merges, %.0f full-pool retries\n",
                static_cast<unsigned long long>(prm.pool_mib), prm.threads, prm.bytes ? "bytes" : "u64", first, round,
                again, 100.0 * double(again) / double(first), extra(*idx, "merges"), extra(*idx, "full_pool_retries"));
    EXPECT_GE(double(again), 0.9 * double(first)) << "refill " << round << " below 90% of the first fill";
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
  }
  idx->abandon();
  idx = reopen();
  expect_no_leak(*idx);
  EXPECT_EQ(idx->stats().records, total(ids));
  auto c = idx->check();
  EXPECT_TRUE(c.ok) << c.message;
}

TEST_P(PactreeSpace, RefillAfterUpdateAndRemoveHolds90Percent) { refill_cycle(); }

// keys=bytes in 2 MiB (31 chunks of 64 KiB, the records' blocks in four
// size classes) took 85-100% of the first fill, below 90% in about one run
// of six, while a thread's cache took 64 blocks of a class at a time: a
// chunk or two held by another thread's cache, out of reach. A small
// pool's caches now take fewer (alloc/heap.hpp, batch_).

std::vector<space_param> space_params() {
  std::vector<space_param> v;
  for (uint64_t mib : {2, 16})
    for (unsigned threads : {1, 2})
      for (bool bytes : {false, true}) v.push_back({mib, threads, bytes});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Pools, PactreeSpace, testing::ValuesIn(space_params()), space_name);

}  // namespace
}  // namespace pmindex
