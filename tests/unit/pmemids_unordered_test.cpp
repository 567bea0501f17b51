// The unordered pmemids structures (hashtable, linkedlist) in every mode
// they offer (the generic conformance suites run dram and persist only, and
// their byte keys are longer than 16): random operations against a
// std::map, compared by lookups and stats() (they have no scan), then a
// clean and a dirty reopen (tx: the undo logs rolled back first) with the
// same content; scan and range are one typed error; and the per-operation
// persistence cost of each mode as the structure's header states it.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmemids_ops.hpp"
#include "substrate_util.hpp"
#include "test_seed.hpp"

namespace pmindex::pmemids_unordered_test {
namespace {

struct param {
  std::string index;
  pm::mode mode;
  bool bytes;
};

using test::pmemids::key_of;
using test::pmemids::ref_map;

options opts(const std::string& path, const param& p) {
  return test::pmemids::pool_options(p.index, path, p.mode, p.bytes);
}

// Every key ever used looked up (`space` keys), the count, check().
void compare(index& idx, const ref_map& ref, const param& p, uint64_t space) {
  auto c = idx.check();
  ASSERT_TRUE(c.ok) << c.message;
  ASSERT_EQ(idx.stats().records, ref.size());
  std::string got;
  for (uint64_t i = 0; i < space; ++i) {
    std::string k = key_of(i, p.bytes);
    auto it = ref.find(k);
    ASSERT_EQ(idx.lookup(k, &got), it != ref.end()) << i;
    if (it != ref.end()) { ASSERT_EQ(got, it->second) << i; }
  }
}

class PmemidsUnordered : public testing::TestWithParam<param> {};

TEST_P(PmemidsUnordered, RandomOpsReopenAndRecover) {
  const param p = GetParam();
  std::mt19937_64 rng(test::test_seed());
  test::temp_pool tp("pmemids-unordered");
  ref_map ref;
  {
    auto idx = open(opts(tp.path(), p));
    test::pmemids::random_ops(*idx, ref, rng, p.bytes, 6000, 3000,
                              [&] { ASSERT_NO_FATAL_FAILURE(compare(*idx, ref, p, 3000)); });
    ASSERT_NO_FATAL_FAILURE(compare(*idx, ref, p, 3000));
    if (p.mode == pm::mode::dram) return;
    idx->close();
  }
  auto idx = open(opts(tp.path(), p));
  EXPECT_TRUE(idx->report().was_clean);
  ASSERT_NO_FATAL_FAILURE(compare(*idx, ref, p, 3000));
  if (p.mode == pm::mode::volatile_) return;  // not crash-consistent: no recovery
  for (int i = 0; i < 500; ++i) {
    std::string k = key_of(3000 + i, p.bytes);
    std::string v = p.bytes ? "v" + std::to_string(i) : std::string(std::string_view(value_bytes(i)));
    if (idx->insert(k, v)) ref.emplace(k, v);
  }
  idx->abandon();  // a crash between operations
  idx = open(opts(tp.path(), p));
  EXPECT_FALSE(idx->report().was_clean);
  ASSERT_NO_FATAL_FAILURE(compare(*idx, ref, p, 3500));
}

TEST_P(PmemidsUnordered, ScanAndRangeAreUnsupported) {
  const param p = GetParam();
  test::temp_pool tp("pmemids-unordered-scan");
  auto idx = open(opts(tp.path(), p));
  ASSERT_TRUE(idx->insert(key_of(1, p.bytes), p.bytes ? "v" : std::string(std::string_view(value_bytes(1)))));
  auto code = [](auto&& f) {
    try {
      f();
    } catch (const error& e) {
      return e.code();
    }
    return errc::ok;
  };
  record r[4];
  record_buffer rb;
  std::vector<record> rs;
  EXPECT_EQ(code([&] { idx->scan(uint64_t{0}, 4, r); }), errc::unsupported);
  EXPECT_EQ(code([&] { idx->scan(std::string_view(), 4, rb); }), errc::unsupported);
  EXPECT_EQ(code([&] { idx->range(uint64_t{0}, ~uint64_t{0}, rs); }), errc::unsupported);
  EXPECT_EQ(code([&] { idx->range("", "\xff", rb); }), errc::unsupported);
  EXPECT_EQ(idx->stats().records, 1u);
}

std::vector<param> unordered_params() {
  std::vector<param> v;
  for (auto& e : registered_indexes()) {
    if (e->family != "pmemids" || e->ordered) continue;
    for (pm::mode m : {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx})
      for (bool bytes : {false, true})
        if (e->supports(m) && (!bytes || e->supports(key_kind::bytes))) v.push_back({e->name, m, bytes});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Modes, PmemidsUnordered, testing::ValuesIn(unordered_params()),
                         [](const testing::TestParamInfo<param>& i) {
                           return i.param.index + "_" + std::string(pm::to_string(i.param.mode)) +
                                  (i.param.bytes ? "_bytes" : "_u64");
                         });

// Persistence per operation (hashtable.hpp, linkedlist.hpp): persist
// inserts flush the element then store the one link word (2 fences), tx logs
// that word and commits (3 fences); a u64 update is one word (1 line, 1
// fence); a remove unlinks with one word (persist 1 fence, tx 3).
TEST(PmemidsUnorderedCost, FencesPerOperation) {
  for (const char* name : {"hashtable", "linkedlist"})
    for (pm::mode m : {pm::mode::persist, pm::mode::tx}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(pm::to_string(m)));
      test::temp_pool tp("pmemids-unordered-cost");
      auto idx = open(opts(tp.path(), {name, m, false}));
      idx->insert(uint64_t{100}, uint64_t{1});
      auto before = pm::thread_counters();
      idx->insert(uint64_t{50}, uint64_t{2});  // hashtable: 2 records in 16 buckets, no resize
      auto d = pm::thread_counters() - before;
      EXPECT_EQ(d.fences, m == pm::mode::tx ? 3u : 2u);
      before = pm::thread_counters();
      idx->update(uint64_t{50}, uint64_t{3});
      d = pm::thread_counters() - before;
      EXPECT_EQ(d.fences, 1u);
      EXPECT_EQ(d.lines_flushed, 1u);
      before = pm::thread_counters();
      idx->remove(uint64_t{50});
      d = pm::thread_counters() - before;
      EXPECT_EQ(d.fences, m == pm::mode::tx ? 3u : 1u);
    }
}

}  // namespace
}  // namespace pmindex::pmemids_unordered_test
