// The pmemids `arraylist` in every mode, keys=u64 and keys=bytes (8-byte
// keys: the slot number; values up to 120 bytes): random operations against
// a std::map, clean and dirty reopens; the persistence cost per operation
// its header states; the typed errors of keys and values it cannot take.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "pmemids_ops.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "substrate_util.hpp"
#include "test_seed.hpp"

namespace pmindex {
namespace {

using test::pmemids::ref_map;

options opts(const std::string& path, pm::mode m, bool bytes) {
  options o = test::pmemids::pool_options("arraylist", path, m, bytes);
  o.params += o.params.empty() ? "capacity=8192" : ",capacity=8192";
  return o;
}

std::string slot_key(uint64_t s) { return std::string(std::string_view(key_bytes(s))); }

void compare(index& idx, const ref_map& ref) { test::pmemids::compare_scan(idx, ref); }

struct param {
  pm::mode mode;
  bool bytes;
};
class Arraylist : public testing::TestWithParam<param> {};

TEST_P(Arraylist, RandomOpsReopenAndRecover) {
  const param p = GetParam();
  std::mt19937_64 rng(test::test_seed());
  test::temp_pool tp("pmemids-arraylist");
  ref_map ref;
  auto ops = [&](index& idx, int n) {
    for (int i = 0; i < n; ++i) {
      std::string k = slot_key(rng() % 3000);
      std::string v = p.bytes ? std::string(rng() % 121, static_cast<char>('A' + rng() % 26))
                              : std::string(std::string_view(value_bytes(rng())));
      switch (rng() % 4) {
        case 0:
        case 1: ASSERT_EQ(idx.insert(k, v), ref.emplace(k, v).second) << i; break;
        case 2: {
          const bool had = ref.count(k);
          ASSERT_EQ(idx.update(k, v), had) << i;
          if (had) ref[k] = v;
          break;
        }
        default: ASSERT_EQ(idx.remove(std::string_view(k)), ref.erase(k) == 1) << i;
      }
    }
  };
  auto o = opts(tp.path(), p.mode, p.bytes);
  {
    auto idx = open(o);
    ops(*idx, 6000);
    compare(*idx, ref);
    if (p.mode == pm::mode::dram) return;
    idx->close();
  }
  o.open = pm::open_mode::must_exist;
  o.params.clear();  // the pool's own
  {
    auto idx = open(o);
    EXPECT_TRUE(idx->report().was_clean);
    compare(*idx, ref);
    ops(*idx, 3000);
    if (p.mode == pm::mode::volatile_) return;  // a dirty volatile pool is refused
    idx->abandon();
  }
  auto idx = open(o);
  EXPECT_FALSE(idx->report().was_clean);
  EXPECT_EQ(idx->report().traced_blocks, idx->pool().usage().used_blocks);
  compare(*idx, ref);
}

INSTANTIATE_TEST_SUITE_P(Modes, Arraylist,
                         testing::Values(param{pm::mode::dram, false}, param{pm::mode::volatile_, false},
                                         param{pm::mode::persist, false}, param{pm::mode::tx, false},
                                         param{pm::mode::dram, true}, param{pm::mode::persist, true},
                                         param{pm::mode::tx, true}),
                         [](const testing::TestParamInfo<param>& i) {
                           return std::string(pm::to_string(i.param.mode)) + (i.param.bytes ? "_bytes" : "_u64");
                         });

struct cost {
  uint64_t lines, fences;
};
template <class F>
cost measure(F&& f) {
  auto before = pm::thread_counters();
  f();
  auto d = pm::thread_counters() - before;
  return {d.lines_flushed, d.fences};
}

// The figures of arraylist.hpp.
TEST(ArraylistCost, FlushesAndFencesPerOperation) {
  for (pm::mode m : {pm::mode::persist, pm::mode::tx}) {
    SCOPED_TRACE(std::string(pm::to_string(m)));
    const bool tx = m == pm::mode::tx;
    test::temp_pool tp("pmemids-arraylist-cost");
    {
      auto idx = open(opts(tp.path(), m, false));
      auto c = measure([&] { idx->insert(uint64_t{5}, uint64_t{1}); });
      EXPECT_EQ(c.fences, tx ? 3u : 1u);
      if (!tx) { EXPECT_EQ(c.lines, 1u); }
      c = measure([&] { idx->update(uint64_t{5}, uint64_t{2}); });
      EXPECT_EQ(c.fences, 1u);
      EXPECT_EQ(c.lines, 1u);
      c = measure([&] { idx->remove(uint64_t{5}); });
      EXPECT_EQ(c.fences, tx ? 3u : 1u);
      if (!tx) { EXPECT_EQ(c.lines, 1u); }
      idx->close();
    }
    test::temp_pool tb("pmemids-arraylist-cost-b");
    auto idx = open(opts(tb.path(), m, true));
    const std::string k = slot_key(7), v100(100, 'x'), v40(40, 'y');
    auto c = measure([&] { idx->insert(k, v100); });  // two lines of the item
    EXPECT_EQ(c.fences, tx ? 3u : 2u);
    if (!tx) { EXPECT_EQ(c.lines, 2u); }
    c = measure([&] { idx->update(k, v100); });  // persist: into the spare, then the meta word
    EXPECT_EQ(c.fences, tx ? 3u : 2u);
    if (!tx) { EXPECT_EQ(c.lines, 3u); }
    c = measure([&] { idx->update(k, v40); });  // persist: back into the item, one line
    EXPECT_EQ(c.fences, tx ? 3u : 1u);
    if (!tx) { EXPECT_EQ(c.lines, 1u); }
    std::string got;
    ASSERT_TRUE(idx->lookup(k, &got));
    EXPECT_EQ(got, v40);
  }
}

// keys=bytes: a key is the 8 bytes of a slot number; a value fits the item.
TEST(Arraylist, BytesLimitsAreTypedErrors) {
  test::temp_pool tp("pmemids-arraylist-limits");
  auto idx = open(opts(tp.path(), pm::mode::persist, true));
  auto code = [](auto&& f) {
    try {
      f();
    } catch (const error& e) {
      return e.code();
    }
    return errc::ok;
  };
  EXPECT_EQ(code([&] { idx->insert(slot_key(1), std::string(121, 'v')); }), errc::value_too_long);
  EXPECT_EQ(code([&] { idx->insert(slot_key(1), std::string(120, 'v')); }), errc::ok);
  EXPECT_EQ(code([&] { idx->insert(std::string_view("1234567"), "v"); }), errc::unsupported);
  EXPECT_EQ(code([&] { idx->insert(std::string_view("123456789"), "v"); }), errc::key_too_long);
  EXPECT_EQ(code([&] { idx->insert(slot_key(8192), "v"); }), errc::key_too_long);
  ASSERT_TRUE(idx->check().ok);
  EXPECT_EQ(idx->stats().records, 1u);
}

}  // namespace
}  // namespace pmindex
