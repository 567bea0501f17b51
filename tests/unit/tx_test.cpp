// The undo-log transactions of the tx mode (pm/tx.hpp). A transaction is
// crashed after every persistence event (a small shadow of the durable image,
// as the crash checker keeps: per line the durable value, the value at its
// last flush, or the current one), each image is recovered by pool::open and
// must hold the state before or after the transaction, never a mix; the
// recovery itself is crashed too and must end where an uninterrupted one
// ends. Each check is proven by a mutant of the protocol (pm/tx_log.hpp).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "pm/tx_log.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/pool.hpp"
#include "pmindex/pm/tx.hpp"
#include "substrate_util.hpp"
#include "test_seed.hpp"

namespace pmindex::pm {
namespace {

constexpr uint64_t k_pool = 1 << 20;

// Shadows the durable image of one mapping. Calls `at_event` before each
// flush and fence (the state a crash at that event leaves).
class shadow : public persist_observer {
 public:
  std::function<void(uint64_t)> at_event;
  void on_map(char* base, uint64_t size) override {
    base_ = base;
    durable_.assign(base, base + size);
    flushed_.clear();
  }
  void on_flush(const void* p, size_t n) override {
    event();
    auto a = (reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63}) - reinterpret_cast<uintptr_t>(base_);
    auto e = reinterpret_cast<uintptr_t>(p) + n - reinterpret_cast<uintptr_t>(base_);
    for (; a < e; a += 64) flushed_[a].assign(base_ + a, base_ + a + 64);
  }
  void on_fence() override {
    event();
    for (auto& [line, bytes] : flushed_) std::memcpy(durable_.data() + line, bytes.data(), 64);
    flushed_.clear();
  }
  // Variant 0: durable lines only; 1: flushed lines too; 2: everything
  // current; more: per line one of the three at random.
  std::vector<char> image(unsigned variant, std::mt19937_64& rng) const {
    std::vector<char> img = durable_;
    const size_t n = durable_.size();
    for (size_t line = 0; line < n; line += 64) {
      const char* cur = base_ + line;
      auto f = flushed_.find(line);
      if (std::memcmp(cur, img.data() + line, 64) == 0 && f == flushed_.end()) continue;
      unsigned pick = variant < 3 ? variant : static_cast<unsigned>(rng() % 3);
      if (pick >= 1 && f != flushed_.end()) std::memcpy(img.data() + line, f->second.data(), 64);
      if (pick == 2) std::memcpy(img.data() + line, cur, 64);
    }
    return img;
  }
  uint64_t events() const { return events_; }

 private:
  void event() {
    ++events_;
    if (at_event && !busy_) {
      busy_ = true;
      at_event(events_);
      busy_ = false;
    }
  }
  char* base_ = nullptr;
  std::vector<char> durable_;
  std::map<uint64_t, std::vector<char>> flushed_;
  uint64_t events_ = 0;
  bool busy_ = false;
};

struct mutant_guard {
  explicit mutant_guard(tx_mutant m) { set_tx_mutant(m); }
  ~mutant_guard() { set_tx_mutant(tx_mutant::none); }
};

std::unique_ptr<pool> sim_pool(shadow& s, uint32_t log_size = 4096) {
  pool_options o;
  o.size = k_pool;
  o.pm_mode = mode::tx;
  o.observer = &s;
  o.tx_logs = 2;
  o.tx_log_size = log_size;
  o.quiet = true;
  return pool::open(o);
}

// The scenario: block A (root) links C (word 0) and, after the
// transaction, a new block B (word 1); the transaction rewrites A's bytes
// [64, 512) in two overlapping snapshots, allocates and fills B, and frees C.
constexpr size_t k_a = 1024, k_b = 256, k_c = 64;
struct scenario {
  std::vector<char> before, after;  // A's bytes
};

void fill(char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>(seed * 31 + i * 7);
}

scenario setup(pool& p) {
  uint64_t a = p.alloc_or_throw(k_a), c = p.alloc_or_throw(k_c);
  char* A = p.ptr<char>(a);
  fill(A, k_a, 1);
  reinterpret_cast<uint64_t*>(A)[0] = c;
  reinterpret_cast<uint64_t*>(A)[1] = 0;
  fill(p.ptr<char>(c), k_c, 2);
  p.persist(A, k_a);
  p.persist(p.ptr(c), k_c);
  p.set_root(a);
  scenario s;
  s.before.assign(A, A + k_a);
  s.after = s.before;  // what run_tx writes (words 0 and 1 aside)
  fill(s.after.data() + 64, 64, 3);
  fill(s.after.data() + 96, 416, 4);
  return s;
}

void run_tx(pool& p, scenario& s) {
  char* A = p.ptr<char>(p.root());
  auto* w = reinterpret_cast<uint64_t*>(A);
  transaction tx(p);
  tx.snapshot(A + 64, 64);
  fill(A + 64, 64, 3);
  tx.snapshot(A + 96, 416);  // overlaps the first: rollback must restore the oldest bytes
  fill(A + 96, 416, 4);
  uint64_t b = tx.alloc(k_b);
  fill(p.ptr<char>(b), k_b, 5);
  tx.snapshot(&w[1], 8);
  w[1] = b;
  tx.free(w[0]);
  tx.set(&w[0], 0);
  tx.commit();
  (void)s;
}

// Opens a crash image (recovery) and returns "" or what is wrong with it.
std::string check_image(std::vector<char>& img, const scenario& s, bool committed, std::vector<char>* a_out = nullptr) {
  pool_options o;
  o.image = img.data();
  o.image_size = img.size();
  o.open = open_mode::must_exist;
  o.quiet = true;
  std::unique_ptr<pool> p;
  try {
    p = pool::open(o);
  } catch (const error& e) {
    return std::string("recovery failed: ") + e.what();
  }
  const char* A = p->ptr<char>(p->root());
  const auto* w = reinterpret_cast<const uint64_t*>(A);
  if (a_out) a_out->assign(A, A + k_a);
  std::string why;
  bool is_before = std::memcmp(A, s.before.data(), k_a) == 0;
  bool is_after = std::memcmp(A + 16, s.after.data() + 16, k_a - 16) == 0 && w[0] == 0 && w[1] != 0;
  if (!is_before && !is_after) why = "A holds neither the state before nor after the transaction";
  else if (committed && !is_after) why = "a committed transaction was lost";
  else if (is_after) {
    char want[k_b];
    fill(want, k_b, 5);
    if (!p->valid_block(w[1], k_b) || std::memcmp(p->ptr(w[1]), want, k_b) != 0) why = "B's contents are not durable";
  }
  if (why.empty()) {
    // Tracing: what A links is allocated, nothing else.
    p->rebuild_heap([&](pool::trace_sink& t) {
      t.add(p->root(), k_a);
      if (w[0]) t.add(w[0], k_c);
      if (w[1]) t.add(w[1], k_b);
    });
    if (p->usage().used_blocks != 2u) why = "after tracing, " + std::to_string(p->usage().used_blocks) + " blocks";
  }
  p->abandon();
  return why;
}

struct verdict {
  uint64_t images = 0, violations = 0;
  std::string first;
  void add(const std::string& why, uint64_t point) {
    ++images;
    if (why.empty()) return;
    if (!violations++) first = "event " + std::to_string(point) + ": " + why;
  }
};

// Crashes the transaction after each persistence event (and the recovery of
// some of those images after each of its events).
verdict crash_every_prefix(bool crash_recovery) {
  verdict v;
  std::mt19937_64 rng(test::test_seed());
  shadow sh;
  auto p = sim_pool(sh);
  scenario s = setup(*p);
  bool committed = false;
  constexpr unsigned k_variants = 16;
  sh.at_event = [&](uint64_t point) {
    for (unsigned var = 0; var < k_variants; ++var) {
      auto img = sh.image(var, rng);
      if (!crash_recovery) {
        v.add(check_image(img, s, committed), point);
        continue;
      }
      if (var != 2 && var != 3) continue;
      // An uninterrupted recovery, then one crashed at each of its events.
      std::vector<char> ref_img = img, ref_a;
      if (auto why = check_image(ref_img, s, committed, &ref_a); !why.empty()) {
        v.add(why, point);
        continue;
      }
      shadow rs;
      rs.on_map(img.data(), img.size());
      rs.at_event = [&](uint64_t) {
        for (unsigned rv = 0; rv < 4; ++rv) {
          auto again = rs.image(rv, rng);
          std::vector<char> a;
          std::string why = check_image(again, s, committed, &a);
          if (why.empty() && a != ref_a) why = "a crash during recovery changed what recovery restores";
          v.add(why, point);
        }
      };
      pool_options o;
      o.image = img.data();
      o.image_size = img.size();
      o.observer = &rs;
      o.quiet = true;
      pool::open(o)->abandon();
    }
  };
  run_tx(*p, s);
  committed = true;
  sh.at_event(sh.events() + 1);  // after commit returned
  sh.at_event = nullptr;
  p->abandon();
  return v;
}

TEST(Tx, RollbackOfEveryPrefix) {
  auto v = crash_every_prefix(false);
  EXPECT_GT(v.images, 150u);
  EXPECT_EQ(v.violations, 0u) << v.first;
}

TEST(Tx, RecoveryIsIdempotent) {
  auto v = crash_every_prefix(true);
  EXPECT_GT(v.images, 150u);
  EXPECT_EQ(v.violations, 0u) << v.first;
}

#ifdef PMINDEX_MUTANTS
TEST(Tx, MutantEntryNotPersistedIsCaught) {
  mutant_guard m(tx_mutant::entry_not_persisted);
  auto v = crash_every_prefix(false);
  EXPECT_GT(v.violations, 0u);
  std::printf("entry_not_persisted: %s\n", v.first.c_str());
}
TEST(Tx, MutantCommitBeforeFlushIsCaught) {
  mutant_guard m(tx_mutant::commit_before_flush);
  auto v = crash_every_prefix(false);
  EXPECT_GT(v.violations, 0u);
  std::printf("commit_before_flush: %s\n", v.first.c_str());
}
TEST(Tx, MutantRecoverForwardIsCaught) {
  mutant_guard m(tx_mutant::recover_forward);
  auto v = crash_every_prefix(false);
  EXPECT_GT(v.violations, 0u);
  std::printf("recover_forward: %s\n", v.first.c_str());
}
TEST(Tx, MutantRecoverInvalidateFirstIsCaught) {
  {
    mutant_guard m(tx_mutant::recover_invalidate_first);
    auto v = crash_every_prefix(true);
    EXPECT_GT(v.violations, 0u);
    std::printf("recover_invalidate_first: %s\n", v.first.c_str());
  }
  // Without a crash inside recovery the mutant is invisible: the
  // idempotence test is what catches it.
}
#endif

// --- runtime rollback, allocations, frees, log full

struct file_pool {
  test::temp_pool path{"tx"};
  std::unique_ptr<pool> open(uint64_t log_size = 64 << 10, std::optional<mode> m = mode::tx) {
    pool_options o;
    o.path = path.path();
    o.size = 4 << 20;
    o.pm_mode = m;
    o.tx_logs = 2;
    o.tx_log_size = log_size;
    o.quiet = true;
    return pool::open(o);
  }
};

TEST(Tx, AbortRestoresAndFreesEveryAllocation) {
  file_pool f;
  auto p = f.open();
  uint64_t a = p->alloc_or_throw(512);
  fill(p->ptr<char>(a), 512, 1);
  p->persist(p->ptr(a), 512);
  std::vector<char> before(p->ptr<char>(a), p->ptr<char>(a) + 512);
  const uint64_t used = p->usage().used_blocks;
  std::vector<uint64_t> got;
  {
    transaction tx(*p);
    for (size_t n : {16, 64, 200, 4096, 70000}) got.push_back(tx.alloc(n));
    tx.snapshot(p->ptr<char>(a), 512);
    fill(p->ptr<char>(a), 512, 9);
    tx.free(a);  // not taken: the transaction rolls back
  }  // no commit: rolled back
  EXPECT_EQ(std::memcmp(p->ptr(a), before.data(), 512), 0);
  EXPECT_TRUE(p->is_allocated(a));
  // (freed blocks sit in the thread's cache: usage() counts them free)
  EXPECT_EQ(p->usage().used_blocks, used);
}

#ifdef PMINDEX_MUTANTS
TEST(Tx, MutantAbortKeepsAllocsIsCaught) {
  mutant_guard m(tx_mutant::abort_keeps_allocs);
  file_pool f;
  auto p = f.open();
  const uint64_t used = p->usage().used_blocks;
  {
    transaction tx(*p);
    tx.alloc(64);
  }
  EXPECT_NE(p->usage().used_blocks, used);  // the leak the test above would report
}
#endif

TEST(Tx, CommitKeepsAllocationsAndTakesFrees) {
  file_pool f;
  auto p = f.open();
  const uint64_t used = p->usage().used_blocks;
  uint64_t r = p->alloc_or_throw(64);
  auto* links = p->ptr<uint64_t>(r);
  std::memset(links, 0, 64);
  p->persist(links, 64);
  p->set_root(r);
  {
    transaction tx(*p);
    for (int i = 0; i < 8; ++i) tx.set(&links[i], tx.alloc(64 * (i + 1)));
    tx.commit();
  }
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(p->is_allocated(links[i]));
  EXPECT_EQ(p->usage().used_blocks, used + 9);
  {
    transaction tx(*p);
    for (int i = 0; i < 8; ++i) {
      tx.free(links[i]);
      tx.set(&links[i], 0);
    }
    tx.commit();
  }
  p->quiesce();  // frees are epoch-deferred
  EXPECT_EQ(p->usage().used_blocks, used + 1);
  // Reopened after a clean close: the same blocks.
  p->close();
  p = f.open();
  EXPECT_EQ(p->usage().used_blocks, used + 1);
}

TEST(Tx, LogFullIsATypedErrorAndRollsBack) {
  file_pool f;
  auto p = f.open(256);  // room for one entry of up to 160 bytes
  uint64_t a = p->alloc_or_throw(512);
  fill(p->ptr<char>(a), 512, 1);
  p->persist(p->ptr(a), 512);
  p->set_root(a);
  std::vector<char> before(p->ptr<char>(a), p->ptr<char>(a) + 512);
  try {
    transaction tx(*p);
    tx.snapshot(p->ptr<char>(a), 100);
    fill(p->ptr<char>(a), 100, 7);
    tx.snapshot(p->ptr<char>(a) + 200, 100);  // no room
    FAIL() << "no log-full error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::pool_full) << e.what();
    EXPECT_NE(std::string(e.what()).find("undo log full"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::memcmp(p->ptr(a), before.data(), 512), 0);
  {  // the log is free again
    transaction tx(*p);
    tx.snapshot(p->ptr<char>(a), 100);
    fill(p->ptr<char>(a), 100, 8);
    tx.commit();
  }
  p->abandon();  // a crash: the committed change survives recovery
  p = f.open(256);
  char want[100];
  fill(want, 100, 8);
  EXPECT_EQ(std::memcmp(p->ptr(p->root()), want, 100), 0);
}

TEST(Tx, IncompleteTransactionRolledBackAtOpen) {
  file_pool f;
  auto p = f.open();
  uint64_t a = p->alloc_or_throw(256);
  fill(p->ptr<char>(a), 256, 1);
  p->persist(p->ptr(a), 256);
  p->set_root(a);
  std::vector<char> before(p->ptr<char>(a), p->ptr<char>(a) + 256);
  p->close();
  p.reset();
  // A child dies inside a transaction whose change is already durable.
  pid_t pid = fork();
  if (pid == 0) {
    auto c = f.open();
    transaction tx(*c);
    char* A = c->ptr<char>(c->root());
    tx.snapshot(A, 256);
    fill(A, 256, 2);
    c->persist(A, 256);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  p = f.open();
  EXPECT_FALSE(p->was_clean());
  EXPECT_EQ(std::memcmp(p->ptr(p->root()), before.data(), 256), 0);
}

TEST(Tx, NeedsATxPool) {
  file_pool f;
  auto p = f.open(64 << 10, mode::persist);
  try {
    transaction tx(*p);
    FAIL();
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::unsupported) << e.what();
  }
}

TEST(Tx, LogEntryOutsideTheHeapIsCorrupt) {
  file_pool f;
  auto p = f.open();
  const auto& h = p->header();
  char* log = p->ptr<char>(h.tx_log_offset);
  tx_entry_head e{8, 8, 1, 0};  // points into the pool header
  uint64_t data = 42;
  std::memcpy(log + k_tx_entries + sizeof e, &data, 8);
  e.sum = detail::checksum(&data, 8, detail::checksum(&e, 24));
  std::memcpy(log + k_tx_entries, &e, sizeof e);
  p->abandon();
  try {
    p = f.open();
    FAIL() << "a wild log entry was followed";
  } catch (const error& x) {
    EXPECT_EQ(x.code(), errc::corrupt) << x.what();
  }
}

}  // namespace
}  // namespace pmindex::pm
