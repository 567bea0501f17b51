// A DRAM allocation that fails (std::bad_alloc) in the middle of an
// operation, for every registered persistent index, with u64 and byte keys:
// each operation is run again and again, its 1st, 2nd, ... allocation made
// to fail, until it runs through. An operation that threw must have had no
// effect or its whole effect (the key reads as before or as after), must
// leave no lock held (the next operation does not hang: a watchdog ends the
// process) and no pool block leaked, and the index must still check(), scan
// as the std::map oracle says, and reopen clean and dirty with the same
// records. Background threads allocate as usual (failing_new.hpp). Before
// each operation the heap's spare node is spent (spend_heap_spare), so a
// pool allocation that takes new chunks is among the allocations failed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <map>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../unit/test_seed.hpp"
#include "failing_new.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/util/hash.hpp"

namespace pmindex {
namespace {

struct param {
  std::string index;
  bool bytes;
  bool ordered;  // else lookups stand in for scans
  bool tx;       // pm::mode::tx
};

// Every persistent index in its default mode, with u64 and byte keys; the
// indexes with a tx mode (the pmemids structures) in it too, where the undo
// log's DRAM side may be what fails.
std::vector<param> all_params() {
  std::vector<param> v;
  for (auto& e : registered_indexes()) {
    if (!e->persistent() || e->key_limit) continue;  // arraylist: a fixed array, no allocation to fail
    const bool bytes = e->supports(key_kind::bytes) && e->max_key >= 18;
    for (bool tx : {false, true}) {
      if (tx && std::find(e->modes.begin(), e->modes.end(), pm::mode::tx) == e->modes.end()) continue;
      v.push_back({e->name, false, e->ordered, tx});
      if (bytes) v.push_back({e->name, true, e->ordered, tx});
    }
  }
  return v;
}

std::string param_name(const testing::TestParamInfo<param>& p) {
  std::string s = p.param.index + (p.param.bytes ? "_bytes" : "") + (p.param.tx ? "_tx" : "");
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Record i: key mix64(i) (u64), or "k/" and its 16 hex digits (18 bytes);
// values are 8 bytes either way.
class records {
 public:
  explicit records(bool bytes) : bytes_(bytes) {}
  std::string key(uint64_t i) const {
    char s[24];
    std::snprintf(s, sizeof s, "k/%016" PRIx64, util::mix64(i));
    return bytes_ ? std::string(s) : std::string(reinterpret_cast<const char*>(key_bytes(util::mix64(i)).b), 8);
  }
  // The keys are built before the failure is armed (their strings are the
  // test's allocations, not the index's).
  bool insert(index& idx, const std::string& k, uint64_t v) const {
    return bytes_ ? idx.insert(k, val(v)) : idx.insert(key_u64(k), v);
  }
  bool update(index& idx, const std::string& k, uint64_t v) const {
    return bytes_ ? idx.update(k, val(v)) : idx.update(key_u64(k), v);
  }
  bool remove(index& idx, const std::string& k) const { return bytes_ ? idx.remove(k) : idx.remove(key_u64(k)); }
  std::optional<uint64_t> lookup(index& idx, const std::string& k, std::string& buf) const {
    if (!bytes_) return idx.lookup(key_u64(k));
    if (!idx.lookup(k, &buf)) return std::nullopt;
    return value_u64(buf);
  }
  // Up to n records from k on: the index's call alone (the failure is armed
  // around it), then what it found as (key, value).
  size_t scan(index& idx, const std::string& k, size_t n, record_buffer& rb, std::vector<record>& r) const {
    if (bytes_) return idx.scan(k, n, rb);
    r.resize(std::max(r.size(), n));  // no allocation once it has grown
    return idx.scan(key_u64(k), n, r.data());
  }
  std::vector<std::pair<std::string, uint64_t>> found(size_t m, const record_buffer& rb,
                                                      const std::vector<record>& r) const {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (size_t i = 0; i < m; ++i)
      out.emplace_back(bytes_ ? std::string(rb.key(i)) : std::string(reinterpret_cast<const char*>(key_bytes(r[i].key).b), 8),
                       bytes_ ? value_u64(rb.value(i)) : r[i].value);
    return out;
  }

 private:
  static std::string_view val(const uint64_t& v) { return {reinterpret_cast<const char*>(&v), 8}; }
  bool bytes_;
};

class AllocFailure : public testing::TestWithParam<param> {};

// Where a failed allocation keeps pool blocks by design, the leak check
// does not apply (the reason is printed).
const char* kept_by_design(const std::string& index) {
  if (index == "permart" || index == "permart-2log")
    return "a link note that found no DRAM is dropped: the link keeps its versions until an insert reuses the "
           "slot or the next dirty open (art/permart/core.cpp, note_link)";
  return nullptr;
}

void hung(int) {
  static const char m[] = "alloc_failure_test: an operation did not return (a lock left held?)\n";
  (void)!::write(2, m, sizeof m - 1);
  _exit(3);
}

// check() passes and the index holds exactly the oracle's records (a full
// scan; lookups for an unordered index).
void expect_contents(index& idx, const param& prm, const records& rec,
                     const std::map<std::string, uint64_t>& oracle, const char* when) {
  SCOPED_TRACE(when);
  auto c = idx.check();
  EXPECT_TRUE(c.ok) << c.message;
  std::string buf;
  if (!prm.ordered) {
    for (auto& [k, v] : oracle) ASSERT_EQ(rec.lookup(idx, k, buf), std::optional<uint64_t>(v));
    EXPECT_EQ(idx.stats().records, oracle.size());
    return;
  }
  record_buffer rb;
  std::vector<record> rv;
  const auto all = rec.found(rec.scan(idx, std::string(prm.bytes ? 0 : 8, '\0'), oracle.size() + 1, rb, rv), rb, rv);
  EXPECT_EQ(all.size(), oracle.size());
  const std::vector<std::pair<std::string, uint64_t>> want(oracle.begin(), oracle.end());
  EXPECT_TRUE(all == want);
}

options pool_options(const param& prm, const char* what) {
  options o;
  o.index = prm.index;
  o.pool_path = "/dev/shm/pmindex-alloc-" + std::to_string(getpid()) + "-" + what + "-" + param_name({prm, 0}) + ".pool";
  o.pool_size = 64 << 20;
  o.params = prm.bytes ? "keys=bytes" : "";
  if (prm.tx) o.mode = pm::mode::tx;
  o.quiet = true;
  return o;
}

// After the failures: the contents, a clean and a dirty reopen with the
// same contents, and no block leaked (a dirty open's tracing finds what a
// clean one counts). Retired blocks no limbo list had room for stay
// allocated by design (sync/epoch.cpp): failures aimed at the first
// allocation of each operation wear down the lists' headroom.
void finish(std::unique_ptr<index>& idx, const options& o, const param& prm, const records& rec,
            const std::map<std::string, uint64_t>& oracle) {
  expect_contents(*idx, prm, rec, oracle, "after the failures");
  const uint64_t lost = idx->pool().epochs().lost();
  idx->close();
  idx = open(o);
  expect_contents(*idx, prm, rec, oracle, "clean reopen");
  const uint64_t used = idx->pool().usage().used_blocks;
  idx->abandon();
  idx = open(o);
  if (const char* why = kept_by_design(prm.index))
    std::printf("[ alloc ] no leak check: %s (%llu blocks)\n", why,
                static_cast<unsigned long long>(used - idx->report().traced_blocks));
  else
    EXPECT_EQ(idx->report().traced_blocks + lost, used) << "blocks a failed operation leaked (" << lost << " lost by retire)";
  expect_contents(*idx, prm, rec, oracle, "dirty reopen");
  idx->close();
  ::unlink(o.pool_path.c_str());
  ::alarm(0);
}

// Takes the heap's spare node (alloc/heap.cpp, make_spare), so that the
// next pool allocation that takes chunks from a free run asks for DRAM (and
// meets the armed failure, in its turn): a freed chunk between two taken
// ones is a run of its own, whose node cannot be had. Whether an operation
// finds the spare gone otherwise depends on what other threads freed
// (pool_alloc_throws_test.cpp). Returns the two chunks to free afterwards.
std::pair<uint64_t, uint64_t> spend_heap_spare(pm::pool& p) {
  const uint64_t a = p.alloc(64 << 10), b = p.alloc(64 << 10), c = p.alloc(64 << 10);  // make_spare ran
  if (b) {
    test::fail_allocation(0);
    p.free(b);
    test::allow_allocations();
  }
  return {a, c};
}

void run(const param& prm) {
  ::signal(SIGALRM, hung);
  ::alarm(240);
  const options o = pool_options(prm, "ops");
  ::unlink(o.pool_path.c_str());
  auto idx = open(o);
  const records rec(prm.bytes);
  std::map<std::string, uint64_t> oracle;
  std::mt19937_64 rng(7);
  uint64_t next = 0;
  for (; next < 2000; ++next) {  // warm: thread slots, logs, first nodes
    ASSERT_TRUE(rec.insert(*idx, rec.key(next), next));
    oracle[rec.key(next)] = next;
  }
  std::string buf;
  record_buffer rb;
  std::vector<record> rv(20);  // sized before any failure is armed
  unsigned thrown = 0;
  const unsigned ops = test::long_run() ? 40000 : 2000;
  for (unsigned op = 0; op < ops; ++op) {
    unsigned kind = unsigned(rng() % 10);  // 0-5 insert, 6 update, 7 remove, 8-9 scan (or lookup)
    if (kind >= 8 && !prm.ordered) kind = 10;
    const uint64_t id = kind < 6 ? next++ : rng() % next;
    const std::string k = rec.key(id);
    const uint64_t v = rng();
    SCOPED_TRACE("op " + std::to_string(op) + " kind " + std::to_string(kind));
    const auto around = spend_heap_spare(idx->pool());
    for (long fail = 0;; ++fail) {
      const auto before = oracle.find(k) == oracle.end() ? std::nullopt : std::optional<uint64_t>(oracle[k]);
      size_t m = 0;
      bool ok = false, threw = false;
      rb.clear();
      test::fail_allocation(fail);
      try {
        if (kind < 6) ok = rec.insert(*idx, k, v);
        else if (kind == 6) ok = rec.update(*idx, k, v);
        else if (kind == 7) ok = rec.remove(*idx, k);
        else if (kind < 10) m = rec.scan(*idx, k, 20, rb, rv);
        else ok = rec.lookup(*idx, k, buf).has_value();
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      const bool injected = test::allow_allocations();
      ASSERT_TRUE(!threw || injected) << "bad_alloc without the injected failure";
      std::optional<uint64_t> after = before;
      if (kind < 6 && !before) after = v;
      if (kind == 6 && before) after = v;
      if (kind == 7) after.reset();
      const auto now = rec.lookup(*idx, k, buf);
      if (!threw) {
        if (kind < 8 || kind == 10) {
          ASSERT_EQ(ok, kind < 6 ? !before : bool(before));
        }
        ASSERT_EQ(now, kind < 8 ? after : before);
        if (kind == 8 || kind == 9) {
          std::vector<std::pair<std::string, uint64_t>> want;
          for (auto it = oracle.lower_bound(k); it != oracle.end() && want.size() < 20; ++it) want.push_back(*it);
          ASSERT_EQ(rec.found(m, rb, rv), want);
        }
        if (now) oracle[k] = *now;
        else oracle.erase(k);
        break;
      }
      ++thrown;
      ASSERT_TRUE(now == before || now == after) << "a failed operation left a third state";
      if (now) oracle[k] = *now;
      else oracle.erase(k);
      if (now != before) break;  // it had its whole effect
    }
    for (uint64_t c : {around.first, around.second})
      if (c) idx->pool().free(c);
  }
  std::printf("[ alloc ] %s%s%s: %u operations, %u threw bad_alloc\n", prm.index.c_str(),
              prm.bytes ? " keys=bytes" : "", prm.tx ? " mode=tx" : "", ops, thrown);
  finish(idx, o, prm, rec, oracle);
}

TEST_P(AllocFailure, AnOperationThatThrowsBadAllocHadNoEffectOrAllOfIt) { run(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Indexes, AllocFailure, testing::ValuesIn(all_params()), param_name);

// Opening a pool (after a clean close, or after a crash: recovery) when DRAM
// runs out part way: the open throws std::bad_alloc and leaves the pool to
// the next open, which (with DRAM) holds every record, passes check() and
// finds no block leaked; no lock, file lock or thread is left behind (a
// background thread left joinable ends the process). The failure is put at
// every one of the open's first 48 allocations on the calling thread, then
// at 48 more spread over the rest (--long: every one).
class AllocFailureAtOpen : public testing::TestWithParam<param> {};

void run_open(const param& prm) {
  ::signal(SIGALRM, hung);
  ::alarm(240);
  const options o = pool_options(prm, "open");
  ::unlink(o.pool_path.c_str());
  auto idx = open(o);
  const records rec(prm.bytes);
  std::map<std::string, uint64_t> oracle;
  for (uint64_t i = 0; i < 2000; ++i) {
    ASSERT_TRUE(rec.insert(*idx, rec.key(i), i));
    oracle[rec.key(i)] = i;
  }
  for (uint64_t i = 0; i < 2000; i += 7) {  // freed blocks too, and for PACTree merges
    ASSERT_TRUE(rec.remove(*idx, rec.key(i)));
    oracle.erase(rec.key(i));
  }
  for (bool dirty : {false, true}) {
    SCOPED_TRACE(dirty ? "dirty pool" : "clean pool");
    auto leave = [&] {  // the pool as this round needs it
      if (dirty) idx->abandon();
      else idx->close();
      idx.reset();
    };
    leave();
    test::fail_allocation(LONG_MAX);  // counts the open's allocations
    idx = open(o);
    const long total = LONG_MAX - test::allocations_left();
    test::allow_allocations();
    const uint64_t used = idx->pool().usage().used_blocks;
    expect_contents(*idx, prm, rec, oracle, "an open with DRAM");
    leave();
    std::vector<long> at;
    for (long n = 0; n < total; ++n)
      if (test::long_run() || n < 48 || (n - 48) % std::max(1L, (total - 48) / 48) == 0) at.push_back(n);
    unsigned failed = 0;
    for (long n : at) {
      SCOPED_TRACE("allocation " + std::to_string(n) + " of " + std::to_string(total) + " failed");
      test::fail_allocation(n);
      bool threw = false;
      try {
        idx = open(o);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      test::allow_allocations();
      failed += threw;
      if (threw) idx = open(o);
      expect_contents(*idx, prm, rec, oracle, threw ? "the open after a failed one" : "an open that ran through");
      if (!dirty && !kept_by_design(prm.index)) {  // a clean pool's blocks are counted as they were
        EXPECT_EQ(idx->pool().usage().used_blocks, used);
      }
      if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) break;
      leave();
    }
    if (!idx) idx = open(o);
    std::printf("[ alloc ] %s%s%s, %s pool: an open makes %ld allocations; %zu failed at, %u opens threw\n",
                prm.index.c_str(), prm.bytes ? " keys=bytes" : "", prm.tx ? " mode=tx" : "", dirty ? "dirty" : "clean",
                total, at.size(), failed);
  }
  // Nothing leaked: a dirty open's tracing finds what a clean one counts.
  idx->close();
  idx = open(o);
  const uint64_t used = idx->pool().usage().used_blocks;
  idx->abandon();
  idx = open(o);
  if (!kept_by_design(prm.index)) {
    EXPECT_EQ(idx->report().traced_blocks, used) << "blocks a failed open leaked";
  }
  expect_contents(*idx, prm, rec, oracle, "the last open");
  idx->close();
  ::unlink(o.pool_path.c_str());
  ::alarm(0);
}

TEST_P(AllocFailureAtOpen, AFailedOpenLeavesThePoolToTheNextOne) { run_open(GetParam()); }

// DRAM failures in every thread: while an operation runs, every n-th
// allocation in the process throws, so an index's background threads
// (DPTree's merges, PACTree's SMO thread) meet them too, where a throw out
// of the thread would end the process. Small nodes and merge thresholds
// make the background work frequent. The same checks as AllocFailure.
class AllocFailureEverywhere : public testing::TestWithParam<param> {};

void run_everywhere(const param& prm) {
  ::signal(SIGALRM, hung);
  ::alarm(240);
  options o = pool_options(prm, "everywhere");
  const std::string small = prm.index == "dptree" ? "leaf=4,merge_min=4" : prm.index == "pactree" ? "node=4" : "";
  if (!small.empty()) o.params = o.params.empty() ? small : o.params + "," + small;
  ::unlink(o.pool_path.c_str());
  auto idx = open(o);
  const records rec(prm.bytes);
  std::map<std::string, uint64_t> oracle;
  std::mt19937_64 rng(11);
  uint64_t next = 0;
  for (; next < 500; ++next) {
    ASSERT_TRUE(rec.insert(*idx, rec.key(next), next));
    oracle[rec.key(next)] = next;
  }
  std::string buf;
  unsigned long thrown = 0;
  const unsigned ops = test::long_run() ? 30000 : 3000;
  for (unsigned op = 0; op < ops; ++op) {
    const unsigned kind = unsigned(rng() % 8);  // 0-4 insert, 5 update, 6-7 remove
    const uint64_t id = kind < 5 ? next++ : rng() % next;
    const std::string k = rec.key(id);
    const uint64_t v = rng();
    SCOPED_TRACE("op " + std::to_string(op) + " kind " + std::to_string(kind));
    for (unsigned attempt = 0;; ++attempt) {
      ASSERT_LT(attempt, 1000u) << "an operation that never ran through";
      const auto before = oracle.count(k) ? std::optional<uint64_t>(oracle[k]) : std::nullopt;
      bool ok = false, threw = false;
      const unsigned long every = 17 + 7 * attempt + rng() % 13;
      test::fail_everywhere(every, rng() % every);
      try {
        if (kind < 5) ok = rec.insert(*idx, k, v);
        else if (kind == 5) ok = rec.update(*idx, k, v);
        else ok = rec.remove(*idx, k);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
      thrown += test::fail_everywhere(0);
      std::optional<uint64_t> after = before;
      if (kind < 5 && !before) after = v;
      if (kind == 5 && before) after = v;
      if (kind >= 6) after.reset();
      const auto now = rec.lookup(*idx, k, buf);
      if (!threw) {
        ASSERT_EQ(ok, kind < 5 ? !before : bool(before));
        ASSERT_EQ(now, after);
      } else {
        ASSERT_TRUE(now == before || now == after) << "a failed operation left a third state";
      }
      if (now) oracle[k] = *now;
      else oracle.erase(k);
      if (!threw || now != before) break;
    }
  }
  std::printf("[ alloc ] %s%s%s: %u operations, %lu allocations failed in some thread\n", prm.index.c_str(),
              prm.bytes ? " keys=bytes" : "", prm.tx ? " mode=tx" : "", ops, thrown);
  finish(idx, o, prm, rec, oracle);
}

TEST_P(AllocFailureEverywhere, BackgroundThreadsMeetTheFailuresToo) { run_everywhere(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Indexes, AllocFailureEverywhere, testing::ValuesIn(all_params()), param_name);

INSTANTIATE_TEST_SUITE_P(Indexes, AllocFailureAtOpen, testing::ValuesIn(all_params()), param_name);

}  // namespace
}  // namespace pmindex
