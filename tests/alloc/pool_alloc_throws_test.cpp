// A pool allocation may throw std::bad_alloc: a chunk taken from a free run
// needs a DRAM node for the run's rest once the heap's spare node went to a
// free that found no DRAM (alloc/heap.cpp, make_spare). Whether it does
// depends on what the other threads freed, so the generic allocation
// failure suite meets it only now and then; here the heap is put in that
// state on purpose.
//
// PACTree's split allocated its new node after it had taken and written
// its SMO log entry, outside the block that gives the entry back: a throw
// there left the entry taken (check(): "an SMO log entry left after its
// SMO was applied"), and after 16 such the thread's next split waited for
// a free entry forever.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "failing_new.hpp"
#include "hybrid/pactree/pactree.hpp"
#include "pmindex/index.hpp"

namespace pmindex {
namespace {

TEST(PoolAllocThrows, PactreeSplitGivesBackItsLogEntry) {
  options o;
  o.index = "pactree";
  o.pool_path = "/dev/shm/pmindex-alloc-" + std::to_string(getpid()) + "-split.pool";
  o.pool_size = 64 << 20;
  o.params = "keys=bytes";
  o.quiet = true;
  ::unlink(o.pool_path.c_str());
  auto idx = open(o);
  auto key = [](uint64_t i) {
    char s[16];
    std::snprintf(s, sizeof s, "k%08llu", static_cast<unsigned long long>(i));
    return std::string(s);
  };
  const std::string v(8, 'v');
  uint64_t next = 0;
  for (; next < 5000; ++next) ASSERT_TRUE(idx->insert(key(next), v));
  ASSERT_TRUE(idx->check().ok);  // and the SMO thread is idle
  auto& p = idx->pool();

  // The spare node goes to a freed chunk run with allocated chunks on both
  // sides (no run to join) whose own node cannot be had.
  const uint64_t a = p.alloc(64 << 10), b = p.alloc(64 << 10), c = p.alloc(64 << 10);
  ASSERT_TRUE(a && b == a + (64 << 10) && c == b + (64 << 10)) << "three chunks in a row";
  test::fail_allocation(0);
  p.free(b);
  ASSERT_TRUE(test::allow_allocations()) << "the free did not need a DRAM node";

  // The nodes' size class runs dry: the calling thread's cache empty, no
  // chunk with a free block, so the next node needs a new chunk, which
  // now throws (twice in a row: the first throw may leave blocks cached).
  std::vector<uint64_t> held;
  held.reserve(100000);  // no DRAM asked for while the failure is armed
  for (unsigned in_a_row = 0; in_a_row < 2;) {
    ASSERT_LT(held.size(), held.capacity());
    test::fail_allocation(0);
    try {
      const uint64_t off = p.alloc(sizeof(hybrid::pactree::dnode));
      ASSERT_NE(off, 0u);
      held.push_back(off);
      in_a_row = 0;
    } catch (const std::bad_alloc&) {
      ++in_a_row;
    }
    test::allow_allocations();
  }

  // Inserts, each with its n-th allocation failed for n = 0, 1, ... until
  // it succeeds (as the generic suite does), past a few splits.
  unsigned thrown = 0;
  for (unsigned i = 0; i < 200; ++i, ++next) {
    for (long fail = 0;; ++fail) {
      test::fail_allocation(fail);
      try {
        ASSERT_TRUE(idx->insert(key(next), v));
        test::allow_allocations();
        break;
      } catch (const std::bad_alloc&) {
        ++thrown;
      }
      test::allow_allocations();
      ASSERT_LT(fail, 1000);
    }
  }
  ASSERT_GT(thrown, 0u);
  auto r = idx->check();
  EXPECT_TRUE(r.ok) << r.message;
  for (uint64_t h : held) p.free(h);
  p.free(a);
  p.free(c);
  idx->close();
  ::unlink(o.pool_path.c_str());
}

}  // namespace
}  // namespace pmindex
