// lbtree keys=bytes: the shared byte-key suite (hybrid_btree_bytes_test.hpp)
// with default and small inner nodes, the cost of one byte insert (line 0
// free, and entry moving) / update / remove, and an uncommitted split (spare
// sibling written, alt not flipped): invisible, its leaf reclaimed.
#include "btree/lbtree/leaf.hpp"
#include "hybrid_btree_bytes_test.hpp"

namespace pmindex::btree_test {
namespace {

TEST(LbtreeBytes, PrefixChainsAndLimits) { prefix_chains_and_limits("lbtree"); }
TEST(LbtreeBytes, PrefixChainsSmallInner) { prefix_chains_and_limits("lbtree", "inner=3"); }
TEST(LbtreeBytes, RandomOpsAllModes) { random_bytes_all_modes("lbtree"); }
TEST(LbtreeBytes, RandomOpsSmallInner) { random_bytes_all_modes("lbtree", "inner=3"); }
TEST(LbtreeBytes, U64CallsOnByteLayout) { u64_calls_on_bytes("lbtree", "inner=3"); }
TEST(LbtreeBytes, ReopenCleanAndDirty) { reopen_bytes("lbtree"); }
TEST(LbtreeBytes, ReopenSmallInner) { reopen_bytes("lbtree", "inner=3"); }
TEST(LbtreeBytes, FullPool) { full_pool_bytes("lbtree"); }
TEST(LbtreeBytes, ConcurrentTwoWritersAndReader) { concurrent_bytes("lbtree"); }
TEST(LbtreeBytes, ConcurrentSmallInner) { concurrent_bytes("lbtree", "inner=3"); }
TEST(LbtreeBytes, DamagedOffsetsAreCorrupt) {
  damaged_offsets("lbtree", [](pm::pool& p, uint64_t head) {
    return &p.ptr<btree::lbtree::detail::leaf>(head)->kv[0].value;
  });
}

// lbtree.hpp's costs: insert B + 1 lines, 2 fences with line 0 free (B + 2
// lines, 2 fences when entries move); update B + 1 lines, 2 fences; remove
// 1 line, 1 fence (B = lines of the record block).
TEST(LbtreeBytes, FlushesPerOperation) {
  pool_file pf("lbtree-bcost");
  auto idx = open(bytes_opts("lbtree", pf.path()));
  expect_costs(*idx, {{'i', "k0", "12345678", 2, 2},  // line 0 free; a 1-line block
                      {'i', "k1", "v", 2, 2},
                      {'i', "k2", "v", 2, 2},
                      {'i', "k3", "12345678", 3, 2},  // line 0 full: entries move to line 1
                      {'u', "k3", std::string(100, 'v'), 3, 2},  // 116 bytes: 2 lines
                      {'r', "k3", "", 1, 1}});
}

TEST(LbtreeBytes, UncommittedSplitIsInvisible) {
  pool_file pf("lbtree-bspare");
  smap ref;
  {
    auto idx = open(bytes_opts("lbtree", pf.path()));
    for (int k = 0; k < 10; ++k) {
      std::string key(k * 7, static_cast<char>('a' + k));
      ASSERT_TRUE(idx->insert(key, "v"));
      ref[key] = "v";
    }
    auto& p = idx->pool();
    auto* l = p.ptr<btree::lbtree::detail::leaf>(p.ptr<btree::detail::anchor>(p.root())->head);
    uint64_t junk = p.alloc(256);  // allocated, named only by the spare slot
    ASSERT_NE(junk, 0u);
    l->next[1] = static_cast<uint32_t>(junk / 64);
    idx->abandon();
  }
  auto idx = open(bytes_opts("lbtree", pf.path()));
  ASSERT_NO_FATAL_FAILURE(expect_equal_bytes(*idx, ref));
  EXPECT_EQ(idx->report().traced_blocks, idx->pool().usage().used_blocks);
  EXPECT_EQ(idx->report().traced_blocks, 2u + ref.size());  // anchor, head leaf, records
}

}  // namespace
}  // namespace pmindex::btree_test
