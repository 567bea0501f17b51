// uTree (src/btree/utree): a regression test named after each bug of the
// original (thustorage/nvm-datastructure) that the port avoids, the cost of
// each operation, and the structural cases the generic suites do not reach:
// small leaves against a std::map oracle (leaves split and, emptied, are
// unlinked), DIRTY bits left in the pool, a SIGKILLed writer. Sizes grow
// with PMINDEX_LONG=1; the seed is printed.
#include "hybrid/utree/utree.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "index_fixture.hpp"
#include "oracle.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/counters.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

namespace ut = hybrid::utree;

class utree_test : public test::index_fixture {
 protected:
  utree_test() : index_fixture("utree") {}
};

// nvm-datastructure#1: the original turned an insert of a present key into
// an overwrite (and its list could hold the key twice). Here a second insert
// returns false, leaves the value alone and adds no node; four threads
// inserting the same keys succeed exactly once per key.
TEST_F(utree_test, DuplicateInsertRejected_nvm_datastructure_1) {
  for (const char* params : {"leaf=4", "keys=bytes,leaf=4"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    for (uint64_t k = 0; k < 100; ++k) ASSERT_TRUE(idx->insert(k * 3, k));
    const uint64_t used = idx->pool().usage().used_blocks;
    for (uint64_t k = 0; k < 100; ++k) ASSERT_FALSE(idx->insert(k * 3, k + 1000));
    EXPECT_EQ(idx->pool().usage().used_blocks, used);
    for (uint64_t k = 0; k < 100; ++k) ASSERT_EQ(idx->lookup(k * 3), k);
    EXPECT_EQ(idx->stats().records, 100u);

    std::atomic<uint64_t> wins{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
      ts.emplace_back([&, t] {
        for (uint64_t k = 1000; k < 3000; ++k) wins += idx->insert(k, k * 10 + uint64_t(t)) ? 1 : 0;
      });
    for (auto& t : ts) t.join();
    EXPECT_EQ(wins.load(), 2000u);
    auto c = idx->check();  // one list node per key, in order
    ASSERT_TRUE(c.ok) << c.message;
    EXPECT_EQ(idx->stats().records, 2100u);
    for (uint64_t k = 1000; k < 3000; ++k) ASSERT_EQ(*idx->lookup(k) / 10, k);
  }
}

// nvm-datastructure#3: the original gave up silently after 10 retries when
// a concurrent insert changed its view of the list. Four threads insert
// disjoint interleaved keys, and all four also the same overlapping keys,
// into 4-entry leaves (every insert races with splits and neighbours'
// links): every key is present, once, and check() holds.
TEST_F(utree_test, ConcurrentInsertsNotLost_nvm_datastructure_3) {
  for (const char* params : {"leaf=4", "keys=bytes,leaf=4", ""}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    const uint64_t per = test::long_run() ? 100000 : 10000;
    std::vector<std::thread> ts;
    std::atomic<uint64_t> shared_wins{0};
    for (uint64_t t = 0; t < 4; ++t)
      ts.emplace_back([&, t] {
        for (uint64_t i = 0; i < per; ++i) {
          ASSERT_TRUE(idx->insert(i * 4 + t, i));
          if (i % 4 == 0) shared_wins += idx->insert((uint64_t{1} << 40) + i, t) ? 1 : 0;
        }
      });
    for (auto& t : ts) t.join();
    EXPECT_EQ(shared_wins.load(), per / 4);
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
    EXPECT_EQ(idx->stats().records, 4 * per + per / 4);
    for (uint64_t k = 0; k < 4 * per; ++k) ASSERT_EQ(idx->lookup(k), k / 4) << "key " << k;
    std::vector<record> out(4 * per + per / 4 + 1);
    ASSERT_EQ(idx->scan(0, out.size(), out.data()), out.size() - 1);
    for (size_t i = 1; i + 1 < out.size(); ++i) ASSERT_LT(out[i - 1].key, out[i].key);
  }
}

// The original had no recovery: a reopened pool found none of its keys.
// Reopening after a clean close and after abandon() (a crash's state) finds
// every key and value, with nothing leaked.
TEST_F(utree_test, ReopenFindsAllKeys_no_recovery) {
  for (const char* params : {"leaf=4", "keys=bytes,leaf=5", ""}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    std::map<uint64_t, uint64_t> ref;
    for (uint64_t i = 0; i < 20000; ++i) {
      uint64_t k = rng_() % 50000;
      if (idx->insert(k, i)) ref[k] = i;
      if (i % 3 == 0 && idx->remove(i % 50000)) ref.erase(i % 50000);
    }
    expect_same(*idx, ref, "before");
    idx->close();
    idx = reopen();
    EXPECT_TRUE(idx->report().was_clean);
    expect_same(*idx, ref, "clean reopen");
    for (uint64_t k = 50000; k < 50100; ++k) ASSERT_TRUE(idx->insert(k, k));
    for (uint64_t k = 50000; k < 50100; ++k) ref[k] = k;
    idx->abandon();
    idx = reopen();
    expect_no_leak(*idx);
    expect_same(*idx, ref, "dirty reopen");
  }
}

// The same after SIGKILL: a child inserts and acknowledges each insert in
// shared memory; it is killed mid-run; every acknowledged key is there.
TEST_F(utree_test, KilledWriterLosesNoAcknowledgedKey_no_recovery) {
  for (const char* params : {"leaf=8", "keys=bytes"}) {
    SCOPED_TRACE(params);
    {
      auto idx = open_idx(params);
    }
    auto* acked = static_cast<std::atomic<uint64_t>*>(
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(acked, MAP_FAILED);
    new (acked) std::atomic<uint64_t>(0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        auto idx = reopen();
        for (uint64_t i = 0;; ++i) {
          idx->insert(i * 2654435761u % 1000003, i);
          acked->store(i + 1, std::memory_order_release);
        }
      } catch (...) {
      }
      _exit(3);
    }
    const uint64_t want = test::long_run() ? 200000 : 20000;
    while (acked->load(std::memory_order_acquire) < want) usleep(1000);
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFSIGNALED(st));
    const uint64_t n = acked->load();
    auto idx = reopen();
    expect_no_leak(*idx);
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
    for (uint64_t i = 0; i < n; ++i) ASSERT_EQ(idx->lookup(i * 2654435761u % 1000003), i) << "insert " << i;
    EXPECT_GE(idx->stats().records, n);
    EXPECT_LE(idx->stats().records, n + 1);  // the insert in flight, or not
    munmap(acked, 4096);
  }
}

// Flushes and fences per operation (the header's "Commits").
TEST_F(utree_test, FlushesPerOperation) {
  auto idx = open_idx("");
  ASSERT_TRUE(idx->insert(5, 5));
  auto cost = [&](auto&& op) {
    auto before = pm::thread_counters();
    EXPECT_TRUE(op());
    auto d = pm::thread_counters() - before;
    return std::pair<uint64_t, uint64_t>(d.lines_flushed, d.fences);
  };
  using lf = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(cost([&] { return idx->insert(7, 1); }), lf(2, 2));  // the node, the predecessor's next
  EXPECT_EQ(cost([&] { return idx->insert(1, 1); }), lf(2, 2));  // before the first: the head's next
  EXPECT_EQ(cost([&] { return idx->update(7, 2); }), lf(1, 1));  // the value word in place
  EXPECT_EQ(cost([&] { return idx->remove(7); }), lf(1, 1));     // the predecessor's next
  auto b = open_idx("keys=bytes");
  ASSERT_TRUE(b->insert("first", "1"));
  auto bcost = [&](auto&& op) {
    auto before = pm::thread_counters();
    EXPECT_TRUE(op());
    auto d = pm::thread_counters() - before;
    return lf(d.lines_flushed, d.fences);
  };
  EXPECT_EQ(bcost([&] { return b->insert("second", "12345678"); }), lf(3, 2));  // + a 22-byte block: 1 line
  EXPECT_EQ(bcost([&] { return b->update("second", std::string(100, 'v')); }),
            lf(3, 2));  // 114 bytes: 2 lines
  EXPECT_EQ(bcost([&] { return b->remove("second"); }), lf(1, 1));
}

// Removes that empty a leaf unlink it (the predecessor of a leaf's first
// key is then always one leaf away): a queue pattern (insert at the right,
// remove the oldest) keeps the leaf count small and check() holds; the
// unlinked leaves are freed through the epochs.
TEST_F(utree_test, EmptiedLeavesAreUnlinked) {
  auto idx = open_idx("leaf=4");
  std::map<uint64_t, uint64_t> ref;
  const uint64_t n = test::long_run() ? 200000 : 20000;
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(idx->insert(i, i));
    ref[i] = i;
    if (i >= 100) {
      ASSERT_TRUE(idx->remove(i - 100));
      ref.erase(i - 100);
    }
  }
  expect_same(*idx, ref, "queue");
  EXPECT_GT(extra(*idx, "leaf_unlinks"), double(n / 4));
  EXPECT_LT(extra(*idx, "leaves"), 60.0);
  // Remove everything: only the first leaf is left, empty.
  for (auto& [k, v] : ref) ASSERT_TRUE(idx->remove(k));
  ref.clear();
  expect_same(*idx, ref, "empty");
  EXPECT_EQ(extra(*idx, "leaves"), 1.0);
}

// DIRTY bits are volatile hints: a pool whose next words all carry one
// (a crash between a link and its clearing) reopens clean of them, dirty or
// clean, with every key.
TEST_F(utree_test, DirtyBitsLeftInThePool) {
  for (bool clean : {true, false}) {
    auto idx = open_idx("leaf=4");
    std::map<uint64_t, uint64_t> ref;
    for (uint64_t k = 0; k < 500; ++k) {
      ASSERT_TRUE(idx->insert(k * 7, k));
      ref[k * 7] = k;
    }
    pm::pool& p = idx->pool();
    auto* root = p.ptr<ut::root_block>(p.root());
    unsigned nodes = 0;
    for (uint64_t off = root->head; off; off = p.ptr<ut::lnode>(off)->next & ~ut::k_flag_bits, ++nodes)
      p.ptr<ut::lnode>(off)->next |= ut::k_dirty;
    ASSERT_EQ(nodes, 501u);
    if (clean)
      idx->close();
    else
      idx->abandon();
    idx = reopen();
    expect_same(*idx, ref, clean ? "clean" : "dirty");
  }
}

// Scans walk the list beside writers: sorted, no duplicates, and every key
// no writer touches is returned (the odd keys; writers churn the even ones
// and update the odd ones in place).
TEST_F(utree_test, ScansBesideWriters) {
  for (const char* params : {"leaf=4", "keys=bytes,leaf=4"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    const uint64_t n = 2000;
    for (uint64_t k = 1; k < n; k += 2) ASSERT_TRUE(idx->insert(k, k));
    std::atomic<bool> stop{false};
    std::vector<std::thread> ws;
    for (uint64_t t = 0; t < 2; ++t)
      ws.emplace_back([&, t] {
        std::mt19937_64 r(seed_ + t);
        while (!stop) {
          uint64_t k = r() % n;
          if (k % 2)
            idx->update(k, k);
          else if (!idx->insert(k, k))
            idx->remove(k);
        }
      });
    std::vector<record> out(n + 1);
    const int rounds = test::long_run() ? 20000 : 2000;
    for (int i = 0; i < rounds; ++i) {
      uint64_t from = rng_() % n;
      size_t got = idx->scan(from, out.size(), out.data());
      uint64_t odd = from | 1;
      for (size_t j = 0; j < got; ++j) {
        ASSERT_GE(out[j].key, from);
        if (j) {
          ASSERT_LT(out[j - 1].key, out[j].key);
        }
        if (out[j].key % 2) {
          ASSERT_EQ(out[j].key, odd) << "a key no writer removes was skipped";
          ASSERT_EQ(out[j].value, out[j].key);
          odd += 2;
        }
      }
      ASSERT_GE(odd, n) << "scan from " << from << " stopped early";
    }
    stop = true;
    for (auto& t : ws) t.join();
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
  }
}

// A std::map oracle over both key kinds with small leaves: inserts,
// updates, removes and ranges, then clean and dirty reopen.
TEST_F(utree_test, RandomAgainstOracle) {
  for (const char* params : {"leaf=4", "keys=bytes,leaf=4", "keys=bytes"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    const bool bytes = std::string(params).find("bytes") != std::string::npos;
    std::map<std::string, std::string> ref;
    const size_t ops = test::long_run() ? 300000 : 30000;
    for (size_t i = 0; i < ops; ++i) {
      uint64_t r = rng_() % 3000;
      // Byte keys share long prefixes (the 8-byte key word ties).
      std::string k = bytes && r % 3
                          ? "prefix/" + std::string(key_bytes(r)).substr(0, r % 9) + std::to_string(r)
                          : std::string(key_bytes(r));
      std::string v = bytes ? std::string(r % 50, char('a' + i % 26)) : std::string(value_bytes(i));
      const bool had = ref.count(k) != 0;
      switch (rng_() % 6) {
        case 0:
        case 1:
          ASSERT_EQ(idx->insert(k, v), !had);
          ref.emplace(k, v);
          break;
        case 2:
          ASSERT_EQ(idx->update(k, v), had);
          if (had) ref[k] = v;
          break;
        case 3: {
          std::string hi = k + "\xff";
          record_buffer got;
          idx->range(k, hi, got);
          auto it = ref.lower_bound(k);
          for (size_t j = 0; j < got.size(); ++j, ++it) {
            ASSERT_TRUE(it != ref.end() && it->first <= hi);
            ASSERT_TRUE(got.key(j) == it->first && got.value(j) == it->second);
          }
          ASSERT_TRUE(it == ref.end() || it->first > hi);
          break;
        }
        default:
          ASSERT_EQ(idx->remove(k), had);
          ref.erase(k);
      }
      if (i % 5000 == 0) expect_same(*idx, ref, "during");
    }
    expect_same(*idx, ref, "random");
    EXPECT_GT(extra(*idx, "splits"), 10);
    expect_same_after_reopens(idx, ref, /*leak_check=*/true);
  }
}

}  // namespace
}  // namespace pmindex
