// Issue 17, part 3 (full pools): fill a small pool until an insert fails
// with pool_full, remove every record (a remove must always succeed, also in
// a full pool), fill it again; the refill must hold >= 90% of the first
// fill, with 1 and with 2 threads, for every registered persistent index.
//
// Not yet met by every index (see the lead's report of issue 17: leaves that
// are never merged or freed, copy-on-write removes that need space), so the
// suite is DISABLED_: run it with --gtest_also_run_disabled_tests
// --gtest_filter='*FullPoolRefill*'. It prints the figures either way.
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

namespace pmindex {
namespace {

struct refill_param {
  std::string index;
  unsigned threads;
};

std::vector<refill_param> refill_params() {
  std::vector<refill_param> v;
  for (auto& e : registered_indexes()) {
    if (!e->persistent()) continue;
    v.push_back({e->name, 1});
    if (e->concurrent) v.push_back({e->name, 2});
  }
  return v;
}

std::string refill_name(const testing::TestParamInfo<refill_param>& p) {
  std::string s = p.param.index + "_t" + std::to_string(p.param.threads);
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class FullPoolRefill : public testing::TestWithParam<refill_param> {};

// Inserts distinct keys (thread t: keys t, t + T, ...) from `first` on until
// each thread has seen 200 pool_full failures in a row; returns the keys
// inserted per thread.
std::vector<std::vector<uint64_t>> fill(index& idx, unsigned threads, uint64_t first) {
  std::vector<std::vector<uint64_t>> keys(threads);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      unsigned fails = 0;
      for (uint64_t i = first + t; fails < 200; i += threads) {
        uint64_t k = util::mix64(i);
        try {
          if (idx.insert(k, i)) keys[t].push_back(k), fails = 0;
        } catch (const error& e) {
          if (e.code() != errc::pool_full) throw;
          ++fails;
        }
      }
    });
  for (auto& t : ts) t.join();
  return keys;
}

TEST_P(FullPoolRefill, DISABLED_RemoveAlwaysSucceedsAndRefillHolds90Percent) {
  const auto& prm = GetParam();
  options o;
  o.index = prm.index;
  o.pool_path = "/dev/shm/pmindex-refill-" + std::to_string(getpid()) + "-" + refill_name({prm, 0}) + ".pool";
  o.pool_size = 16 << 20;
  o.quiet = true;
  ::unlink(o.pool_path.c_str());
  auto idx = open(o);
  auto first = fill(*idx, prm.threads, 0);
  size_t n1 = 0;
  for (auto& k : first) n1 += k.size();
  std::atomic<uint64_t> refused{0};
  {
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < prm.threads; ++t)
      ts.emplace_back([&, t] {
        for (uint64_t k : first[t]) {
          try {
            if (!idx->remove(k)) refused.fetch_add(1);
          } catch (const error&) {
            refused.fetch_add(1);
          }
        }
      });
    for (auto& t : ts) t.join();
  }
  auto second = fill(*idx, prm.threads, uint64_t{1} << 40);
  size_t n2 = 0;
  for (auto& k : second) n2 += k.size();
  std::printf("[ refill ] %s, %u thread(s): first fill %zu, removes refused %llu, refill %zu (%.0f%%)\n",
              prm.index.c_str(), prm.threads, n1, static_cast<unsigned long long>(refused.load()), n2,
              n1 ? 100.0 * static_cast<double>(n2) / static_cast<double>(n1) : 0.0);
  EXPECT_EQ(refused.load(), 0u) << "removes refused in a full pool";
  EXPECT_GE(static_cast<double>(n2), 0.9 * static_cast<double>(n1)) << "refill below 90% of the first fill";
  auto c = idx->check();
  EXPECT_TRUE(c.ok) << c.message;
  idx->close();
  ::unlink(o.pool_path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Indexes, FullPoolRefill, testing::ValuesIn(refill_params()), refill_name);

}  // namespace
}  // namespace pmindex
