// fptree: std::map oracle (sequential and random keys, splits, removes,
// updates, scans at boundaries), all modes, clean and dirty reopen, 2-thread
// concurrency, small nodes (deep inner layer), bad parameters, and the repair
// of a split torn between its link and its bitmap store.
#include "btree/fptree/leaf.hpp"
#include "hybrid_btree_test.hpp"

namespace pmindex::btree_test {
namespace {

TEST(Fptree, SequentialSplitsScansUpdatesRemoves) { sequential("fptree"); }
TEST(Fptree, SequentialSmallNodes) { sequential("fptree", "leaf=4,inner=3"); }
TEST(Fptree, RandomOpsAllModes) { random_all_modes("fptree"); }
TEST(Fptree, RandomOpsSmallNodes) { random_all_modes("fptree", "leaf=5,inner=4"); }
TEST(Fptree, ReopenCleanAndDirty) { reopen("fptree"); }
TEST(Fptree, ReopenSmallNodes) { reopen("fptree", "leaf=8,inner=3"); }
TEST(Fptree, ConcurrentTwoWritersAndReader) { concurrent("fptree"); }
TEST(Fptree, ConcurrentSmallNodes) { concurrent("fptree", "leaf=6,inner=3"); }
TEST(Fptree, BadParams) {
  bad_params("fptree", "leaf=65");
  bad_params("fptree", "leaf=2");
  bad_params("fptree", "inner=x");
}

// A crash after the split's link store became durable but before its bitmap
// store leaves the moved records in both leaves; recovery must drop the
// stale copies from the left leaf.
TEST(Fptree, RecoveryRepairsTornSplit) {
  pool_file pf("fptree-torn");
  oracle ref;
  {
    auto idx = open(opts("fptree", pf.path()));
    for (uint64_t k = 0; k <= 64; ++k) {
      ASSERT_TRUE(idx->insert(k, k * 10));
      ref[k] = k * 10;
    }
    auto& p = idx->pool();
    auto* a = p.ptr<btree::detail::anchor>(p.root());
    auto* l = p.ptr<btree::fptree::detail::leaf>(a->head);
    ASSERT_NE(l->next, 0u);
    ASSERT_NE(l->bitmap, ~uint64_t{0});
    l->bitmap = ~uint64_t{0};  // the moved slots still hold their records
    idx->abandon();
  }
  auto idx = open(opts("fptree", pf.path()));
  ASSERT_FALSE(idx->report().was_clean);
  ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
}

}  // namespace
}  // namespace pmindex::btree_test
