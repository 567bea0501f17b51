// PACTree (src/btree/pactree): a regression test named after each bug of the
// original (cosmoss-jigu/pactree) that the port avoids, and the structural
// cases the generic suites do not reach: small nodes against a std::map
// oracle so splits, merges and the background SMO thread all run, lock words
// left held in the pool, per-thread log blocks. Sizes grow with
// PMINDEX_LONG=1; the seed is printed.
#include "hybrid/pactree/pactree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "btree/detail/fingerprint.hpp"
#include "index_fixture.hpp"
#include "oracle.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "substrate_util.hpp"

namespace pmindex {
namespace {

namespace pt = hybrid::pactree;

class Pactree : public test::index_fixture {
 protected:
  Pactree() : index_fixture("pactree") {}

  // Abandons idx (what a crash leaves, its queued SMOs logged), reopens it:
  // at least `redone` SMOs redone, nothing leaked, check() holds (the
  // layer maps the list exactly), the records those of ref.
  void crash_and_redo(std::unique_ptr<index>& idx, const std::map<std::string, std::string>& ref, double redone) {
    idx->abandon();
    idx = reopen();
    expect_no_leak(*idx);
    EXPECT_GE(extra(*idx, "smo_redone"), redone);
    auto c = idx->check();
    ASSERT_TRUE(c.ok) << c.message;
    expect_same(*idx, ref, "after the redo");
  }
};

// The original stored keys as fixed-size char arrays compared with strcmp:
// keys that differ only after a \0 were one key. Keys made of \0 and \1
// bytes, all distinct, every one found, in byte order.
TEST_F(Pactree, KeysWithNulBytes_strcmp) {
  auto idx = open_idx("keys=bytes,node=4");
  std::map<std::string, std::string> ref;
  for (unsigned len = 0; len <= 6; ++len)
    for (unsigned bits = 0; bits < (1u << len); ++bits) {
      std::string k;
      for (unsigned j = 0; j < len; ++j) k.push_back(char((bits >> j) & 1));
      ASSERT_TRUE(idx->insert(k, "v" + std::to_string(len) + "." + std::to_string(bits)));
      ref[k] = "v" + std::to_string(len) + "." + std::to_string(bits);
    }
  expect_same(*idx, ref, "nul keys");
}

// The original's lookup returned whatever its output variable held on a
// miss. A miss returns nothing and leaves the caller's buffer alone, right
// after removes, in an empty node and past the last key.
TEST_F(Pactree, LookupMissReturnsNothing_uninitialised_value) {
  for (const char* params : {"node=4", "keys=bytes,node=4"}) {
    auto idx = open_idx(params);
    for (uint64_t k = 0; k < 64; ++k) ASSERT_TRUE(idx->insert(k * 10, k + 1));
    for (uint64_t k = 0; k < 64; k += 2) ASSERT_TRUE(idx->remove(k * 10));
    for (uint64_t k = 0; k < 700; ++k) {
      bool present = k % 20 == 10 && k < 640;
      auto r = idx->lookup(k);
      ASSERT_EQ(r.has_value(), present) << params << " key " << k;
      if (present) {
        ASSERT_EQ(*r, k / 10 + 1);
      }
      std::string buf = "untouched";
      ASSERT_EQ(idx->lookup(key_bytes(k), &buf), present);
      if (!present) {
        ASSERT_EQ(buf, "untouched");
      }
    }
  }
}

// The original's scans were not atomic and ran outside the epoch. With
// scan=safe, a writer keeps at least one of two far-apart keys present at
// every instant (insert the other before removing one); every full scan
// must see at least one of them. (With scan=unsafe a scan may read the
// first key's node after its remove and the second's after its remove.)
// Both ways a safe scan reads: optimistic walks (then locking ones when
// they fail), and locking walks only (no optimistic try).
TEST_F(Pactree, SafeScanIsAtomic_scans_not_atomic) {
  for (unsigned tries : {3u, 0u}) {
    SCOPED_TRACE("optimistic tries " + std::to_string(tries));
    auto idx = open_idx("node=4,scan=safe");
    dynamic_cast<pt::tree<btree::detail::u64_keys>&>(*idx).set_safe_scan_tries(tries);
    for (uint64_t k = 1; k < 200; ++k) ASSERT_TRUE(idx->insert(k * 4, k));
    const uint64_t a = 1, b = 4 * 200 + 1;
    ASSERT_TRUE(idx->insert(a, 0));
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      for (unsigned i = 0; i < (test::long_run() ? 2000000u : 200000u); ++i) {
        idx->insert(b, i);
        idx->remove(a);
        idx->insert(a, i);
        idx->remove(b);
      }
      stop = true;
    });
    std::vector<record> out(400);
    uint64_t scans = 0, violations = 0;
    while (!stop) {
      size_t n = idx->scan(0, out.size(), out.data());
      bool seen = false;
      for (size_t i = 0; i < n; ++i) {
        seen |= out[i].key == a || out[i].key == b;
        if (i) {
          ASSERT_LT(out[i - 1].key, out[i].key);
        }
      }
      violations += !seen;
      ++scans;
    }
    writer.join();
    EXPECT_EQ(violations, 0u) << "of " << scans << " scans";
    if (tries == 0) {
      EXPECT_EQ(extra(*idx, "safe_scan_locked"), double(scans));
    }
    ASSERT_TRUE(idx->check().ok);
  }
}

// A safe scan validated all the nodes it read at the end and started again
// when any had changed, without end: beside one writer churning records all
// over the index, a reader finished 2-3 full scans of 30,000 records in 8 s
// (4,181 without the writer). Now it tries k_safe_tries optimistic walks,
// then locks the nodes it reads. Full scans beside a writer that churns
// (splits and merges everywhere, two keys of which one is always present),
// at least n_scans of them and until the writer has made 2,000 rounds
// meanwhile: each scan sorted and atomic, at most k_safe_tries failed walks
// in any one scan. The writer gives up once the scan under way passes that
// bound, so that a starving scan fails the test instead of hanging it.
TEST_F(Pactree, SafeScanProgressesBesideAWriter_safe_scan_starved) {
  auto idx = open_idx("scan=safe");
  constexpr uint64_t keys = 20000, n_scans = 20, tries = 3;
  const uint64_t a = 1, b = 4 * keys + 1;
  for (uint64_t k = 1; k <= keys; ++k) ASSERT_TRUE(idx->insert(k * 4, k));
  ASSERT_TRUE(idx->insert(a, 0));
  std::atomic<bool> gave_up{false};
  std::atomic<uint64_t> rounds{0}, scans{0}, before{0};  // before: failed walks when the scan under way began
  std::thread writer([&] {
    std::mt19937_64 r(seed_);
    for (uint64_t i = 0; !gave_up; ++i, ++rounds) {
      idx->insert(b, i);
      idx->remove(a);
      idx->insert(a, i);
      idx->remove(b);
      for (unsigned j = 0; j < 8; ++j) {
        const uint64_t k = 4 + r() % (4 * keys - 4) + 1;  // not a multiple of 4: churned keys only
        if (k % 4 == 0 || k == b) continue;
        if (!idx->remove(k)) idx->insert(k, i);
      }
      if (i % 64 == 0 && extra(*idx, "safe_scan_retries") > double(before + tries)) gave_up = true;
    }
  });
  std::vector<record> out(4 * keys);
  uint64_t violations = 0, unsorted = 0, short_scans = 0, most = 0;
  while (rounds < 1000) std::this_thread::yield();  // the writer is under way
  const uint64_t r0 = rounds;
  while (!gave_up && (scans < n_scans || rounds - r0 < 2000)) {
    before = uint64_t(extra(*idx, "safe_scan_retries"));
    size_t n = idx->scan(0, out.size(), out.data());
    most = std::max(most, uint64_t(extra(*idx, "safe_scan_retries")) - before);
    short_scans += n < keys;
    bool seen = false;
    for (size_t i = 0; i < n; ++i) {
      seen |= out[i].key == a || out[i].key == b;
      unsorted += i && out[i - 1].key >= out[i].key;
    }
    violations += !seen;
    ++scans;
  }
  const bool starved = gave_up.exchange(true);
  writer.join();
  EXPECT_FALSE(starved) << "a scan failed more than " << tries << " optimistic walks";
  EXPECT_LE(most, tries);
  EXPECT_EQ(violations, 0u);
  EXPECT_EQ(unsorted, 0u);
  EXPECT_EQ(short_scans, 0u);
  EXPECT_LE(extra(*idx, "safe_scan_retries"), double(tries * scans));
  EXPECT_LE(extra(*idx, "safe_scan_locked"), double(scans));
  std::printf("[ scans ] %llu safe full scans beside a writer: %.0f failed optimistic walks (at most %llu in one), %.0f locking walks\n",
              static_cast<unsigned long long>(scans.load()), extra(*idx, "safe_scan_retries"),
              static_cast<unsigned long long>(most), extra(*idx, "safe_scan_locked"));
  ASSERT_TRUE(idx->check().ok);
}

// pactree#1: the original's ART search layer crashed in its N16 growth under
// concurrent load. Four threads insert interleaved keys into small nodes,
// so the search layer grows by thousands of SMOs applied by the background
// thread while lookups run; then every key is there and check() holds.
TEST_F(Pactree, SearchLayerUnderConcurrentLoad_pactree_1) {
  auto idx = open_idx("node=4");
  const uint64_t per = test::long_run() ? 50000 : 5000;
  std::vector<std::thread> ts;
  for (uint64_t t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (uint64_t i = 0; i < per; ++i) {
        uint64_t k = (i * 4 + t) * 0x9E3779B97F4A7C15ull >> 8;
        ASSERT_TRUE(idx->insert(k, i));
        ASSERT_TRUE(idx->lookup(k).has_value());
      }
    });
  for (auto& t : ts) t.join();
  auto c = idx->check();
  ASSERT_TRUE(c.ok) << c.message;
  EXPECT_EQ(idx->stats().records, 4 * per);
  EXPECT_GT(extra(*idx, "smo_applied"), double(per));
}

// The original needed AVX-512 for its fingerprint compares. Ours picks
// AVX-512, AVX2 or SSE2 at run time: every width the CPU has agrees with a
// plain loop, and the index works whatever this CPU lacks.
TEST_F(Pactree, FingerprintsWithoutAvx512) {
  uint8_t fp[64];
  for (unsigned i = 0; i < 64; ++i) fp[i] = uint8_t(rng_() % 4);
  for (uint8_t b = 0; b < 4; ++b) {
    uint64_t want = 0;
    for (unsigned i = 0; i < 64; ++i) want |= uint64_t{fp[i] == b} << i;
    EXPECT_EQ(btree::detail::match_bytes64_sse2(fp, b), want);
    if (__builtin_cpu_supports("avx2")) {
      EXPECT_EQ(btree::detail::match_bytes64_avx2(fp, b), want);
    }
    EXPECT_EQ(btree::detail::match_bytes64(fp, b), want);
  }
  auto idx = open_idx("");
  for (uint64_t k = 0; k < 1000; ++k) ASSERT_TRUE(idx->insert(k * 7, k));
  for (uint64_t k = 0; k < 7000; ++k) ASSERT_EQ(idx->lookup(k).has_value(), k % 7 == 0);
}

// The original mapped a fixed 537 MB log area. Here a log block (512 bytes) is
// allocated per thread slot on its first SMO: a new index uses under 1 MB of an 8 MB pool,
// and after three threads split nodes exactly their slots have logs.
TEST_F(Pactree, LogsPerThreadOnDemand_fixed_log_area) {
  auto idx = open_idx("node=4", 8 << 20);
  pm::pool& p = idx->pool();
  auto* root = p.ptr<pt::root_block>(p.root());
  auto logs = [&] {
    unsigned n = 0;
    for (uint64_t l : root->logs) n += l != 0;
    return n;
  };
  EXPECT_EQ(logs(), 0u);
  EXPECT_LT(idx->stats().pm_bytes_used, 1u << 20);  // the pool's own metadata included
  std::vector<std::thread> ts;
  for (uint64_t t = 0; t < 3; ++t)
    ts.emplace_back([&, t] {
      for (uint64_t i = 0; i < 200; ++i) ASSERT_TRUE(idx->insert(i * 3 + t, i));
    });
  for (auto& t : ts) t.join();
  EXPECT_GE(logs(), 1u);
  EXPECT_LE(logs(), 3u);
  ASSERT_TRUE(idx->check().ok);
}

// Lock words are volatile: a word left locked (by a crash, or a pool closed
// while... nothing, scribbled here) belongs to an older generation after
// reopening and is free. Every node's word set locked + obsolete, clean and
// dirty reopen: everything readable and writable.
TEST_F(Pactree, StaleLockWordsAreFreeAfterReopen) {
  for (bool clean : {true, false}) {
    auto idx = open_idx("node=4");
    std::map<std::string, std::string> ref;
    for (uint64_t i = 0; i < 2000; ++i) {
      uint64_t k = i * 7919 % 5000;
      if (idx->insert(k, i)) ref[std::string(key_bytes(k))] = std::string(value_bytes(i));
    }
    ASSERT_TRUE(idx->check().ok);
    pm::pool& p = idx->pool();
    auto* root = p.ptr<pt::root_block>(p.root());
    unsigned nodes = 0;
    for (uint64_t off = root->head; off; off = p.ptr<pt::dnode>(off)->next, ++nodes)
      p.ptr<pt::dnode>(off)->lock = (root->gen << 32) | 3;
    ASSERT_GT(nodes, 100u);
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
// pool whose nodes' words carry the next open's generation made readers
// and writers wait forever for a writer that did not exist (lock bit), or
// follow an obsolete node's prev, volatile and never set in a node no merge
// took: 0, where they looked forever, or a node whose next names it again,
// round and round (obsolete bit). Now errc::corrupt, also for two writers
// at once; check() fails. A walk remembers the last 64 obsolete nodes it
// met, so a longer cycle (the head's next naming the 70th node, whose prevs
// lead back to the head) went round for ever until the walk also counted
// them (more than the pool can hold: one was met twice).
TEST_F(Pactree, DamagedLockIsCorruptNotAHang) {
  enum damage { locked, obsolete_no_prev, obsolete_cycle, obsolete_long_cycle };
  constexpr uint64_t keys = 400, long_cycle = 70;
  for (const char* params : {"node=4", "node=4,keys=bytes"})
    for (damage d : {locked, obsolete_no_prev, obsolete_cycle, obsolete_long_cycle}) {
      SCOPED_TRACE(std::string(params) + " damage " + std::to_string(int(d)));
      auto idx = open_idx(params);
      for (uint64_t k = 1; k < keys; ++k) ASSERT_TRUE(idx->insert(k, k));
      pm::pool& p = idx->pool();
      auto* root = p.ptr<pt::root_block>(p.root());
      const uint64_t next_gen = (root->gen + 1) << 32;
      uint64_t prev = root->head, nth = 0;
      for (uint64_t off = root->head; off; prev = off, off = p.ptr<pt::dnode>(off)->next) {
        pt::dnode* n = p.ptr<pt::dnode>(off);
        if (d == locked) {
          n->lock = next_gen | 1;
        } else if (off != root->head) {  // the head is never merged away
          n->lock = next_gen | 2;
          n->prev = d == obsolete_cycle ? root->head : d == obsolete_long_cycle ? prev : 0;
          if (d == obsolete_cycle) break;  // the second node only: the head's next names it
          if (d == obsolete_long_cycle && ++nth == long_cycle) {
            p.ptr<pt::dnode>(root->head)->next = off;
            break;
          }
        }
      }
      ASSERT_TRUE(d != obsolete_long_cycle || nth == long_cycle) << "too few nodes";
      idx->close();
      idx = reopen();
      auto corrupt = [](auto&& op) { test::exit_0_if_corrupt(op); };
      EXPECT_EXIT(corrupt([&] {
                    for (uint64_t k = 1; k < keys; ++k) idx->lookup(k);
                  }),
                  testing::ExitedWithCode(0), "")
          << "lookups";
      EXPECT_EXIT(corrupt([&] {
                    test::each_thread_corrupt(2, [&](unsigned) {
                      for (uint64_t k = 1; k < keys; ++k) idx->update(k, 7);
                    });
                  }),
                  testing::ExitedWithCode(0), "")
          << "two writers";
      EXPECT_FALSE(idx->check().ok);
    }
}

// A std::map oracle over both key kinds with 4-record nodes: inserts,
// updates, removes (so nodes merge) and scans, then clean and dirty reopen.
TEST_F(Pactree, RandomAgainstOracleWithSplitsAndMerges) {
  for (const char* params : {"node=4", "keys=bytes,node=4", "keys=bytes,node=5,scan=safe"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    const bool bytes = std::string(params).find("bytes") != std::string::npos;
    std::map<std::string, std::string> ref;
    const size_t ops = test::long_run() ? 300000 : 30000;
    for (size_t i = 0; i < ops; ++i) {
      uint64_t r = rng_() % 3000;
      std::string k = bytes && r % 3 ? std::string(key_bytes(r)).substr(0, r % 9) + std::to_string(r)
                                     : std::string(key_bytes(r));
      std::string v = bytes ? std::string(r % 50, char('a' + i % 26)) : std::string(value_bytes(i));
      ASSERT_NO_FATAL_FAILURE(random_write(*idx, ref, k, v, unsigned(rng_() % 5), 2));  // 2 inserts, 1 update, 2 removes: nodes split and merge
      if (i % 5000 == 0) expect_same(*idx, ref, "during");
    }
    expect_same(*idx, ref, "random");
    EXPECT_GT(extra(*idx, "splits"), 10);
    EXPECT_GT(extra(*idx, "merges"), 10);
    expect_same_after_reopens(idx, ref);
  }
}

// The search layer is a persistent radix tree, as the original's
// ART. A pool of the layout before it (the layer in DRAM, rebuilt at every
// open) gets errc::bad_version (exit code 5) and a line that says what to
// do; a clean reopen redoes nothing and finds the layer as it was.
TEST_F(Pactree, OldLayoutRefusedWithClearError) {
  for (const char* params : {"node=4", "keys=bytes,node=4"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    for (uint64_t k = 0; k < 100; ++k) ASSERT_TRUE(idx->insert(k * 3, k));
    idx->close();
    idx = reopen();
    EXPECT_EQ(extra(*idx, "smo_redone"), 0);
    EXPECT_GT(extra(*idx, "layer_nodes"), 0);
    ASSERT_TRUE(idx->check().ok);
    const bool bytes = std::string(params).find("bytes") != std::string::npos;
    expect_old_layout_refused(
        idx, bytes ? pt::tree<btree::detail::byte_keys>::k_magic_v1 : pt::tree<btree::detail::u64_keys>::k_magic_v1);
  }
}

// SMOs the background thread had not applied when the process died (held
// here, then abandoned: what a crash finds) are redone by the next open:
// the nodes splits made get their leaves, the nodes merges unlinked lose
// theirs and are freed. check() compares the layer with the list exactly
// (it fails when the redo is skipped), and nothing leaks.
TEST_F(Pactree, UnappliedSmosAreRedoneAtOpen) {
  for (const char* params : {"node=4", "keys=bytes,node=4"}) {
    SCOPED_TRACE(params);
    auto idx = open_idx(params);
    auto hold = [&](bool on) {
      if (auto* t = dynamic_cast<pt::tree<btree::detail::u64_keys>*>(idx.get())) t->hold_smo(on);
      else dynamic_cast<pt::tree<btree::detail::byte_keys>*>(idx.get())->hold_smo(on);
    };
    std::map<std::string, std::string> ref;
    auto put = [&](uint64_t k) {
      ASSERT_TRUE(idx->insert(k, k + 1));
      ref[std::string(key_bytes(k))] = std::string(value_bytes(k + 1));
    };
    for (uint64_t k = 0; k < 200; ++k) put(k * 10);
    ASSERT_TRUE(idx->check().ok);
    const double splits = extra(*idx, "splits"), merges = extra(*idx, "merges");
    hold(true);
    // Fewer than 16 SMOs (one thread's log): more would wait for the thread.
    for (uint64_t k = 0; k < 8; ++k) put(5000 + k);  // a run of new keys: splits at the end
    for (uint64_t k = 0; k < 60; k += 10) {             // a range emptied: merges
      ASSERT_TRUE(idx->remove(k));
      ref.erase(std::string(key_bytes(k)));
    }
    EXPECT_GT(extra(*idx, "splits"), splits);
    EXPECT_GT(extra(*idx, "merges"), merges);
    ASSERT_NO_FATAL_FAILURE(crash_and_redo(idx, ref, 1));
    for (uint64_t k = 0; k < 300; ++k) put(7000 + k * 7);
    expect_same_after_reopens(idx, ref, true);
  }
}

// The same with a split node taken by a merge before either SMO was
// applied: n splits (m is made), then n's left neighbour p absorbs n. The
// redo must add m's leaf from p (n is gone), not skip the split.
TEST_F(Pactree, RedoOfASplitWhoseNodeWasMergedAway) {
  auto idx = open_idx("node=4");
  std::map<std::string, std::string> ref;
  auto put = [&](uint64_t k) {
    ASSERT_TRUE(idx->insert(k, k + 1));
    ref[std::string(key_bytes(k))] = std::string(value_bytes(k + 1));
  };
  for (uint64_t k = 1; k <= 40; ++k) put(k * 1000);
  ASSERT_TRUE(idx->check().ok);
  // Two neighbours p, n of two records each, with room for three keys
  // after n's last one below the next node's anchor.
  pm::pool& pool = idx->pool();
  auto* root = pool.ptr<pt::root_block>(pool.root());
  auto recs = [&](uint64_t off) {
    std::vector<uint64_t> v;
    auto* d = pool.ptr<pt::dnode>(off);
    for (uint64_t m = d->bitmap; m; m &= m - 1) v.push_back(d->slot[std::countr_zero(m)].key);
    std::sort(v.begin(), v.end());
    return v;
  };
  uint64_t p = 0, n = 0;
  for (uint64_t off = root->head; off && !n; off = pool.ptr<pt::dnode>(off)->next) {
    uint64_t nx = pool.ptr<pt::dnode>(off)->next;
    if (nx && pool.ptr<pt::dnode>(nx)->next && recs(off).size() == 2 && recs(nx).size() == 2) p = off, n = nx;
  }
  ASSERT_NE(n, 0u) << "no two neighbours of two records";
  const uint64_t a = recs(p)[0], d = recs(n)[1], hi = pool.ptr<pt::dnode>(pool.ptr<pt::dnode>(n)->next)->low;
  ASSERT_GT(hi, d + 3);
  dynamic_cast<pt::tree<btree::detail::u64_keys>*>(idx.get())->hold_smo(true);
  const double splits = extra(*idx, "splits"), merges = extra(*idx, "merges");
  for (uint64_t k = d + 1; k <= d + 3; ++k) put(k);  // n: 4 records, then a split
  ASSERT_EQ(extra(*idx, "splits"), splits + 1);
  ASSERT_TRUE(idx->remove(a));  // p: 1 record: it absorbs n (1 + 2 <= 3)
  ref.erase(std::string(key_bytes(a)));
  ASSERT_EQ(extra(*idx, "merges"), merges + 1);
  ASSERT_EQ(pool.ptr<pt::dnode>(p)->next, pool.ptr<pt::dnode>(n)->next) << "p did not absorb n";
  ASSERT_NO_FATAL_FAILURE(crash_and_redo(idx, ref, 2));
}

}  // namespace
}  // namespace pmindex
