// fptree: std::map oracle (sequential and random keys, splits, removes,
// updates, scans at boundaries), all modes, clean and dirty reopen, 2-thread
// concurrency, small nodes (deep inner layer), bad parameters, the repair
// of a split torn between its link and its bitmap store, the scan order hint
// and the refusal of the leaf layout before it.
#include <bit>
#include <cstring>
#include <functional>

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
TEST(Fptree, RemoveAllUnlinksEmptiedLeaves) { remove_all_unlinks_leaves("fptree"); }
TEST(Fptree, RemoveAllUnlinksEmptiedLeavesSmallNodes) {
  remove_all_unlinks_leaves("fptree", "leaf=4,inner=3");
}
TEST(Fptree, RemoveCosts) { remove_costs("fptree"); }
TEST(Fptree, ConcurrentUnlinksUnderReadersAndScans) { concurrent_unlinks("fptree", "leaf=4,inner=3"); }
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

// The scan order hint (hybrid_core.hpp, "Scan order hint"): a scan that
// sorts a leaf stores the order of its live slots after the entries, and a
// later scan uses it only if it checks out against the leaf. Every hint a
// crash, a stale scan or a reused slot can leave is refused, and every scan
// still equals the oracle (a build that skips the key order check, mutant
// scan_order_unchecked, fails here). keys=bytes: the same leaf, slots
// ordered by their keys' bytes (8-byte keys through the u64 calls).
TEST(Fptree, ScanOrderHintIsCheckedBeforeUse) {
  for (const char* params : {"", "keys=bytes"}) {
    SCOPED_TRACE(params);
    pool_file pf("fptree-hint");
    auto idx = open(opts("fptree", pf.path(), pm::mode::persist, params));
    oracle ref;
    std::mt19937_64 rng(pmindex::test::test_seed());
    while (ref.size() < 40) {  // one 64-slot leaf
      const uint64_t k = rng() % 1000000;
      if (idx->insert(k, k + 1)) ref[k] = k + 1;
    }
    auto& p = idx->pool();
    auto* l = p.ptr<btree::fptree::detail::leaf>(p.ptr<btree::detail::anchor>(p.root())->head);
    ASSERT_EQ(l->next, 0u);
    auto* slots = reinterpret_cast<btree::detail::entry*>(reinterpret_cast<char*>(l) + 32 + 64);
    uint8_t* hint = reinterpret_cast<uint8_t*>(slots + 64);  // leaf.hpp: right after the 64 entries
    auto order = [&] {  // the live slots in key order
      std::vector<uint8_t> o;
      for (uint64_t m = l->bitmap; m; m &= m - 1) o.push_back(uint8_t(std::countr_zero(m)));
      std::sort(o.begin(), o.end(), [&](uint8_t a, uint8_t b) { return slots[a].key < slots[b].key; });
      return o;
    };
    auto scans_match = [&] {
      std::vector<uint64_t> froms = {0, ref.begin()->first, ref.rbegin()->first, ref.rbegin()->first + 1};
      for (auto& [k, v] : ref)
        if (k % 3 == 0) froms.push_back(k + 1);
      for (uint64_t from : froms) {
        record out[64];
        const size_t n = idx->scan(from, 64, out);
        auto it = ref.lower_bound(from);
        for (size_t i = 0; i < n; ++i, ++it) {
          ASSERT_NE(it, ref.end()) << "from " << from;
          ASSERT_EQ(out[i], (record{it->first, it->second})) << "from " << from << " position " << i;
        }
        ASSERT_EQ(it, ref.end()) << "from " << from << ": scan stopped early";
      }
    };
    ASSERT_NO_FATAL_FAILURE(scans_match());
    const auto good = order();
    ASSERT_EQ(std::vector<uint8_t>(hint, hint + good.size()), good) << "a scan stores the order it found";
    const uint8_t free_slot = uint8_t(std::countr_zero(~l->bitmap));
    const std::vector<std::pair<const char*, std::function<void()>>> damage = {
        {"reversed", [&] { std::reverse(hint, hint + good.size()); }},
        {"two neighbours swapped", [&] { std::swap(hint[10], hint[11]); }},
        {"a slot twice", [&] { hint[5] = hint[6]; }},
        {"a free slot", [&] { hint[7] = free_slot; }},
        {"beyond the leaf", [&] { hint[3] = 0xff; }},
        {"all zero", [&] { std::memset(hint, 0, 64); }},
    };
    for (auto& [what, f] : damage) {
      SCOPED_TRACE(what);
      std::memcpy(hint, good.data(), good.size());
      f();
      ASSERT_NO_FATAL_FAILURE(scans_match());
      ASSERT_EQ(std::vector<uint8_t>(hint, hint + good.size()), good) << "the refused hint is replaced";
    }
    // Stale hints: a remove frees a slot, an insert of a key of another
    // rank takes it (same count, every listed slot live), then a leaf that
    // grew by one.
    auto it = std::next(ref.begin(), 5);
    ASSERT_TRUE(idx->remove(it->first));
    ref.erase(it);
    const uint64_t last = ref.rbegin()->first + 7;
    ASSERT_TRUE(idx->insert(last, 1));
    ref[last] = 1;
    ASSERT_NO_FATAL_FAILURE(scans_match());
    ASSERT_TRUE(idx->insert(3, 4));
    ref[3] = 4;
    ASSERT_NO_FATAL_FAILURE(scans_match());
    ASSERT_EQ(std::vector<uint8_t>(hint, hint + ref.size()), order());
    ASSERT_NO_FATAL_FAILURE(expect_equal(*idx, ref));
  }
}

// A pool of the leaf layout before the scan order hint (64 bytes shorter
// leaves) gets errc::bad_version (exit code 5) and says to recreate it.
TEST(Fptree, OldLeafLayoutRefusedWithClearError) {
  for (const char* params : {"", "keys=bytes"}) {
    SCOPED_TRACE(params);
    pool_file pf("fptree-v1");
    {
      auto idx = open(opts("fptree", pf.path(), pm::mode::persist, params));
      ASSERT_TRUE(idx->insert(1, 2));
      auto& p = idx->pool();
      auto* magic = p.ptr<uint64_t>(p.root());
      *magic = *params ? btree::fptree::detail::leaf_ops<btree::detail::byte_keys>::k_magic_v1
                       : btree::fptree::detail::leaf_ops<btree::detail::u64_keys>::k_magic_v1;
      p.persist(magic, 8);
      idx->close();
    }
    try {
      auto idx = open(opts("fptree", pf.path(), pm::mode::persist, params));
      ADD_FAILURE() << "the pool reopened";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), errc::bad_version);
      EXPECT_NE(std::string(e.what()).find("recreate"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pmindex::btree_test
