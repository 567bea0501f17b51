// What the WORT-family suites (wort_test.cpp, wort_bytes_test.cpp) share:
// the parameters (index x mode), a fixture base with a pool path and a
// seeded generator, and the parameter lists.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <random>
#include <string>
#include <vector>

#include "art/detail/nodes.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/mode.hpp"
#include "test_seed.hpp"

namespace pmindex::test {

struct wort_param {
  const char* index;
  pm::mode mode;
};
inline std::string wort_param_name(const testing::TestParamInfo<wort_param>& p) {
  return std::string(p.param.index) + "_" + (p.param.mode == pm::mode::dram ? "dram" : "persist");
}
inline auto wort_all_modes() {
  return testing::Values(wort_param{"wort", pm::mode::persist}, wort_param{"woart", pm::mode::persist},
                         wort_param{"artcow", pm::mode::persist}, wort_param{"wort", pm::mode::dram},
                         wort_param{"woart", pm::mode::dram}, wort_param{"artcow", pm::mode::dram});
}
inline auto wort_persist_only() {
  return testing::Values(wort_param{"wort", pm::mode::persist}, wort_param{"woart", pm::mode::persist},
                         wort_param{"artcow", pm::mode::persist});
}

// A pool file per test (removed before and after), the test's seed.
class wort_fixture : public testing::TestWithParam<wort_param> {
 protected:
  explicit wort_fixture(const char* tag) : tag_(tag) {}
  void SetUp() override {
    path_ = "/dev/shm/pmindex-" + std::string(tag_) + "-" + std::to_string(getpid()) + "-" +
            GetParam().index + ".pool";
    ::unlink(path_.c_str());
    seed_ = test_seed();
    rng_.seed(seed_);
  }
  void TearDown() override { ::unlink(path_.c_str()); }
  bool persistent() const { return GetParam().mode != pm::mode::dram; }

  const char* tag_;
  std::string path_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

#ifdef PMINDEX_MUTANTS
// The state a crash leaves in a WORT/WOART prefix split between the header
// store and the parent swing (test hook art::detail::g_stop_split_after_header):
// `before` inserted, the insert of `splitter` stopped there, the crash.
// check() must see it (depth disagrees with position), recovery must repair
// it (twice: idempotent), the interrupted insert is absent and then
// completes. Byte calls, so both layouts run it (8-byte keys for keys=u64).
inline void expect_split_repaired(options o, const std::vector<std::string>& before,
                                  const std::string& splitter) {
  auto val = [](const std::string& k) {
    return std::string(std::string_view(value_bytes(std::hash<std::string>{}(k))));
  };
  ::unlink(o.pool_path.c_str());
  o.open = pm::open_mode::create_if_missing;
  {
    auto idx = open(o);
    for (auto& k : before) ASSERT_TRUE(idx->insert(k, val(k)));
    ASSERT_TRUE(idx->check().ok);
    art::detail::g_stop_split_after_header = 1;
    idx->insert(splitter, val(splitter));  // stops after the header store
    ASSERT_EQ(art::detail::g_stop_split_after_header.load(), 0) << "the insert did not split a prefix";
    auto c = idx->check();
    ASSERT_FALSE(c.ok);
    EXPECT_NE(c.message.find("half-done split"), std::string::npos) << c.message;
    idx->abandon();  // the crash
  }
  o.open = pm::open_mode::must_exist;
  for (int round = 0; round < 2; ++round) {  // recovery twice: idempotent
    auto idx = open(o);
    EXPECT_FALSE(idx->report().was_clean);
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
    std::string v;
    for (auto& k : before) {
      ASSERT_TRUE(idx->lookup(k, &v));
      ASSERT_EQ(v, val(k));
    }
    EXPECT_FALSE(idx->lookup(splitter, nullptr));
    record_buffer out;
    ASSERT_EQ(idx->scan("", 8, out), before.size());
    if (round == 1) {
      ASSERT_TRUE(idx->insert(splitter, val(splitter)));  // the split now completes
      ASSERT_TRUE(idx->check().ok);
      ASSERT_TRUE(idx->lookup(splitter, &v));
    }
    idx->abandon();
  }
  ::unlink(o.pool_path.c_str());
}
#endif

}  // namespace pmindex::test
