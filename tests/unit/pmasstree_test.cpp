// P-Masstree (src/btree/pmasstree): the regression test named after the
// original's bug (utsaslab/RECIPE's P-Masstree allocates from a volatile
// allocator, libvmmalloc, so a restart loses or leaks every block), and the
// structural cases the generic suites do not reach: layers of byte keys that
// share 8-byte slices (and are prefixes of each other), small nodes against
// a std::map oracle so leaf and inner splits run, lock words left held in
// the pool, concurrent writers with scans. Sizes grow with PMINDEX_LONG=1;
// the seed is printed.
#include "masstree/pmasstree/pmasstree.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "index_fixture.hpp"
#include "oracle.hpp"
#include "pmindex/alloc/size_classes.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

namespace mt = masstree::pmasstree;

class Pmasstree : public test::index_fixture {
 protected:
  Pmasstree() : index_fixture("pmasstree") {}
  // Byte keys that share 8-byte slices at several depths, are prefixes of
  // each other and hold \0 bytes.
  std::string shared_key(uint64_t r) {
    static const std::string stems[] = {"", "https://", "https://www.example",
                                        std::string("abcdefgh\0\0", 10), "abcdefghabcdefghabcdefgh"};
    std::string k = stems[r % 5];
    k += std::to_string(r % 97);
    if (r % 3 == 0) k += std::string(r % 11, char(r % 2 ? 0 : 'x'));
    if (r % 7 == 0) k.resize(k.size() / 2);
    return k;
  }
};

// The original's allocator (libvmmalloc) is volatile: after a restart its
// blocks are lost or leaked. Ours: after an abandon (what a kill leaves,
// the thread caches included) and a dirty reopen, every key is there and
// the pool holds exactly the live data: the root block, every node and
// (keys=bytes) every record's block -- nothing allocated and unlinked.
TEST_F(Pmasstree, NothingLeaksAfterKill_volatile_allocator) {
  for (const char* params : {"leaf=4,inner=4", "", "keys=bytes,leaf=4,inner=4"}) {
    SCOPED_TRACE(params);
    const bool bytes = std::string(params).find("bytes") != std::string::npos;
    auto idx = open_idx(params);
    std::map<std::string, std::string> ref;
    for (uint64_t i = 0; i < (test::long_run() ? 100000u : 10000u); ++i) {
      uint64_t r = rng_() % 20000;
      std::string k = bytes ? shared_key(r) + std::to_string(r) : std::string(key_bytes(r));
      std::string v = bytes ? std::string(r % 40, 'v') : std::string(value_bytes(i));
      switch (i % 4) {
        case 0:
        case 1:
          ref.emplace(k, v), idx->insert(k, v);
          break;
        case 2:
          if (idx->update(k, v)) ref[k] = v;
          break;
        default:
          ref.erase(k), idx->remove(k);
      }
    }
    expect_same(*idx, ref, "before the kill");
    idx->abandon();
    idx = reopen();
    EXPECT_FALSE(idx->report().was_clean);
    expect_same(*idx, ref, "after the kill");
    uint64_t live = alloc::class_size(alloc::class_of(sizeof(mt::root_block)));
    live += uint64_t(extra(*idx, "leaves") + extra(*idx, "inner_nodes")) *
            alloc::class_size(alloc::class_of(320));
    if (bytes)
      for (auto& [k, v] : ref)
        live += alloc::class_size(alloc::class_of(common::kv_block_bytes(k.size(), v.size())));
    EXPECT_EQ(idx->stats().pm_bytes_used, live);
  }
}

// Layers: keys sharing 1..3 full slices, prefixes of each other, \0 bytes,
// the empty key; every one found, scans in byte order from every key, then
// all removed and the index refilled.
TEST_F(Pmasstree, LayersOfSharedSlices) {
  auto idx = open_idx("keys=bytes,leaf=3,inner=3");
  std::map<std::string, std::string> ref;
  for (uint64_t r = 0; r < 3000; ++r) {
    std::string k = shared_key(r * 7919);
    bool fresh = !ref.count(k);
    ASSERT_EQ(idx->insert(k, "v" + std::to_string(r)), fresh) << r;
    if (fresh) ref[k] = "v" + std::to_string(r);
  }
  expect_same(*idx, ref, "filled");
  EXPECT_GT(extra(*idx, "layers"), 3);
  EXPECT_GE(extra(*idx, "layer_depth_max"), 3);
  record_buffer out;
  for (auto it = ref.begin(); it != ref.end(); ++it) {
    out.clear();
    ASSERT_EQ(idx->scan(it->first, 5, out), std::min<size_t>(5, size_t(std::distance(it, ref.end()))));
    auto jt = it;
    for (size_t i = 0; i < out.size(); ++i, ++jt) ASSERT_EQ(out.key(i), jt->first);
    // From just past the key: the next one.
    out.clear();
    idx->scan(it->first + std::string(1, '\0'), 1, out);
    auto nx = std::next(it);
    if (nx != ref.end() && nx->first != it->first + std::string(1, '\0')) {
      ASSERT_EQ(out.key(0), nx->first);
    }
  }
  for (auto& [k, v] : ref) ASSERT_TRUE(idx->remove(k));
  ASSERT_TRUE(idx->check().ok);
  out.clear();
  EXPECT_EQ(idx->scan("", 10, out), 0u);
  for (auto& [k, v] : ref) ASSERT_TRUE(idx->insert(k, v + "2"));
  for (auto& [k, v] : ref) v += "2";
  expect_same(*idx, ref, "refilled");
  idx->abandon();
  idx = reopen();
  expect_same(*idx, ref, "dirty reopen");
}

// A std::map oracle over both key kinds, small nodes (leaf and inner
// splits, new roots), then clean and dirty reopen.
TEST_F(Pmasstree, RandomAgainstOracle) {
  for (const char* params : {"leaf=3,inner=3", "leaf=15,inner=16", "keys=bytes,leaf=3,inner=4"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    const bool bytes = std::string(params).find("bytes") != std::string::npos;
    std::map<std::string, std::string> ref;
    const size_t ops = test::long_run() ? 300000 : 30000;
    for (size_t i = 0; i < ops; ++i) {
      uint64_t r = rng_() % 3000;
      std::string k = bytes ? shared_key(r) : std::string(key_bytes(r * 0x9E3779B97F4A7C15ull));
      std::string v = bytes ? std::string(r % 50, char('a' + i % 26)) : std::string(value_bytes(i));
      ASSERT_NO_FATAL_FAILURE(random_write(*idx, ref, k, v, unsigned(rng_() % 5), 3));
      if (i % 5000 == 0) expect_same(*idx, ref, "during");
    }
    expect_same(*idx, ref, "random");
    EXPECT_GT(extra(*idx, "inner_nodes"), 1);
    expect_same_after_reopens(idx, ref);
  }
}

// A scan's prefetch hints (leaf_path): from any key, the leaf the descent
// finds and then every leaf after it along the chain, in order -- what a
// scan checks against the chain and asks for ahead. Narrow inner nodes make
// deep trees (the names climb several levels between bottom nodes); removes
// between the checks leave emptied leaves in the chain.
TEST_F(Pmasstree, ScanHintsNameTheChainInOrder) {
  for (const char* params : {"leaf=3,inner=3", "leaf=4,inner=5", "leaf=15,inner=16"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    auto* t = dynamic_cast<mt::tree<false>*>(idx.get());
    ASSERT_NE(t, nullptr);
    auto& p = idx->pool();
    std::vector<uint64_t> keys;
    auto hints_match = [&] {
      std::vector<uint64_t> froms = {0, ~uint64_t{0}};
      for (int i = 0; i < 20; ++i) froms.push_back(rng_() % 200000);
      for (uint64_t from : froms) {
        const auto named = t->named_leaves(mt::make_ikey(from, 8));
        std::vector<uint64_t> chain{named.front()};
        while (const uint64_t nx = p.ptr<mt::leaf>(chain.back())->next) chain.push_back(nx);
        ASSERT_EQ(named, chain) << "from " << from;
      }
    };
    for (size_t i = 0; i < 6000; ++i) {
      if (!keys.empty() && rng_() % 4 == 0) {
        const size_t at = rng_() % keys.size();
        idx->remove(keys[at]);
        keys[at] = keys.back();
        keys.pop_back();
      } else {
        const uint64_t k = rng_() % 200000;
        if (idx->insert(k, k)) keys.push_back(k);
      }
      if (i % 1000 == 999) {
        ASSERT_NO_FATAL_FAILURE(hints_match());
      }
    }
    EXPECT_GT(t->named_leaves(mt::make_ikey(0, 8)).size(), 100u);
  }
}

// Lock words are volatile: a word left locked (by a crash) belongs to an
// older generation after reopening and is free. Every leaf's word set
// locked, clean and dirty reopen: everything readable and writable.
TEST_F(Pmasstree, StaleLockWordsAreFreeAfterReopen) {
  for (bool clean : {true, false}) {
    auto idx = open_idx("leaf=4,inner=4");
    std::map<std::string, std::string> ref;
    for (uint64_t i = 0; i < 2000; ++i) {
      uint64_t k = i * 7919 % 5000;
      if (idx->insert(k, i)) ref[std::string(key_bytes(k))] = std::string(value_bytes(i));
    }
    pm::pool& p = idx->pool();
    auto* root = p.ptr<mt::root_block>(p.root());
    uint64_t off = root->root;
    while (p.ptr<mt::inner>(off)->kind == mt::k_inner) off = p.ptr<mt::inner>(off)->child[0];
    unsigned leaves = 0;
    for (; off; off = p.ptr<mt::leaf>(off)->next, ++leaves)
      p.ptr<mt::leaf>(off)->lock = (root->gen << 32) | 1;
    ASSERT_GT(leaves, 100u);
    ASSERT_FALSE(idx->check().ok);  // this generation's: held
    if (clean)
      idx->close();
    else
      idx->abandon();
    idx = reopen();
    expect_same(*idx, ref, clean ? "clean" : "dirty");
    for (uint64_t i = 0; i < 100; ++i) ASSERT_TRUE(idx->insert((i + 10) << 20, i));
    ASSERT_TRUE(idx->check().ok);
  }
}

// A clean open trusts the lock words of its own generation, so a damaged
// pool whose leaves' words carry the next open's generation with the lock
// bit made every reader and writer wait for a writer that did not exist.
// Now errc::corrupt (a held word while no writer is inside), also for two
// writers at once; check() fails.
TEST_F(Pmasstree, DamagedLockIsCorruptNotAHang) {
  for (const char* params : {"", "keys=bytes"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    for (uint64_t k = 1; k < 100; ++k) ASSERT_TRUE(idx->insert(k, k));
    pm::pool& p = idx->pool();
    auto* root = p.ptr<mt::root_block>(p.root());
    uint64_t off = root->root;
    while (p.ptr<mt::inner>(off)->kind == mt::k_inner) off = p.ptr<mt::inner>(off)->child[0];
    for (; off; off = p.ptr<mt::leaf>(off)->next) p.ptr<mt::leaf>(off)->lock = ((root->gen + 1) << 32) | 1;
    idx->close();
    idx = reopen();
    auto corrupt = [](auto&& op) { test::exit_0_if_corrupt(op); };
    EXPECT_EXIT(corrupt([&] { idx->lookup(5); }), testing::ExitedWithCode(0), "") << "lookup";
    EXPECT_EXIT(corrupt([&] { test::each_thread_corrupt(2, [&](unsigned i) { idx->insert(200 + i, 1); }); }),
                testing::ExitedWithCode(0), "")
        << "two writers";
    EXPECT_FALSE(idx->check().ok);
  }
}

// Four writers on interleaved keys (small nodes: splits all the time) and a
// scanner: every scan sorted, no duplicate, and every key a writer finished
// before the scan started (a prefix of its sequence) is in it.
TEST_F(Pmasstree, ConcurrentWritersAndScans) {
  for (const char* params : {"leaf=3,inner=3", "keys=bytes,leaf=3,inner=3"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    const uint64_t per = test::long_run() ? 50000 : 4000;
    std::atomic<uint64_t> done[4] = {};
    std::atomic<bool> stop{false};
    std::vector<std::thread> ts;
    auto key = [](uint64_t t, uint64_t i) { return (i * 4 + t) * 0x9E3779B97F4A7C15ull >> 8; };
    for (uint64_t t = 0; t < 4; ++t)
      ts.emplace_back([&, t] {
        for (uint64_t i = 0; i < per; ++i) {
          ASSERT_TRUE(idx->insert(key(t, i), i));
          ASSERT_EQ(idx->lookup(key(t, i)), std::optional<uint64_t>(i));
          done[t].store(i + 1, std::memory_order_release);
        }
      });
    std::thread scanner([&] {
      std::vector<record> out;
      while (!stop) {
        uint64_t before[4];
        for (unsigned t = 0; t < 4; ++t) before[t] = done[t].load(std::memory_order_acquire);
        out.clear();
        idx->range(0, UINT64_MAX, out);
        for (size_t i = 1; i < out.size(); ++i) ASSERT_LT(out[i - 1].key, out[i].key);
        std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.key < b.key; });
        for (unsigned t = 0; t < 4; ++t)
          for (uint64_t i = 0; i < before[t]; i += 97)
            ASSERT_TRUE(std::binary_search(out.begin(), out.end(), record{key(t, i), i},
                                           [](auto& a, auto& b) { return a.key < b.key; }))
                << "key " << i << " of writer " << t << " missing";
      }
    });
    for (auto& t : ts) t.join();
    stop = true;
    scanner.join();
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
    EXPECT_EQ(idx->stats().records, 4 * per);
  }
}

// Removes that empty leaves drop them (unlinked, retired) while other
// writers insert into the same ranges and a scanner reads: each writer
// cycles a batch of its own keys in and out, so leaves empty and go at
// every cycle, and a key inserted next lands in the leaf left of a dropped
// one. Every write sees its own keys, every scan holds the keys that are
// never removed, in order; at the end check() holds and no empty leaf is
// left but first children. With a writer writing into a dropped leaf
// (mutant dead_trusted) its keys are lost.
TEST_F(Pmasstree, EmptiedLeavesDropWhileOthersWrite) {
  for (const char* params : {"leaf=3,inner=8", "keys=bytes,leaf=3,inner=8"}) {
    SCOPED_TRACE(params);
    const bool bytes = std::string(params).find("bytes") != std::string::npos;
    auto idx = open_idx(params);
    constexpr unsigned k_threads = 3;
    const uint64_t cycles = test::long_run() ? 400 : 60, batch = 40;
    // Interleaved: thread t's keys of a cycle fall between the other
    // threads' keys, so dropped leaves border leaves others write.
    auto key = [&](uint64_t t, uint64_t i) {
      const uint64_t n = (i * 4 + t) * 1000003 % 4000037;
      return bytes ? "k/" + std::string(key_bytes(n)) : std::string(key_bytes(n));
    };
    const std::string val(value_bytes(7));  // 8 bytes: keys=u64 takes no other length
    for (uint64_t i = 0; i < 300; ++i) ASSERT_TRUE(idx->insert(key(3, i), val));
    std::atomic<bool> stop{false};
    std::vector<std::thread> ts;
    for (uint64_t t = 0; t < k_threads; ++t)
      ts.emplace_back([&, t] {
        for (uint64_t c = 0; c < cycles; ++c) {
          for (uint64_t i = c * batch; i < (c + 1) * batch; ++i) ASSERT_TRUE(idx->insert(key(t, i), val));
          for (uint64_t i = c * batch; i < (c + 1) * batch; ++i) ASSERT_TRUE(idx->lookup(key(t, i), nullptr));
          for (uint64_t i = c * batch; i < (c + 1) * batch; ++i) ASSERT_TRUE(idx->remove(key(t, i)));
          for (uint64_t i = c * batch; i < (c + 1) * batch; i += 7) ASSERT_FALSE(idx->lookup(key(t, i), nullptr));
        }
      });
    std::thread scanner([&] {
      while (!stop) {
        record_buffer out;
        idx->scan(std::string_view(), SIZE_MAX, out);
        std::vector<std::string> got;
        for (size_t i = 0; i < out.size(); ++i) got.emplace_back(out.key(i));
        ASSERT_TRUE(std::is_sorted(got.begin(), got.end()));
        ASSERT_EQ(std::adjacent_find(got.begin(), got.end()), got.end());
        for (uint64_t i = 0; i < 300; i += 13) ASSERT_TRUE(std::binary_search(got.begin(), got.end(), key(3, i)));
      }
    });
    for (auto& t : ts) t.join();
    stop = true;
    scanner.join();
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
    EXPECT_EQ(idx->stats().records, 300u);
    for (uint64_t i = 0; i < 300; ++i) ASSERT_TRUE(idx->lookup(key(3, i), nullptr));
    // At rest every empty leaf is the first child of its parent (or a
    // layer's first leaf): the leaves are at most one per record and one
    // per inner node and layer. Without drops they were 4x that.
    EXPECT_LE(extra(*idx, "leaves"), 300 + extra(*idx, "inner_nodes") + extra(*idx, "layers"))
        << "inner nodes " << extra(*idx, "inner_nodes");
    idx->abandon();
    idx = reopen();
    c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
    EXPECT_EQ(idx->stats().records, 300u);
  }
}

// Writers appending ascending keys all land on the rightmost leaf, which
// splits at every other insert (leaf=2). A writer whose descent found that
// leaf before a split and that locks it after must move right under the
// lock (the B-link check again), or its key goes into a leaf whose range it
// has left, where no lookup looks. Every key found, check() holds. With
// the check skipped (mutant no_recheck, which also widens the window
// between the descent and the lock) keys are lost or the tree breaks.
TEST_F(Pmasstree, AppendingWritersRaceSplitsOfTheLastLeaf) {
  for (const char* params : {"leaf=2,inner=3", "keys=bytes,leaf=2,inner=3"}) {
    SCOPED_TRACE(params);
    const bool bytes = std::string(params).find("bytes") != std::string::npos;
    auto idx = open_idx(params);
    const uint64_t per = test::long_run() ? 100000 : 10000;
    constexpr unsigned k_threads = 4;
    // Ascending over all threads; keys=bytes: a shared first slice, so the
    // appends go to one layer below the first.
    auto key = [&](uint64_t t, uint64_t i) {
      uint64_t n = i * k_threads + t + 1;
      return bytes ? "appended/" + std::string(key_bytes(n)) : std::string(key_bytes(n));
    };
    std::vector<std::thread> ts;
    for (uint64_t t = 0; t < k_threads; ++t)
      ts.emplace_back([&, t] {
        for (uint64_t i = 0; i < per; ++i) ASSERT_TRUE(idx->insert(key(t, i), std::string(value_bytes(i))));
      });
    for (auto& t : ts) t.join();
    uint64_t lost = 0;
    for (uint64_t t = 0; t < k_threads; ++t)
      for (uint64_t i = 0; i < per; ++i) lost += !idx->lookup(key(t, i), nullptr);
    EXPECT_EQ(lost, 0u);
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
    EXPECT_EQ(idx->stats().records, k_threads * per);
  }
}

// A split interrupted after the sibling link and before the parent's swing
// (B-link): the image every fence of a split leaves (all stores written
// back, the harshest order for a link) is recovered, and the index works on:
// the new leaf is found through the chain alone (`chain_only_leaves`), more
// inserts split it and its neighbours, every key is found, check() holds.
TEST_F(Pmasstree, InterruptedSplitIsToleratedAndGrowsOn) {
  struct imager : pm::persist_observer {
    char* base = nullptr;
    uint64_t size = 0;
    bool armed = false;
    std::vector<std::vector<char>> images;
    void on_map(char* b, uint64_t n) override { base = b, size = n; }
    void on_flush(const void*, size_t) override {}
    void on_fence() override {
      if (armed) images.emplace_back(base, base + size);
    }
  } obs;
  for (const char* params : {"leaf=3,inner=3", "keys=bytes,leaf=3,inner=3"}) {
    SCOPED_TRACE(params);
    const bool bytes = std::string(params).find("bytes") != std::string::npos;
    options o;
    o.index = "pmasstree";
    o.pool_size = 2 << 20;
    o.params = params;
    o.observer = &obs;
    o.quiet = true;
    auto idx = open(o);
    auto key = [&](uint64_t i) {
      return bytes ? shared_key(i) + "#" + std::to_string(i)
                   : std::string(key_bytes(i * 0x9E3779B97F4A7C15ull));
    };
    std::map<std::string, std::string> ref;
    unsigned chain_only = 0, images = 0;
    for (uint64_t i = 0; i < 60; ++i) {
      obs.armed = true;
      ASSERT_TRUE(idx->insert(key(i), std::string(value_bytes(i))));
      obs.armed = false;
      for (auto& img : obs.images) {
        options r;
        r.index = "pmasstree";
        r.mode = pm::mode::persist;
        r.open = pm::open_mode::must_exist;
        r.image = img.data();
        r.image_size = img.size();
        r.quiet = true;
        auto rec = open(r);
        ++images;
        auto c = rec->check();
        ASSERT_TRUE(c.ok) << c.message;
        chain_only += extra(*rec, "chain_only_leaves") > 0;
        for (auto& [k, v] : ref) ASSERT_TRUE(rec->lookup(k, nullptr));
        for (uint64_t j = 1000; j < 1040; ++j) ASSERT_TRUE(rec->insert(key(j), std::string(value_bytes(j))));
        c = rec->check();
        ASSERT_TRUE(c.ok) << c.message;
        for (auto& [k, v] : ref) ASSERT_TRUE(rec->lookup(k, nullptr));
        rec->abandon();
      }
      obs.images.clear();
      ref[key(i)] = std::string(value_bytes(i));
    }
    EXPECT_GT(images, 200u);
    EXPECT_GT(chain_only, 5u);  // the state was reached, and lived with
    expect_same(*idx, ref, "the observed index");
  }
}

// A full pool fails the insert and changes nothing: splits take every block
// they need before their first store.
TEST_F(Pmasstree, FullPoolFailsCleanly) {
  auto idx = open_idx("keys=bytes,leaf=3,inner=3", 4 << 20);
  std::map<std::string, std::string> ref;
  for (uint64_t i = 0;; ++i) {
    std::string k = shared_key(i) + std::to_string(i), v(200, 'x');
    if (ref.count(k)) continue;
    try {
      ASSERT_TRUE(idx->insert(k, v));
      ref[k] = v;
    } catch (const error& e) {
      ASSERT_EQ(e.code(), errc::pool_full);
      break;
    }
  }
  expect_same(*idx, ref, "full");
  idx->abandon();
  idx = reopen();
  expect_same(*idx, ref, "full, dirty reopen");
}

}  // namespace
}  // namespace pmindex
