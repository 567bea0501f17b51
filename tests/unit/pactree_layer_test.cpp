// PACTree's persistent search layer (src/hybrid/pactree/layer.hpp) on its
// own, against a std::map: find() is a floor search (the greatest anchor <=
// a key), for every key, not only anchors, through prefix splits, end-of-key
// words (anchors that are prefixes of others, the empty anchor), sorted
// nodes growing direct, erased words reused, and paths deeper than find()'s
// fixed stack. Anchors here are kv blocks of the pool (their key bytes).
#include "hybrid/pactree/layer.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "common/kv_block.hpp"
#include "index_fixture.hpp"

namespace pmindex {
namespace {

namespace pt = hybrid::pactree;

struct kv_anchor {
  static std::string_view of_node(const pm::pool& p, uint64_t node, char*) noexcept { return common::kv_key(p, node); }
};

class PactreeLayer : public test::index_fixture {
 protected:
  PactreeLayer() : index_fixture("pactree") {}
};

TEST_F(PactreeLayer, FloorAgainstStdMap) {
  auto idx = open_idx("keys=bytes");  // only for its pool
  pm::pool& p = idx->pool();
  const uint64_t root = p.alloc_or_throw(64);
  *p.ptr<uint64_t>(root) = 0;
  pt::search_layer<kv_anchor> layer(p);
  layer.attach(p.ptr<uint64_t>(root));
  std::map<std::string, uint64_t> ref;  // anchor -> its block
  auto key = [&](unsigned kind) {
    std::string k;
    switch (kind) {
      case 0: {  // short keys over 3 byte values: shared prefixes, prefixes of each other
        for (size_t n = rng_() % 7; n-- > 0;) k.push_back(char("\0\1a"[rng_() % 3]));
        break;
      }
      case 1:  // one prefix, many next bytes: a node outgrows 48 children
        k = "wide";
        k.push_back(char(rng_() % 256));
        break;
      case 2:  // a chain of anchors each a prefix of the next: paths deeper than 32 nodes
        k.assign(1 + rng_() % 60, 'z');
        break;
      default: {  // 8-byte big-endian integers
        uint64_t v = __builtin_bswap64(rng_() % 100000);
        k.assign(reinterpret_cast<const char*>(&v), 8);
      }
    }
    return k;
  };
  auto expect_floors = [&](const char* when) {
    for (int i = 0; i < 300; ++i) {
      const std::string k = key(unsigned(rng_() % 4));
      auto it = ref.upper_bound(k);
      const uint64_t want = it == ref.begin() ? 0 : std::prev(it)->second;
      ASSERT_EQ(layer.find(k), want) << when << ": key of " << k.size() << " bytes, seed " << seed_;
    }
  };
  const int ops = test::long_run() ? 100000 : 8000;
  for (int i = 0; i < ops; ++i) {
    const std::string k = key(unsigned(rng_() % 4));
    auto it = ref.find(k);
    if (it == ref.end()) {
      const uint64_t b = common::make_kv_block(p, k, {});
      ASSERT_EQ(layer.insert(k, b, 0), pt::search_layer<kv_anchor>::put::placed);
      ref.emplace(k, b);
    } else if (rng_() % 3 == 0) {
      ASSERT_TRUE(layer.erase(k, it->second));
      ASSERT_FALSE(layer.erase(k, it->second));
      ref.erase(it);
    }
    if (i % 500 == 0) {
      ASSERT_NO_FATAL_FAILURE(expect_floors("during"));
    }
  }
  ASSERT_NO_FATAL_FAILURE(expect_floors("at the end"));
  std::vector<uint64_t> nodes;
  for (auto& [k, b] : ref) nodes.push_back(b);
  EXPECT_EQ(layer.check(nodes), "");
  nodes.pop_back();
  EXPECT_NE(layer.check(nodes), "");  // a node the list lacks is reported
}

}  // namespace
}  // namespace pmindex
