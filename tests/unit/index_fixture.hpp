// A gtest fixture for one index's own unit tests (pactree_test.cpp,
// utree_test.cpp, pmasstree_test.cpp, ...): a temporary pool, the printed
// seed, open and reopen with parameters, a stats() figure, the leak check
// of a dirty open, and comparisons with a std::map oracle.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <random>
#include <string>

#include "oracle.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "substrate_util.hpp"
#include "test_seed.hpp"

namespace pmindex::test {

class index_fixture : public testing::Test {
 protected:
  explicit index_fixture(const std::string& index) : index_(index), pool_(index + "-ut") {}

  void SetUp() override {
    seed_ = test_seed();
    rng_.seed(seed_);
  }

  // A new pool (the previous one removed) unless `reopen` (then it must
  // exist: a reopen never makes a new pool by mistake).
  std::unique_ptr<index> open_idx(const std::string& params, uint64_t size = 256 << 20, bool reopen = false) {
    if (!reopen) ::unlink(pool_.path().c_str());
    options o;
    o.index = index_;
    o.pool_path = pool_.path();
    o.pool_size = size;
    o.params = params;
    o.quiet = true;
    if (reopen) o.open = pm::open_mode::must_exist;
    return open(o);
  }
  std::unique_ptr<index> reopen() { return open_idx("", 0, true); }

  // A named figure of stats().extra, or -1.
  static double extra(index& idx, const std::string& name) {
    for (auto& [n, x] : idx.stats().extra)
      if (n == name) return x;
    return -1;
  }
  // Right after a dirty open: the blocks in use are the blocks trace()
  // reported, so nothing leaked.
  static void expect_no_leak(index& idx) {
    ASSERT_FALSE(idx.report().was_clean);
    EXPECT_EQ(idx.report().traced_blocks, idx.pool().usage().used_blocks);
  }

  // Writes `magic` over the root block's magic word of idx (an older
  // layout's), closes it, and expects the reopen to fail with
  // errc::bad_version and a message that says to recreate the pool.
  void expect_old_layout_refused(std::unique_ptr<index>& idx, uint64_t magic) {
    auto& p = idx->pool();
    auto* m = p.ptr<uint64_t>(p.root());
    *m = magic;
    p.persist(m, 8);
    idx->close();
    expect_reopen_refused(idx, errc::bad_version, "recreate");
  }
  // Expects the reopen of the pool to fail with `code` and a message that
  // contains `what`.
  void expect_reopen_refused(std::unique_ptr<index>& idx, errc code, const std::string& what) {
    try {
      idx = reopen();
      ADD_FAILURE() << "the pool reopened";
    } catch (const error& e) {
      EXPECT_EQ(e.code(), code);
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }

  template <class K, class V>
  void expect_same(index& idx, const std::map<K, V>& ref, const char* phase) {
    SCOPED_TRACE(std::string(phase) + " seed=" + std::to_string(seed_));
    ASSERT_NO_FATAL_FAILURE(expect_matches(idx, ref));
  }

  // One random write checked against the oracle: `pick` below `inserts`
  // inserts, equal to it updates, above it removes (the caller's range for
  // pick sets the mix). The index must answer as the map does.
  static void random_write(index& idx, std::map<std::string, std::string>& ref, const std::string& k,
                           const std::string& v, unsigned pick, unsigned inserts) {
    const bool had = ref.count(k) != 0;
    if (pick < inserts) {
      ASSERT_EQ(idx.insert(k, v), !had);
      ref.emplace(k, v);
    } else if (pick == inserts) {
      ASSERT_EQ(idx.update(k, v), had);
      if (had) ref[k] = v;
    } else {
      ASSERT_EQ(idx.remove(k), had);
      ref.erase(k);
    }
  }

  // Closes and reopens, then abandons (what a crash leaves) and reopens
  // (with `leak_check`, checking that nothing leaked): the index matches
  // ref after each.
  void expect_same_after_reopens(std::unique_ptr<index>& idx, const std::map<std::string, std::string>& ref,
                                 bool leak_check = false) {
    idx->close();
    idx = reopen();
    expect_same(*idx, ref, "clean reopen");
    idx->abandon();
    idx = reopen();
    if (leak_check) expect_no_leak(*idx);
    expect_same(*idx, ref, "dirty reopen");
  }

  std::string index_;
  temp_pool pool_;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace pmindex::test
