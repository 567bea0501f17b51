// The byte calls of an index that keeps 8-byte integer keys (index.cpp's
// u64_at_or_after / u64_at_or_before): a default std::string_view (null
// data) is the empty bound. Under UBSan (the test build) a memcpy from its
// null data aborted before the fix.
#include <gtest/gtest.h>

#include <string_view>

#include "pmindex/index.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

TEST(U64ByteCalls, DefaultViewIsTheEmptyBound) {
  test::temp_pool pool("u64-byte-calls");
  options o;
  o.index = "fptree";
  o.pool_path = pool.path();
  o.pool_size = 16 << 20;
  o.quiet = true;
  auto idx = open(o);
  for (uint64_t k = 1; k <= 10; ++k) ASSERT_TRUE(idx->insert(k, k * 10));
  record_buffer got;
  EXPECT_EQ(idx->scan(std::string_view{}, 3, got), 3u);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got.key(0), std::string_view("\0\0\0\0\0\0\0\x01", 8));
  record_buffer all;
  EXPECT_EQ(idx->range(std::string_view{}, std::string_view("\xff\xff\xff\xff\xff\xff\xff\xff", 8), all), 10u);
  record_buffer none;
  EXPECT_EQ(idx->range(std::string_view("\x01", 1), std::string_view{}, none), 0u);  // hi < lo
  idx->close();
}

}  // namespace
}  // namespace pmindex
