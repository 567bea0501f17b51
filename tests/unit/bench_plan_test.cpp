// The harness's default pool size: room for every record at what the index
// says a record may take, so a default run does not fail with a full pool.
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <algorithm>

#include "plan.hpp"

namespace pmindex::bench {
namespace {

uint64_t default_size(const std::string& index, uint64_t records) {
  run_config cfg;
  cfg.index = index;
  cfg.records = records;
  return default_pool_size(cfg, {parse_workload("scan=1:100")});
}

TEST(BenchPlan, DefaultPoolHoldsEveryRecordAtItsIndexRate) {
  const uint64_t n = 10'000'000;
  // A scan-only run inserts nothing: the prefill alone, at the default rate.
  const uint64_t rate = index_entry::k_pool_bytes_per_record;
  EXPECT_GE(default_size("fptree", n), n * rate);
  EXPECT_LT(default_size("fptree", n), n * rate + (uint64_t{128} << 20));
  // ROART's near-empty leaf arrays take ~530 B a record at 10M random keys
  // (measured): more than the default.
  EXPECT_GE(default_size("roart", n), n * 768);
}

TEST(BenchPlan, DefaultPoolIsAtLeast256MiB) {
  EXPECT_EQ(default_size("fptree", 1000), uint64_t{256} << 20);
}

// A run whose estimate exceeds the RAM disk (10M ROART records and a run of
// inserts at two threads asked for 26 GB of a 24 GB /dev/shm) gets a pool
// the file system can hold, not a failed create.
TEST(BenchPlan, DefaultPoolFitsTheFreeSpace) {
  struct statvfs v {};
  ASSERT_EQ(statvfs("/dev/shm", &v), 0);
  const uint64_t free = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  const uint64_t got = cap_to_free_space(uint64_t{1} << 50, "/dev/shm/x.pool");
  EXPECT_LE(got, std::max<uint64_t>(free, uint64_t{256} << 20));
  EXPECT_EQ(got % (uint64_t{1} << 20), 0u);
  EXPECT_EQ(cap_to_free_space(uint64_t{300} << 20, "/dev/shm/x.pool"), uint64_t{300} << 20);
}

}  // namespace
}  // namespace pmindex::bench
