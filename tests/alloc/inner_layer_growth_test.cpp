// The DRAM inner layer of FPTree, LB+-Tree, uTree and PACTree
// (src/btree/detail/inner_layer.hpp) asks for DRAM in proportion to the
// nodes it makes: its list of nodes grows geometrically. It used to be
// reserved one place at a time, which copied the whole list for every new
// node (quadratic: a tenth of an LB+-Tree insert at a few million records).
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "btree/detail/inner_layer.hpp"
#include "btree/detail/keys.hpp"
#include "failing_new.hpp"

namespace {

namespace d = pmindex::btree::detail;

TEST(InnerLayerGrowth, DramAskedForIsLinearInTheNodesMade) {
  d::inner_layer<d::u64_keys> in(3);  // the smallest nodes: the most of them
  in.build({{0, 64}});
  constexpr uint64_t k_inserts = 8000;
  const uint64_t nodes_before = in.nodes();
  const unsigned long long before = pmindex::test::bytes_allocated();
  for (uint64_t i = 1; i <= k_inserts; ++i) in.insert(i * 10, 64 * (i + 1));
  const unsigned long long asked = pmindex::test::bytes_allocated() - before;
  const uint64_t made = in.nodes() - nodes_before;
  ASSERT_GT(made, k_inserts / 4);
  // Each node (64 bytes at capacity 3) and its place in the list (at most
  // 4 x 8 bytes over the list's doublings), and per insert its descent path
  // and a split's scratch arrays (a few hundred bytes). Growing the list one
  // place at a time asks for 8 x made^2 / 2 bytes: about 64 MB here.
  EXPECT_LE(asked, made * (64 + 32) + k_inserts * 512) << made << " nodes made";
  EXPECT_TRUE(in.check([&] {
    std::vector<std::pair<uint64_t, uint64_t>> leaves{{0, 64}};
    for (uint64_t i = 1; i <= k_inserts; ++i) leaves.emplace_back(i * 10, 64 * (i + 1));
    return leaves;
  }()).empty());
}

}  // namespace
