// Persistence modes: which primitives do work in each mode (counted by the
// per-thread counters), forced flush instructions, and lines per persist.
#include <cstring>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/counters.hpp"
#include "pmindex/pm/pool.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

using test::temp_pool;

struct mode_case {
  pm::mode m;
  bool flushes, fences;
};

class Modes : public ::testing::TestWithParam<mode_case> {};

TEST_P(Modes, FlushAndFenceCountsOfCanaryInserts) {
  auto c = GetParam();
  temp_pool tp("mode");
  options o;
  o.pool_path = tp.path();
  o.pool_size = 8 << 20;
  o.mode = c.m;
  o.quiet = true;
  auto idx = open(o);
  auto before = pm::thread_counters();
  for (uint64_t i = 0; i < 200; ++i) ASSERT_TRUE(idx->insert(i * 3 + 1, i));
  for (uint64_t i = 0; i < 50; ++i) ASSERT_TRUE(idx->update(i * 3 + 1, i + 5));
  for (uint64_t i = 0; i < 50; ++i) ASSERT_TRUE(idx->remove(i * 3 + 1));
  auto d = pm::thread_counters() - before;
  EXPECT_EQ(d.allocs, 200u);
  EXPECT_GT(d.bytes_allocated, 200u * 24);
  if (c.flushes) {
    EXPECT_GE(d.lines_flushed, 200u * 2 + 50 + 50);  // node + link per insert, value, unlink
  } else {
    EXPECT_EQ(d.lines_flushed, 0u);
  }
  if (c.fences) {
    EXPECT_GE(d.fences, 200u * 2 + 50 + 50);
  } else {
    EXPECT_EQ(d.fences, 0u);
  }
  EXPECT_EQ(idx->pool().pm_mode(), c.m);
  EXPECT_TRUE(idx->check().ok);
}

INSTANTIATE_TEST_SUITE_P(AllModes, Modes,
                         ::testing::Values(mode_case{pm::mode::dram, false, false},
                                           mode_case{pm::mode::volatile_, false, false},
                                           mode_case{pm::mode::persist, true, true},
                                           mode_case{pm::mode::eadr, false, true}),
                         [](const auto& info) {
                           auto s = std::string(pm::to_string(info.param.m));
                           return s == "volatile" ? std::string("volatile_") : s;
                         });

std::unique_ptr<pm::pool> raw_pool(const std::string& path, pm::mode m, pm::flush_kind k) {
  pm::pool_options po;
  po.path = path;
  po.size = 2 << 20;
  po.pm_mode = m;
  po.flush = k;
  po.quiet = true;
  return pm::pool::open(po);
}

TEST(Modes, ForcedFlushKindsAndLinesPerPersist) {
  for (auto k : {pm::flush_kind::clwb, pm::flush_kind::clflushopt, pm::flush_kind::clflush}) {
    temp_pool tp("flush");
    if (!pm::cpu_supports(k)) {
      EXPECT_THROW(raw_pool(tp.path(), pm::mode::persist, k), error);
      continue;
    }
    auto p = raw_pool(tp.path(), pm::mode::persist, k);
    EXPECT_EQ(p->flush_instruction(), k);
    uint64_t off = p->alloc(256);
    char* a = p->ptr<char>(off);  // 64-byte aligned (class >= 64)
    ASSERT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
    std::memset(a, 1, 256);
    auto c0 = pm::thread_counters();
    p->persist(a, 64);
    auto c1 = pm::thread_counters();
    p->persist(a, 256);
    auto c2 = pm::thread_counters();
    p->persist(a + 60, 8);  // straddles two lines
    auto c3 = pm::thread_counters();
    p->flush(a, 1);
    auto c4 = pm::thread_counters();
    EXPECT_EQ((c1 - c0).lines_flushed, 1u) << pm::to_string(k);
    EXPECT_EQ((c1 - c0).fences, 1u);
    EXPECT_EQ((c2 - c1).lines_flushed, 4u);
    EXPECT_EQ((c3 - c2).lines_flushed, 2u);
    EXPECT_EQ((c4 - c3).lines_flushed, 1u);
    EXPECT_EQ((c4 - c3).fences, 0u);
    EXPECT_EQ(a[100], 1);  // clflush evicts; the data stays
  }
}

TEST(Modes, AutomaticPicksTheBestFlush) {
  temp_pool tp("auto");
  auto p = raw_pool(tp.path(), pm::mode::persist, pm::flush_kind::automatic);
  EXPECT_EQ(p->flush_instruction(), pm::best_flush());
  EXPECT_TRUE(pm::cpu_supports(pm::best_flush()));
  if (pm::cpu_supports(pm::flush_kind::clwb)) {
    EXPECT_EQ(pm::best_flush(), pm::flush_kind::clwb);
  }
}

TEST(Modes, NoOpModesIgnoreForcedFlush) {
  for (auto m : {pm::mode::dram, pm::mode::volatile_, pm::mode::eadr}) {
    temp_pool tp("noop");
    auto p = raw_pool(tp.path(), m, pm::best_flush());
    EXPECT_EQ(p->flush_instruction(), pm::flush_kind::none);
    auto c0 = pm::thread_counters();
    p->persist(p->base() + 4096, 4096);
    auto d = pm::thread_counters() - c0;
    EXPECT_EQ(d.lines_flushed, 0u);
    EXPECT_EQ(d.fences, m == pm::mode::eadr ? 1u : 0u);
  }
}

TEST(Modes, EmulatedWriteLatencyRuns) {
  temp_pool tp("writens");
  pm::pool_options po;
  po.path = tp.path();
  po.size = 2 << 20;
  po.write_ns = 500;
  po.quiet = true;
  auto p = pm::pool::open(po);
  auto c0 = pm::thread_counters();
  for (int i = 0; i < 10; ++i) p->persist(p->base() + 4096, 128);
  EXPECT_EQ((pm::thread_counters() - c0).lines_flushed, 20u);
}

TEST(Modes, ParseNames) {
  for (auto m : {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr, pm::mode::tx})
    EXPECT_EQ(pm::parse_mode(pm::to_string(m)), m);
  EXPECT_FALSE(pm::parse_mode("nvm"));
  for (auto k : {pm::flush_kind::automatic, pm::flush_kind::clwb, pm::flush_kind::clflushopt, pm::flush_kind::clflush})
    EXPECT_EQ(pm::parse_flush(pm::to_string(k)), k);
  EXPECT_FALSE(pm::parse_flush("none"));
}

TEST(Modes, CommandLineFlushKinds) {
  for (std::string k : {"clwb", "clflushopt", "clflush"}) {
    if (!pm::cpu_supports(*pm::parse_flush(k))) continue;
    temp_pool tp("cliflush");
    EXPECT_EQ(test::run_pmindex({"load", "--pool", tp.path(), "--pool-size", "8M", "--keys", "500", "--flush", k}), 0)
        << k;
    EXPECT_EQ(test::run_pmindex({"verify", "--pool", tp.path(), "--keys", "500", "--flush", k}), 0) << k;
  }
}

}  // namespace
}  // namespace pmindex
