// lbtree: std::map oracle (sequential and random keys, splits, entry moving,
// removes, updates, scans at boundaries), all modes, clean and dirty reopen,
// 2-thread concurrency, small inner nodes, bad parameters, and the durable
// state of an uncommitted split (spare sibling written, alt not flipped).
#include "btree/lbtree/leaf.hpp"
#include "hybrid_btree_test.hpp"

namespace pmindex::btree_test {
namespace {

TEST(Lbtree, SequentialSplitsScansUpdatesRemoves) { sequential("lbtree"); }
TEST(Lbtree, SequentialSmallInner) { sequential("lbtree", "inner=3"); }
TEST(Lbtree, RandomOpsAllModes) { random_all_modes("lbtree"); }
TEST(Lbtree, RandomOpsSmallInner) { random_all_modes("lbtree", "inner=3"); }
TEST(Lbtree, ReopenCleanAndDirty) { reopen("lbtree"); }
TEST(Lbtree, ConcurrentTwoWritersAndReader) { concurrent("lbtree"); }
TEST(Lbtree, ConcurrentSmallInner) { concurrent("lbtree", "inner=3"); }
TEST(Lbtree, RemoveAllUnlinksEmptiedLeaves) { remove_all_unlinks_leaves("lbtree"); }
TEST(Lbtree, RemoveAllUnlinksEmptiedLeavesSmallNodes) { remove_all_unlinks_leaves("lbtree", "inner=3"); }
TEST(Lbtree, RemoveCosts) { remove_costs("lbtree"); }
TEST(Lbtree, ConcurrentUnlinksUnderReadersAndScans) { concurrent_unlinks("lbtree", "inner=3"); }
TEST(Lbtree, BadParams) {
  bad_params("lbtree", "inner=2");
  bad_params("lbtree", "inner=");
}

// Most inserts touch only line 0: after a split the new leaf has line 0
// free, so three more inserts there flush one line each.
TEST(Lbtree, EntryMovingKeepsInsertsOnOneLine) {
  pool_file pf("lbtree-lines");
  auto idx = open(opts("lbtree", pf.path()));
  for (uint64_t k = 0; k < 15; ++k) ASSERT_TRUE(idx->insert(k * 100, k));  // one split
  auto before = pm::thread_counters();
  ASSERT_TRUE(idx->insert(1450, 1));  // into the right leaf, line 0 free
  auto d = pm::thread_counters() - before;
  EXPECT_EQ(d.lines_flushed, 1u);
  EXPECT_EQ(d.fences, 1u);
  oracle ref;
  for (uint64_t k = 0; k < 15; ++k) ref[k * 100] = k;
  ref[1450] = 1;
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
}

// A split whose spare link is durable but whose meta store is not: the tree
// is the one before the split, and the new leaf is reclaimed (no leak).
TEST(Lbtree, UncommittedSplitIsInvisible) {
  pool_file pf("lbtree-spare");
  oracle ref;
  {
    auto idx = open(opts("lbtree", pf.path()));
    for (uint64_t k = 0; k < 10; ++k) {
      ASSERT_TRUE(idx->insert(k, k));
      ref[k] = k;
    }
    auto& p = idx->pool();
    auto* a = p.ptr<btree::detail::anchor>(p.root());
    auto* l = p.ptr<btree::lbtree::detail::leaf>(a->head);
    uint64_t junk = p.alloc(256);  // allocated, named only by the spare slot
    ASSERT_NE(junk, 0u);
    l->next[1] = static_cast<uint32_t>(junk / 64);
    idx->abandon();
  }
  auto idx = open(opts("lbtree", pf.path()));
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
  EXPECT_EQ(idx->report().traced_blocks, idx->pool().usage().used_blocks);
  EXPECT_EQ(idx->report().traced_blocks, 2u);  // anchor + head leaf
}

}  // namespace
}  // namespace pmindex::btree_test
