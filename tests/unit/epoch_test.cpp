// Epoch-based reclamation: a pinned reader blocks reclamation, unpinning
// releases it, nesting, orphaned limbo of released slots, drain_all, and a
// two-thread use-after-free detector.
#include <atomic>
#include <thread>
#include <vector>

#include "pmindex/error.hpp"
#include "pmindex/sync/epoch.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

using sync::epoch_guard;
using sync::epoch_manager;

struct reclaimed {
  std::vector<uint64_t> items;
  static void fn(void* ctx, uint64_t item) { static_cast<reclaimed*>(ctx)->items.push_back(item); }
};

bool contains(const std::vector<uint64_t>& v, uint64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(Epoch, ReclaimsAfterTwoAdvances) {
  reclaimed r;
  epoch_manager m(&reclaimed::fn, &r);
  uint32_t s = m.register_slot();
  uint64_t g0 = m.global_epoch();
  m.retire(s, 1);
  m.collect(s);  // g0 + 1: not yet
  EXPECT_EQ(m.global_epoch(), g0 + 1);
  EXPECT_TRUE(r.items.empty());
  m.collect(s);  // g0 + 2: reclaimed
  EXPECT_EQ(r.items, std::vector<uint64_t>{1});
  EXPECT_EQ(m.pending(), 0u);
}

TEST(Epoch, PinnedReaderBlocksReclamation) {
  reclaimed r;
  epoch_manager m(&reclaimed::fn, &r);
  uint32_t writer = m.register_slot(), reader = m.register_slot();
  m.enter(reader);
  m.retire(writer, 42);
  for (int i = 0; i < 100; ++i) m.collect(writer);
  EXPECT_TRUE(r.items.empty());
  EXPECT_LE(m.global_epoch(), 3u);  // advanced at most once past the reader
  EXPECT_EQ(m.pending(), 1u);
  m.exit(reader);
  m.collect(writer);
  m.collect(writer);
  EXPECT_TRUE(contains(r.items, 42));
}

TEST(Epoch, NestedPinsUnpinOnlyAtTheOuterExit) {
  reclaimed r;
  epoch_manager m(&reclaimed::fn, &r);
  uint32_t writer = m.register_slot(), reader = m.register_slot();
  m.enter(reader);
  m.enter(reader);
  m.retire(writer, 7);
  m.exit(reader);  // still pinned
  for (int i = 0; i < 10; ++i) m.collect(writer);
  EXPECT_TRUE(r.items.empty());
  m.exit(reader);
  m.collect(writer);
  m.collect(writer);
  EXPECT_TRUE(contains(r.items, 7));
}

TEST(Epoch, RetireCollectsByItself) {
  reclaimed r;
  epoch_manager m(&reclaimed::fn, &r);
  uint32_t s = m.register_slot();
  for (uint64_t i = 1; i <= 1000; ++i) m.retire(s, i);
  EXPECT_GT(r.items.size(), 800u);  // collect runs every 64 retires
  EXPECT_LT(m.pending(), 200u);
}

TEST(Epoch, ReleasedSlotLimboIsReclaimedByOthers) {
  reclaimed r;
  epoch_manager m(&reclaimed::fn, &r);
  uint32_t a = m.register_slot(), b = m.register_slot(), reader = m.register_slot();
  m.enter(reader);
  m.retire(a, 99);
  m.release_slot(a);  // 99 cannot go yet: becomes an orphan
  EXPECT_FALSE(contains(r.items, 99));
  EXPECT_EQ(m.pending(), 1u);
  m.exit(reader);
  for (int i = 0; i < 3; ++i) m.collect(b);
  EXPECT_TRUE(contains(r.items, 99));
  EXPECT_EQ(m.register_slot(), a);  // the slot is reused
}

TEST(Epoch, DrainAllReclaimsEverything) {
  reclaimed r;
  epoch_manager m(&reclaimed::fn, &r);
  uint32_t a = m.register_slot(), b = m.register_slot();
  for (uint64_t i = 0; i < 10; ++i) m.retire(a, i);
  for (uint64_t i = 10; i < 20; ++i) m.retire(b, i);
  m.release_slot(b);
  m.drain_all();
  EXPECT_EQ(r.items.size(), 20u);
  EXPECT_EQ(m.pending(), 0u);
}

TEST(Epoch, TooManySlotsIsAnError) {
  reclaimed r;
  epoch_manager m(&reclaimed::fn, &r);
  for (uint32_t i = 0; i < epoch_manager::k_max_slots; ++i) m.register_slot();
  try {
    m.register_slot();
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::unsupported);
  }
}

// Readers dereference a shared pointer under a pin; the writer swaps it and
// retires the old object, whose reclamation poisons it. A reader that ever
// sees poison read freed memory.
TEST(Epoch, NoUseAfterFreeUnderTwoThreads) {
  struct obj {
    std::atomic<uint64_t> v;
  };
  constexpr uint64_t k_poison = ~uint64_t{0};
  struct ctx_t {
    std::atomic<uint64_t> reclaimed{0};
  } ctx;
  auto reclaim = [](void* c, uint64_t item) {
    auto* o = reinterpret_cast<obj*>(item);
    o->v.store(k_poison, std::memory_order_relaxed);
    static_cast<ctx_t*>(c)->reclaimed.fetch_add(1, std::memory_order_relaxed);
    // Not freed: the poison must stay observable to a late reader.
  };
  epoch_manager m(reclaim, &ctx);
  const uint64_t n = test::long_run() ? 2000000 : 200000;
  std::vector<obj> objs(n + 1);
  for (uint64_t i = 0; i <= n; ++i) objs[i].v = i;
  std::atomic<obj*> shared{&objs[0]};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  std::thread reader([&] {
    uint32_t s = m.register_slot();
    while (!stop.load(std::memory_order_relaxed)) {
      epoch_guard g(m, s);
      obj* o = shared.load(std::memory_order_acquire);
      for (int k = 0; k < 8; ++k)
        if (o->v.load(std::memory_order_relaxed) == k_poison) bad.fetch_add(1);
      reads.fetch_add(1, std::memory_order_relaxed);
    }
    m.release_slot(s);
  });
  uint32_t w = m.register_slot();
  for (uint64_t i = 1; i <= n; ++i) {
    // Half-way, wait until the reader has run (a loaded machine may not
    // schedule it before the writer is done): the check needs overlap.
    if (i == n / 2)
      while (reads.load(std::memory_order_relaxed) < 100) std::this_thread::yield();
    obj* old = shared.exchange(&objs[i], std::memory_order_acq_rel);
    m.retire(w, reinterpret_cast<uint64_t>(old));
  }
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0u) << "a pinned reader saw a reclaimed object";
  EXPECT_GT(ctx.reclaimed.load(), 0u);
  EXPECT_GT(reads.load(), 0u);
}

}  // namespace
}  // namespace pmindex
