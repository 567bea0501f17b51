// Allocator tests through the pool: size classes and alignment, large
// blocks, no overlap under two threads, reuse only after the epoch, tracing
// recovery frees exactly the unreported blocks, clean save/load round trip.
#include <algorithm>
#include <cstring>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "pmindex/alloc/size_classes.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/pool.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

using test::temp_pool;

std::unique_ptr<pm::pool> file_pool(const std::string& path, uint64_t size = 16 << 20) {
  pm::pool_options po;
  po.path = path;
  po.size = size;
  po.quiet = true;
  po.index_name = "heap_test";
  return pm::pool::open(po);
}

std::unique_ptr<pm::pool> dram_pool(uint64_t size = 16 << 20) {
  pm::pool_options po;
  po.pm_mode = pm::mode::dram;
  po.size = size;
  return pm::pool::open(po);
}

TEST(SizeClasses, SmallestFittingClass) {
  for (size_t n = 1; n <= alloc::k_max_small; ++n) {
    unsigned c = alloc::class_of(n);
    ASSERT_LT(c, alloc::k_nclasses);
    ASSERT_GE(alloc::class_size(c), n) << n;
    if (c > 0) {
      ASSERT_LT(alloc::class_size(c - 1), n) << n;
    }
  }
  for (unsigned c = 0; c < alloc::k_nclasses; ++c) {
    EXPECT_EQ(alloc::class_size(c) % 16, 0u);
    if (alloc::class_size(c) >= 64) {
      EXPECT_EQ(alloc::class_size(c) % 64, 0u);
    }
  }
}

TEST(Heap, AlignmentAndBlockSize) {
  auto p = dram_pool();
  for (size_t n : {1, 8, 16, 17, 40, 48, 63, 64, 65, 100, 200, 500, 1000, 3000, 4096}) {
    for (int rep = 0; rep < 40; ++rep) {
      uint64_t off = p->alloc(n);
      ASSERT_NE(off, 0u);
      size_t cs = alloc::class_size(alloc::class_of(n));
      EXPECT_EQ(p->block_size(off), cs);
      EXPECT_EQ(off % (cs >= 64 ? 64 : 16), 0u) << n;
      EXPECT_TRUE(p->is_allocated(off));
      EXPECT_FALSE(p->is_allocated(off + 8));
    }
  }
}

TEST(Heap, LargeBlocks) {
  auto p = dram_pool(32 << 20);
  uint64_t a = p->alloc(5000), b = p->alloc(200 << 10), c = p->alloc(64 << 10);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a % (64 << 10), p->header().heap_offset % (64 << 10));
  EXPECT_EQ(p->block_size(a), size_t{64} << 10);
  EXPECT_EQ(p->block_size(b), size_t{256} << 10);
  EXPECT_EQ(p->block_size(c), size_t{64} << 10);
  EXPECT_TRUE(p->is_allocated(b));
  EXPECT_FALSE(p->is_allocated(b + (64 << 10)));  // a tail chunk is not a block
  std::memset(p->ptr(b), 7, 200 << 10);
  p->free(b);
  EXPECT_FALSE(p->is_allocated(b));
  EXPECT_EQ(p->alloc(256 << 10), b);  // first fit reuses the run
  EXPECT_EQ(p->alloc(uint64_t{1} << 30), 0u);  // bigger than the pool: full, not a crash
  auto u = p->usage();
  EXPECT_GE(u.used_bytes, (64u + 256 + 64) << 10);
}

TEST(Heap, FullPoolReturnsZeroAndRecovers) {
  auto p = dram_pool(1 << 20);
  std::vector<uint64_t> got;
  for (uint64_t off; (off = p->alloc(1000));) got.push_back(off);
  EXPECT_GT(got.size(), 500u);
  EXPECT_EQ(p->alloc(1000), 0u);
  EXPECT_EQ(p->alloc(100000), 0u);
  std::set<uint64_t> uniq(got.begin(), got.end());
  EXPECT_EQ(uniq.size(), got.size());
  for (auto off : got) p->free(off);
  EXPECT_NE(p->alloc(100000), 0u);  // emptied chunks coalesce into runs
}

// The remove reserve: alloc() never hands its blocks out; alloc_for_remove
// lends them on a full pool; the next free of the class pays one back (not
// into the free space); an empty reserve with blocks lent says "wait", one
// that never filled says "give up"; reserved blocks are free space to
// usage(), to tracing recovery and to a clean close.
TEST(Heap, RemoveReserveServesOnlyRemovesAndIsPaidBack) {
  auto p = dram_pool(4 << 20);
  p->keep_for_removes(256, 4);
  std::vector<uint64_t> got;
  for (uint64_t off; (off = p->alloc(256));) got.push_back(off);
  EXPECT_EQ(p->usage().used_blocks, got.size());  // the reserve is not "used"
  std::set<uint64_t> uniq(got.begin(), got.end());
  std::vector<uint64_t> lent;
  for (int i = 0; i < 4; ++i) {
    uint64_t off = p->alloc_for_remove(200);
    ASSERT_NE(off, 0u);
    EXPECT_EQ(uniq.count(off), 0u);
    lent.push_back(off);
  }
  EXPECT_EQ(std::set<uint64_t>(lent.begin(), lent.end()).size(), 4u);
  EXPECT_EQ(p->alloc_for_remove(256), 0u);  // all lent
  EXPECT_TRUE(p->wait_for_reserve());       // and owed: wait
  EXPECT_EQ(p->alloc(256), 0u);             // still full for everyone else
  p->free(got.back());                      // pays one back ...
  EXPECT_EQ(p->alloc(256), 0u);             // ... to the reserve, not to alloc
  EXPECT_EQ(p->alloc_for_remove(256), got.back());
  lent.push_back(got.back());
  got.pop_back();
  // A class whose reserve never filled (a full pool) has nothing to wait for.
  p->keep_for_removes(64, 2);
  EXPECT_EQ(p->alloc_for_remove(64), 0u);
  EXPECT_FALSE(p->wait_for_reserve());
  for (auto off : lent) p->free(off);  // pay back, then plain frees
  for (auto off : got) p->free(off);
  EXPECT_EQ(p->usage().used_blocks, 0u);
}

TEST(Heap, RemoveReserveAcrossTracingAndCleanClose) {
  temp_pool tp("reserve");
  std::vector<uint64_t> live;
  {
    auto p = file_pool(tp.path(), 4 << 20);
    p->keep_for_removes(64, 8);
    for (int i = 0; i < 100; ++i) live.push_back(p->alloc(64));
    p->abandon();
  }
  {
    auto p = file_pool(tp.path(), 4 << 20);
    p->keep_for_removes(64, 8);  // as an index does before its recovery
    uint64_t n = p->rebuild_heap([&](pm::pool::trace_sink& s) {
      for (auto off : live) s.add(off, 64);
    });
    EXPECT_EQ(n, live.size());
    EXPECT_EQ(p->usage().used_blocks, live.size());  // traced == used: no leak, reserve apart
    std::set<uint64_t> seen(live.begin(), live.end());
    for (uint64_t off; (off = p->alloc(64));) ASSERT_TRUE(seen.insert(off).second);
    for (int i = 0; i < 8; ++i) {  // taken again after the rebuild
      uint64_t off = p->alloc_for_remove(64);
      ASSERT_NE(off, 0u);
      ASSERT_TRUE(seen.insert(off).second);
    }
    EXPECT_EQ(p->alloc_for_remove(64), 0u);
    for (auto off : seen)
      if (std::find(live.begin(), live.end(), off) == live.end()) p->free(off);
    p->close();  // releases the reserve: free in the saved state
  }
  auto p = file_pool(tp.path(), 4 << 20);
  ASSERT_TRUE(p->was_clean());
  EXPECT_EQ(p->usage().used_blocks, live.size());
  EXPECT_EQ(p->header().used_at_close, live.size() * 64);
}

// Two threads allocate, fill, and free random sizes; no two live blocks may
// overlap and no block's contents may change under its owner.
TEST(Heap, NoOverlapUnderTwoThreads) {
  uint64_t seed = test::test_seed();
  auto p = dram_pool(64 << 20);
  const int rounds = test::long_run() ? 200000 : 20000;
  struct live {
    uint64_t off, size;
    uint8_t tag;
  };
  std::vector<live> result[2];
  auto work = [&](int t) {
    std::mt19937_64 rng(seed + t);
    std::vector<live> mine;
    for (int i = 0; i < rounds; ++i) {
      if (!mine.empty() && rng() % 3 == 0) {
        size_t k = rng() % mine.size();
        auto b = mine[k];
        for (uint64_t j = 0; j < b.size; ++j)
          if (p->ptr<uint8_t>(b.off)[j] != b.tag) {
            ADD_FAILURE() << "block " << b.off << " overwritten";
            return;
          }
        p->free(b.off);
        mine[k] = mine.back();
        mine.pop_back();
        continue;
      }
      uint64_t n = rng() % 16 == 0 ? 4097 + rng() % 100000 : 1 + rng() % 4096;
      uint64_t off = p->alloc(n);
      if (!off) continue;
      uint8_t tag = static_cast<uint8_t>(1 + (t * 97 + i) % 250);
      std::memset(p->ptr(off), tag, n);
      mine.push_back({off, n, tag});
    }
    result[t] = mine;
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  std::vector<live> all = result[0];
  all.insert(all.end(), result[1].begin(), result[1].end());
  std::sort(all.begin(), all.end(), [](auto& x, auto& y) { return x.off < y.off; });
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_TRUE(p->is_allocated(all[i].off));
    EXPECT_GE(p->block_size(all[i].off), all[i].size);
    if (i) {
      ASSERT_LE(all[i - 1].off + all[i - 1].size, all[i].off) << "overlap";
    }
    for (uint64_t j = 0; j < all[i].size; ++j) ASSERT_EQ(p->ptr<uint8_t>(all[i].off)[j], all[i].tag);
  }
}

// A retired block stays allocated while any thread is pinned, and is
// reclaimed once every thread has left its epoch.
TEST(Heap, ReuseOnlyAfterTheEpoch) {
  auto p = dram_pool();
  std::atomic<int> phase{0};
  std::thread reader([&] {
    auto g = p->pin();
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
  });
  while (phase.load() != 1) std::this_thread::yield();
  uint64_t victim = p->alloc(64);
  std::set<uint64_t> handed_out;
  auto frees_pinned = pm::thread_counters().frees;
  p->retire(victim);
  for (int i = 0; i < 2000; ++i) {  // many retires: collect runs every 64
    uint64_t x = p->alloc(64);
    handed_out.insert(x);
    p->retire(x);
    handed_out.insert(p->alloc(64));
  }
  EXPECT_EQ(handed_out.count(victim), 0u);
  EXPECT_TRUE(p->is_allocated(victim));
  EXPECT_GT(p->epochs().pending(), 2000u);
  EXPECT_EQ(pm::thread_counters().frees, frees_pinned);
  auto frees0 = pm::thread_counters().frees;
  phase = 2;
  reader.join();
  for (int i = 0; i < 200; ++i) p->retire(p->alloc(64));
  // Reclaimed blocks go to this thread's cache (still marked in the heap's
  // bitmap), so count the frees instead of asking is_allocated.
  EXPECT_GE(pm::thread_counters().frees - frees0, 2001u) << "not reclaimed after the reader left";
  EXPECT_LT(p->epochs().pending(), 200u);
}

struct blk {
  uint64_t off, size;
};

// Tracing recovery: after a crash (abandon), reporting a subset of the
// allocated blocks frees exactly the others, and no reported block is
// handed out again until the pool is full.
TEST(Heap, TracingRecoveryFreesExactlyTheUnreported) {
  uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  temp_pool tp("trace");
  std::vector<blk> blocks;
  {
    auto p = file_pool(tp.path(), 8 << 20);
    for (int i = 0; i < 3000; ++i) {
      uint64_t n = i % 100 == 0 ? 5000 + rng() % 70000 : 1 + rng() % 600;
      uint64_t off = p->alloc(n);
      ASSERT_NE(off, 0u);
      blocks.push_back({off, n});
    }
    p->abandon();
  }
  auto p = file_pool(tp.path(), 8 << 20);
  ASSERT_FALSE(p->was_clean());
  std::vector<blk> kept, dropped;
  for (auto& b : blocks) (rng() % 2 ? kept : dropped).push_back(b);
  uint64_t n = p->rebuild_heap([&](pm::pool::trace_sink& s) {
    for (auto& b : kept) s.add(b.off, b.size);
  });
  EXPECT_EQ(n, kept.size());
  for (auto& b : kept) ASSERT_TRUE(p->is_allocated(b.off));
  for (auto& b : dropped) ASSERT_FALSE(p->is_allocated(b.off));
  auto u = p->usage();
  EXPECT_EQ(u.used_blocks, kept.size());
  // Fill the pool: nothing handed out may overlap a kept block.
  std::map<uint64_t, uint64_t> kept_at;
  for (auto& b : kept) kept_at[b.off] = p->block_size(b.off);
  auto overlaps = [&](uint64_t off, uint64_t size) {
    auto it = kept_at.upper_bound(off);
    if (it != kept_at.end() && it->first < off + size) return true;
    if (it != kept_at.begin() && std::prev(it)->first + std::prev(it)->second > off) return true;
    return false;
  };
  uint64_t fresh = 0;
  for (size_t n2 : {48, 600, 5000}) {
    for (uint64_t off; (off = p->alloc(n2));) {
      ASSERT_FALSE(overlaps(off, p->block_size(off))) << off;
      ++fresh;
    }
  }
  EXPECT_GT(fresh, dropped.size() / 2);
}

TEST(Heap, TracingRejectsBadBlocks) {
  temp_pool tp("tracebad");
  uint64_t a, big;
  {
    auto p = file_pool(tp.path());
    a = p->alloc(64);
    big = p->alloc(100000);
    p->abandon();
  }
  auto p = file_pool(tp.path());
  auto code_of = [&](auto f) {
    try {
      p->rebuild_heap(f);
    } catch (const error& e) {
      return e.code();
    }
    return errc::ok;
  };
  EXPECT_EQ(code_of([&](auto& s) { s.add(a, 64), s.add(a, 64); }), errc::corrupt);          // twice
  EXPECT_EQ(code_of([&](auto& s) { s.add(a + 16, 64); }), errc::corrupt);                 // misaligned
  EXPECT_EQ(code_of([&](auto& s) { s.add(a, 64), s.add(a + 64, 32); }), errc::corrupt);   // other class
  EXPECT_EQ(code_of([&](auto& s) { s.add(16, 64); }), errc::corrupt);                     // outside
  EXPECT_EQ(code_of([&](auto& s) { s.add(big, 100000), s.add(big + 65536, 64); }), errc::corrupt);
  EXPECT_EQ(code_of([&](auto& s) { s.add(a, 64), s.add(big, 100000); }), errc::ok);
  EXPECT_TRUE(p->is_allocated(a));
  EXPECT_TRUE(p->is_allocated(big));
}

// Clean close saves the allocator state; the next open reads it back and
// agrees on every block.
TEST(Heap, CleanSaveLoadRoundTrip) {
  uint64_t seed = test::test_seed();
  std::mt19937_64 rng(seed);
  temp_pool tp("saveload");
  std::vector<blk> live, freed;
  alloc::heap_usage before;
  {
    auto p = file_pool(tp.path());
    for (int i = 0; i < 5000; ++i) {
      uint64_t n = i % 200 == 0 ? 5000 + rng() % 200000 : 1 + rng() % 4096;
      uint64_t off = p->alloc(n);
      ASSERT_NE(off, 0u);
      live.push_back({off, n});
    }
    for (size_t i = 0; i < live.size();) {
      if (rng() % 3 == 0) {
        p->free(live[i].off);
        freed.push_back(live[i]);
        live[i] = live.back();
        live.pop_back();
      } else {
        ++i;
      }
    }
    p->close();
  }
  auto p = file_pool(tp.path());
  ASSERT_TRUE(p->was_clean());
  auto after = p->usage();
  EXPECT_EQ(after.used_blocks, live.size());
  std::set<uint64_t> live_offs;
  for (auto& b : live) {
    ASSERT_TRUE(p->is_allocated(b.off));
    live_offs.insert(b.off);
  }
  for (auto& b : freed)
    if (!live_offs.count(b.off)) {
      ASSERT_FALSE(p->is_allocated(b.off));
    }
  for (int i = 0; i < 2000; ++i) {
    uint64_t off = p->alloc(1 + rng() % 4096);
    if (!off) break;
    ASSERT_FALSE(live_offs.count(off)) << "live block handed out again after load";
  }
}

// A thread's cache takes a batch of blocks at each refill, out of the other
// threads' reach until it gives them back. In a small pool a batch is a few
// blocks: at 64 (the large pools' batch) one thread that allocated one
// 1000-byte block kept 63 others (a chunk of the 2 MiB pool's 31)
// while another thread met a full pool.
TEST(Heap, SmallPoolThreadCachesHoldFewBlocks) {
  auto fill = [](pm::pool& p) {
    uint64_t n = 0;
    while (p.alloc(1000)) ++n;
    return n;
  };
  const uint64_t all = fill(*dram_pool(2 << 20));
  auto p = dram_pool(2 << 20);
  std::promise<void> took, filled;
  std::thread other([&] {  // takes one block, and its cache a batch, while the pool fills
    EXPECT_NE(p->alloc(1000), 0u);
    took.set_value();
    filled.get_future().wait();
  });
  took.get_future().wait();
  const uint64_t rest = fill(*p);
  filled.set_value();
  other.join();
  EXPECT_GE(rest + 1, all - 8) << "of " << all << " blocks";
}

// Threads that come and go give their cached blocks and their per-thread
// state back (the state is reused, not grown).
TEST(Heap, ThreadExitReturnsItsCache) {
  auto p = dram_pool();
  auto one_thread = [&] {
    std::thread t([&] {
      for (int i = 0; i < 10; ++i) p->free(p->alloc(100));
    });
    t.join();
  };
  one_thread();
  auto u1 = p->usage();
  for (int i = 0; i < 20; ++i) one_thread();
  auto u2 = p->usage();
  EXPECT_EQ(u2.dram_bytes, u1.dram_bytes);
  EXPECT_EQ(u2.used_blocks, 0u);
}

// Regression: close() with blocks retired by threads that have exited
// deadlocked when the closing thread had never used the pool (drain_all held
// the epoch mutex while reclaiming, and reclaiming registered the thread).
TEST(Heap, CloseFromAThreadThatNeverUsedThePool) {
  temp_pool tp("closedeadlock");
  auto p = file_pool(tp.path());
  std::thread t([&] {
    for (int i = 0; i < 10; ++i) p->retire(p->alloc(64));
  });
  t.join();
  auto done = std::async(std::launch::async, [&] { p->close(); });
  if (done.wait_for(std::chrono::seconds(30)) == std::future_status::timeout) {
    std::fprintf(stderr, "pool::close deadlocked\n");
    std::_Exit(1);
  }
  auto q = file_pool(tp.path());
  EXPECT_TRUE(q->was_clean());
  EXPECT_EQ(q->usage().used_blocks, 0u);
}

}  // namespace
}  // namespace pmindex
