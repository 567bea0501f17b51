// fptree keys=bytes: the shared byte-key suite (hybrid_btree_bytes_test.hpp)
// with default and small nodes (many splits: byte fence keys and separators),
// the cost of one byte insert / update / remove, and the repair of a split
// torn between its link and its bitmap store (the moved records' blocks are
// named by both leaves until recovery drops the stale slots: no block may be
// traced twice).
#include "btree/fptree/leaf.hpp"
#include "hybrid_btree_bytes_test.hpp"

namespace pmindex::btree_test {
namespace {

TEST(FptreeBytes, PrefixChainsAndLimits) { prefix_chains_and_limits("fptree"); }
TEST(FptreeBytes, PrefixChainsSmallNodes) { prefix_chains_and_limits("fptree", "leaf=4,inner=3"); }
TEST(FptreeBytes, RandomOpsAllModes) { random_bytes_all_modes("fptree"); }
TEST(FptreeBytes, RandomOpsSmallNodes) { random_bytes_all_modes("fptree", "leaf=5,inner=3"); }
TEST(FptreeBytes, U64CallsOnByteLayout) { u64_calls_on_bytes("fptree", "leaf=8,inner=4"); }
TEST(FptreeBytes, ReopenCleanAndDirty) { reopen_bytes("fptree"); }
TEST(FptreeBytes, ReopenSmallNodes) { reopen_bytes("fptree", "leaf=4,inner=3"); }
TEST(FptreeBytes, FullPool) { full_pool_bytes("fptree"); }
TEST(FptreeBytes, FullPoolSmallNodes) { full_pool_bytes("fptree", "leaf=4,inner=3"); }
TEST(FptreeBytes, ConcurrentTwoWritersAndReader) { concurrent_bytes("fptree"); }
TEST(FptreeBytes, ConcurrentSmallNodes) { concurrent_bytes("fptree", "leaf=4,inner=3"); }
TEST(FptreeBytes, DamagedOffsetsAreCorrupt) {
  damaged_offsets("fptree", [](pm::pool& p, uint64_t head) {
    return &p.ptr<btree::detail::entry>(head + 96)->value;  // slot 0 of a 64-slot leaf
  });
}

// fptree.hpp's costs: insert B + 3 lines, 2 fences; update B + 1 lines,
// 2 fences; remove 1 line, 1 fence (B = lines of the record block).
TEST(FptreeBytes, FlushesPerOperation) {
  pool_file pf("fptree-bcost");
  auto idx = open(bytes_opts("fptree", pf.path()));
  ASSERT_TRUE(idx->insert("first", "1"));
  expect_costs(*idx, {{'i', "second", "12345678", 4, 2},        // a 24-byte block: 1 line
                      {'u', "second", std::string(100, 'v'), 3, 2},  // 116 bytes: 2 lines
                      {'r', "second", "", 1, 1}});
}

TEST(FptreeBytes, RecoveryRepairsTornSplit) {
  pool_file pf("fptree-btorn");
  smap ref;
  {
    auto idx = open(bytes_opts("fptree", pf.path()));
    for (int k = 0; k <= 64; ++k) {
      std::string key = "key" + std::to_string(1000 + k);
      ASSERT_TRUE(idx->insert(key, key + "-value"));
      ref[key] = key + "-value";
    }
    auto& p = idx->pool();
    auto* l = p.ptr<btree::fptree::detail::leaf>(p.ptr<btree::detail::anchor>(p.root())->head);
    ASSERT_NE(l->next, 0u);
    ASSERT_NE(l->bitmap, ~uint64_t{0});
    l->bitmap = ~uint64_t{0};  // the moved slots still name their records
    idx->abandon();
  }
  auto idx = open(bytes_opts("fptree", pf.path()));
  ASSERT_FALSE(idx->report().was_clean);
  ASSERT_EQ(idx->report().traced_blocks, idx->pool().usage().used_blocks);
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
}

}  // namespace
}  // namespace pmindex::btree_test
