// The harness's runner, in process, on DRAM indexes: it counts what it did
// and catches an index that loses or invents records.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>

#include "prefill_cache.hpp"
#include "runner.hpp"

namespace pmindex::bench {
namespace {

// A correct map whose stats() can be told to lie by `skew` records, and its
// lookups about values (`lie`: one off).
class fibbing_index final : public u64_index {
 public:
  // starve_after: inserts past that many throw std::bad_alloc (DRAM ran out).
  fibbing_index(pm::pool& p, int64_t skew, bool lie = false, uint64_t starve_after = UINT64_MAX)
      : u64_index(p), skew_(skew), lie_(lie), starve_after_(starve_after) {}
  bool insert(uint64_t k, uint64_t v) override {
    std::lock_guard l(mu_);
    if (inserts_ >= starve_after_) throw std::bad_alloc();
    if (inserts_++ && k < last_) g_descending_inserts.fetch_add(1, std::memory_order_relaxed);
    last_ = k;
    return m_.emplace(k, v).second;
  }
  // Inserts whose key was below the one before (the prefill-order test).
  static inline std::atomic<uint64_t> g_descending_inserts{0};
  bool update(uint64_t k, uint64_t v) override {
    std::lock_guard l(mu_);
    auto it = m_.find(k);
    if (it == m_.end()) return false;
    it->second = v;
    return true;
  }
  bool remove(uint64_t k) override {
    std::lock_guard l(mu_);
    return m_.erase(k) > 0;
  }
  std::optional<uint64_t> lookup(uint64_t k) override {
    std::lock_guard l(mu_);
    auto it = m_.find(k);
    if (it == m_.end()) return std::nullopt;
    return it->second + lie_;
  }
  size_t scan(uint64_t from, size_t n, record* out) override {
    std::lock_guard l(mu_);
    size_t i = 0;
    for (auto it = m_.lower_bound(from); it != m_.end() && i < n; ++it) out[i++] = {it->first, it->second};
    return i;
  }
  check_result check() override { return {}; }
  void trace(pm::pool::trace_sink&) override {}
  index_stats stats() override {
    std::lock_guard l(mu_);
    index_stats s;
    s.records = static_cast<uint64_t>(static_cast<int64_t>(m_.size()) + skew_);
    return s;
  }

 private:
  std::mutex mu_;
  uint64_t inserts_ = 0, last_ = 0;
  std::map<uint64_t, uint64_t> m_;
  int64_t skew_;
  bool lie_;
  uint64_t starve_after_;
};

// A byte-keyed map that can lie about values (`lie`: lookups return the
// value with its last byte flipped) and counts key comparisons as an extra
// "key_compares" in stats() (`compares`).
class byte_map_index final : public bytes_index {
 public:
  byte_map_index(pm::pool& p, bool lie, bool compares) : bytes_index(p), lie_(lie), compares_(compares) {}
  using bytes_index::insert, bytes_index::update, bytes_index::remove, bytes_index::lookup, bytes_index::scan;
  bool insert(std::string_view k, std::string_view v) override {
    std::lock_guard l(mu_);
    count();
    return m_.emplace(std::string(k), std::string(v)).second;
  }
  bool update(std::string_view k, std::string_view v) override {
    std::lock_guard l(mu_);
    count();
    auto it = m_.find(std::string(k));
    if (it == m_.end()) return false;
    it->second = v;
    return true;
  }
  bool remove(std::string_view k) override {
    std::lock_guard l(mu_);
    count();
    return m_.erase(std::string(k)) > 0;
  }
  bool lookup(std::string_view k, std::string* v) override {
    std::lock_guard l(mu_);
    count();
    auto it = m_.find(std::string(k));
    if (it == m_.end()) return false;
    if (v) {
      *v = it->second;
      if (lie_ && !v->empty()) v->back() ^= 1;
    }
    return true;
  }
  size_t scan(std::string_view from, size_t n, record_buffer& out) override {
    std::lock_guard l(mu_);
    size_t i = 0;
    for (auto it = m_.lower_bound(std::string(from)); it != m_.end() && i < n; ++it, ++i) out.push_back(it->first, it->second);
    return i;
  }
  check_result check() override { return {}; }
  void trace(pm::pool::trace_sink&) override {}
  index_stats stats() override {
    std::lock_guard l(mu_);
    index_stats s;
    s.records = m_.size();
    if (compares_) s.extra.emplace_back("key_compares", static_cast<double>(compares_done_));
    return s;
  }

 private:
  void count() { compares_done_ += 10; }  // pretend: 10 per operation
  std::mutex mu_;
  std::map<std::string, std::string> m_;
  bool lie_, compares_;
  uint64_t compares_done_ = 0;
};

void register_fibbers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int64_t skew : {0, 1}) {
      index_entry e;
      e.name = skew ? "bench-test-fibbing" : "bench-test-honest";
      e.description = "bench runner test";
      e.modes = {pm::mode::dram};
      e.factory = [skew](pm::pool& p, open_kind, const index_config&) -> std::unique_ptr<index> {
        return std::make_unique<fibbing_index>(p, skew);
      };
      register_index(e);
    }
    for (int v = 0; v < 3; ++v) {
      index_entry e;
      e.name = v == 0 ? "bench-test-bytes" : v == 1 ? "bench-test-bytes-liar" : "bench-test-bytes-counting";
      e.description = "bench runner test";
      e.modes = {pm::mode::dram};
      e.key_kinds = {key_kind::bytes};
      e.max_key = 4096;
      e.max_value = 1 << 20;
      e.factory = [v](pm::pool& p, open_kind, const index_config&) -> std::unique_ptr<index> {
        return std::make_unique<byte_map_index>(p, v == 1, v == 2);
      };
      register_index(e);
    }
    index_entry e;
    e.name = "bench-test-u64-liar";
    e.description = "bench runner test";
    e.modes = {pm::mode::dram};
    e.factory = [](pm::pool& p, open_kind, const index_config&) -> std::unique_ptr<index> {
      return std::make_unique<fibbing_index>(p, 0, true);
    };
    register_index(e);
    e.name = "bench-test-out-of-dram";
    e.factory = [](pm::pool& p, open_kind, const index_config&) -> std::unique_ptr<index> {
      return std::make_unique<fibbing_index>(p, 0, false, 6000);
    };
    register_index(e);
  });
}

run_config small(const std::string& index, const char* wl) {
  run_config c;
  c.index = index;
  c.base.mode = pm::mode::dram;
  c.base.pool_size = 16 << 20;
  c.w = *preset(wl);
  c.records = 5000;
  c.ops = 20000;
  c.threads = 2;
  c.sample_every = 4;
  return c;
}

TEST(BenchRunner, CountsAndChecksAHonestIndex) {
  register_fibbers();
  auto c = small("bench-test-honest", "update90insert10");
  c.w.mix[static_cast<unsigned>(op_type::remove)] = 0.1;  // some removes too
  auto r = run(c);
  EXPECT_FALSE(r.failed) << r.failure;
  EXPECT_EQ(r.all.done, 20000u);
  EXPECT_EQ(r.load_ok, 5000u);
  EXPECT_TRUE(r.counted);
  EXPECT_EQ(r.expected_records, r.reported_records);
  EXPECT_EQ(r.expected_records, r.scanned_records);
  const auto& ins = r.per_op[static_cast<unsigned>(op_type::insert)];
  const auto& rem = r.per_op[static_cast<unsigned>(op_type::remove)];
  EXPECT_EQ(ins.ok, ins.done);  // fresh keys always go in
  EXPECT_EQ(r.expected_records, 5000 + ins.ok - rem.ok);
  EXPECT_GT(r.all.lat.count(), 0u);
  EXPECT_GT(r.mops, 0.0);
}

TEST(BenchRunner, CatchesARecordCountMismatch) {
  register_fibbers();
  auto r = run(small("bench-test-fibbing", "ycsb-a"));
  EXPECT_TRUE(r.failed);
  EXPECT_NE(r.failure.find("record count mismatch"), std::string::npos) << r.failure;
}

// A worker thread that meets std::bad_alloc ends the run with
// errc::out_of_memory (exit code 15), not an internal error.
TEST(BenchRunner, OutOfDramIsItsOwnError) {
  register_fibbers();
  try {
    run(small("bench-test-out-of-dram", "update90insert10"));
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), errc::out_of_memory) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
}

TEST(BenchRunner, BaselinesAndParallelModes) {
  for (const char* name : {"stdmap", "btree-dram"}) {
    if (!find_index(name)) continue;  // btree-dram needs abseil
    for (auto par : {parallel_mode::shared, parallel_mode::instance, parallel_mode::global_lock}) {
      auto c = small(name, "ycsb-e");
      c.parallel = par;
      c.ops = 4000;
      auto r = run(c);
      EXPECT_FALSE(r.failed) << name << " " << to_string(par) << ": " << r.failure;
      EXPECT_EQ(r.all.done, 4000u);
    }
  }
}

// --lock pool: the mutex lives in a line of the index's pool for the run and
// goes back before the recovery reopen (recover) or the close (no recover).
TEST(BenchRunner, GlobalLockInThePool) {
  if (!find_index("hashtable")) GTEST_SKIP() << "no hashtable";
  for (bool rec : {false, true}) {
    auto c = small("hashtable", "pmemids-write");
    c.base.mode = pm::mode::persist;
    c.parallel = parallel_mode::global_lock;
    c.lock_in_pool = true;
    c.recover = rec;
    c.ops = 4000;
    auto r = run(c);
    EXPECT_FALSE(r.failed) << r.failure;
    EXPECT_EQ(r.all.done, 4000u);
    EXPECT_EQ(r.have_recovery, rec);
  }
}

TEST(BenchRunner, NoLatencySamplesIsFine) {
  register_fibbers();
  auto c = small("bench-test-honest", "ycsb-c");
  c.sample_every = 0;
  auto r = run(c);
  EXPECT_FALSE(r.failed);
  EXPECT_EQ(r.all.lat.count(), 0u);
  EXPECT_EQ(r.all.lat.percentile(0.99), 0u);
}

// Phases share one prefill: each starts from what the last left, fresh
// inserts never collide across phases, and every phase's count checks.
TEST(BenchRunner, PhasesOnOneIndexAccountForEveryRecord) {
  register_fibbers();
  auto c = small("bench-test-honest", "ycsb-c");
  std::vector<workload> ws(3, *preset("update90insert10"));
  ws[1].mix[static_cast<unsigned>(op_type::remove)] = 0.3;
  auto rs = run_phases(c, ws);
  ASSERT_EQ(rs.size(), 3u);
  uint64_t before = 5000;
  for (auto& r : rs) {
    EXPECT_FALSE(r.failed) << r.failure;
    const auto& ins = r.per_op[static_cast<unsigned>(op_type::insert)];
    const auto& rem = r.per_op[static_cast<unsigned>(op_type::remove)];
    EXPECT_EQ(ins.ok, ins.done);  // fresh ids: no collision with earlier phases
    EXPECT_EQ(r.expected_records, before + ins.ok - rem.ok);
    EXPECT_EQ(r.expected_records, r.scanned_records);
    before = r.expected_records;
  }
}

// VERLIB-style: a spread prefill over a 2x key space, random inserts that
// may fail, and one range-query thread that only scans.
TEST(BenchRunner, RangeThreadsRandomInsertsSpreadPrefill) {
  register_fibbers();
  auto c = small("bench-test-honest", "ycsb-c");
  c.key_space = 2 * c.records;
  c.prefill_spread = true;
  c.random_inserts = true;
  c.range_threads = 1;
  c.range_size = 50;
  c.w.mix[0] = 0.5;
  c.w.mix[static_cast<unsigned>(op_type::insert)] = 0.25;
  c.w.mix[static_cast<unsigned>(op_type::remove)] = 0.25;
  c.w.dist = distribution::uniform;
  auto r = run(c);
  EXPECT_FALSE(r.failed) << r.failure;
  const auto& ins = r.per_op[static_cast<unsigned>(op_type::insert)];
  const auto& rd = r.per_op[static_cast<unsigned>(op_type::read)];
  const auto& sc = r.per_op[static_cast<unsigned>(op_type::scan)];
  EXPECT_EQ(sc.done, 10000u);           // thread 1: scans only
  EXPECT_EQ(rd.done + ins.done + r.per_op[3].done, 10000u);
  EXPECT_LT(ins.ok, ins.done);          // about half the keys are present
  EXPECT_GT(rd.ok, rd.done / 4);        // and about half the reads hit
  EXPECT_LT(rd.ok, rd.done * 3 / 4);
}

// --prefill-order sorted: one thread inserts the prefill in ascending key
// order (the default order is scattered: it descends now and then). The
// byte path refuses it.
TEST(BenchRunner, SortedPrefillInsertsInKeyOrder) {
  register_fibbers();
  for (bool sorted : {false, true}) {
    auto c = small("bench-test-honest", "ycsb-c");  // no inserts after the prefill
    c.threads = 1;
    c.prefill_sorted = sorted;
    fibbing_index::g_descending_inserts = 0;
    auto r = run(c);
    EXPECT_FALSE(r.failed) << r.failure;
    EXPECT_EQ(r.load_ok, 5000u);
    if (sorted)
      EXPECT_EQ(fibbing_index::g_descending_inserts.load(), 0u);
    else
      EXPECT_GT(fibbing_index::g_descending_inserts.load(), 1000u);
  }
  auto c = small("bench-test-bytes", "ycsb-c");
  c.dataset = "names";
  c.prefill_sorted = true;
  EXPECT_THROW(run(c), error);
}

// The byte path: every generated dataset and a value size other than 8 run
// on a byte index with every operation type, and every record and value checks.
TEST(BenchRunner, ByteDatasetsAccountForEveryRecordAndValue) {
  register_fibbers();
  for (const char* ds : {"names", "wiki", "urls", "u64-bytes"}) {
    for (uint32_t vs : {8u, 100u}) {
      auto c = small("bench-test-bytes", "ycsb-a");
      c.dataset = ds;
      c.value_size = vs;
      c.w.mix[static_cast<unsigned>(op_type::insert)] = 0.1;
      c.w.mix[static_cast<unsigned>(op_type::remove)] = 0.1;
      c.w.mix[static_cast<unsigned>(op_type::scan)] = 0.1;
      c.w.mix[static_cast<unsigned>(op_type::rmw)] = 0.1;
      auto r = run(c);
      EXPECT_FALSE(r.failed) << ds << " " << vs << ": " << r.failure;
      EXPECT_EQ(r.all.done, 20000u);
      EXPECT_EQ(r.expected_records, r.scanned_records) << ds;
      EXPECT_GT(r.per_op[static_cast<unsigned>(op_type::read)].ok, 0u);
      EXPECT_EQ(r.bad_values, 0u);
    }
  }
}

// Lookups check values: an index that returns a wrong value fails the run,
// on the byte path and on the u64 path.
TEST(BenchRunner, WrongValuesAreCaught) {
  register_fibbers();
  auto c = small("bench-test-bytes-liar", "ycsb-c");
  c.dataset = "names";
  c.value_size = 24;
  auto r = run(c);
  EXPECT_TRUE(r.failed);
  EXPECT_NE(r.failure.find("lookups found a value the record never had"), std::string::npos) << r.failure;
  auto u = run(small("bench-test-u64-liar", "ycsb-f"));
  EXPECT_TRUE(u.failed);
  EXPECT_GT(u.bad_values, 0u);
  // The honest u64 map passes with updates and read-modify-writes in the mix.
  auto h = run(small("bench-test-honest", "ycsb-f"));
  EXPECT_FALSE(h.failed) << h.failure;
}

TEST(BenchRunner, KeyComparisonsOnlyWhenTheIndexCountsThem) {
  register_fibbers();
  auto c = small("bench-test-bytes-counting", "ycsb-c");
  c.dataset = "wiki";
  auto r = run(c);
  EXPECT_FALSE(r.failed) << r.failure;
  EXPECT_NEAR(r.key_compares_per_op, 10.0, 0.01);
  c.index = "bench-test-bytes";
  EXPECT_LT(run(c).key_compares_per_op, 0);
}

// A dataset of few keys: fresh inserts run out, the run ends early with a
// note instead of reusing keys (and nothing fails).
TEST(BenchRunner, AFiniteDatasetEndsTheRunWhenInsertsUseItUp) {
  register_fibbers();
  std::string path = "/dev/shm/pmindex-bench-runner-test-" + std::to_string(::getpid()) + ".txt";
  {
    std::ofstream f(path);
    for (int i = 0; i < 6000; ++i) f << "k" << i << "\n";
  }
  auto c = small("bench-test-bytes", "ycsb-d");  // 5% inserts
  c.dataset = "file:" + path;
  c.ops = 0;
  c.seconds = 30;  // ends long before: 1000 fresh keys, each thread until its share is used
  auto r = run(c);
  ::unlink(path.c_str());
  EXPECT_FALSE(r.failed) << r.failure;
  EXPECT_TRUE(r.exhausted);
  EXPECT_EQ(r.per_op[static_cast<unsigned>(op_type::insert)].ok, 1000u);
  EXPECT_EQ(r.expected_records, 6000u);
}

// --reuse-prefill: every cell of one prefill starts from the same load (not
// from what an earlier cell's writes left), reports that load's figures, and
// the kept copy goes with the cache. A cache that kept the pool after a
// cell's run, or handed a cell its predecessor's pool, fails the count.
TEST(BenchRunner, ReusedPrefillStartsEveryCellFromTheSameLoad) {
  if (!find_index("canary")) GTEST_SKIP() << "no canary";
  const std::string pool = "/dev/shm/pmindex-bench-reuse-" + std::to_string(::getpid()) + ".pool";
  auto cache = std::make_shared<prefill_cache>();
  auto c = small("canary", "update90insert10");
  c.base.mode = pm::mode::persist;
  c.base.pool_path = pool;
  c.w.mix[static_cast<unsigned>(op_type::remove)] = 0.2;
  c.reuse_prefill = cache;
  std::vector<run_result> rs;
  for (int i = 0; i < 3; ++i) {
    if (i == 2) c.w = *preset("ycsb-c");
    rs.push_back(run(c));
  }
  for (auto& r : rs) {
    EXPECT_FALSE(r.failed) << r.failure;
    const auto& ins = r.per_op[static_cast<unsigned>(op_type::insert)];
    const auto& rem = r.per_op[static_cast<unsigned>(op_type::remove)];
    EXPECT_EQ(r.load_ok, 5000u);
    EXPECT_EQ(ins.ok, ins.done);
    EXPECT_EQ(r.expected_records, 5000 + ins.ok - rem.ok);
    EXPECT_EQ(r.expected_records, r.scanned_records);
    EXPECT_EQ(r.load_seconds, rs[0].load_seconds);  // one load's figures
    EXPECT_EQ(r.space.pm_bytes_used, rs[0].space.pm_bytes_used);
    bool noted = false;
    for (auto& n : r.notes) noted = noted || n.rfind("--reuse-prefill: ran on", 0) == 0;
    EXPECT_TRUE(noted);
  }
  EXPECT_GT(rs[0].per_op[static_cast<unsigned>(op_type::remove)].ok, 0u);
  struct stat st;
  EXPECT_NE(::stat(pool.c_str(), &st), 0) << "the cell's pool was left behind";
  EXPECT_EQ(::stat((pool + ".prefill0").c_str(), &st), 0) << "no kept load";
  // A different prefill (another seed) loads again and is kept beside.
  c.seed = 7;
  auto other = run(c);
  EXPECT_FALSE(other.failed) << other.failure;
  EXPECT_EQ(::stat((pool + ".prefill1").c_str(), &st), 0);
  rs.clear();
  other = run_result{};
  c.reuse_prefill.reset();
  cache.reset();
  EXPECT_NE(::stat((pool + ".prefill0").c_str(), &st), 0) << "the kept load outlived its cache";
  EXPECT_NE(::stat((pool + ".prefill1.bench").c_str(), &st), 0);
}

// Copies hold a pool file's written pages only (a pool reserves its whole
// size when made).
TEST(BenchRunner, PrefillCacheCopiesOnlyWrittenPages) {
  const std::string a = "/dev/shm/pmindex-bench-copy-" + std::to_string(::getpid()), b = a + ".copy";
  constexpr off_t k_size = 64 << 20;
  {
    int fd = ::open(a.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::posix_fallocate(fd, 0, k_size), 0);
    ASSERT_EQ(::pwrite(fd, "head", 4, 0), 4);
    ASSERT_EQ(::pwrite(fd, "middle", 6, 32 << 20), 6);
    ::close(fd);
  }
  prefill_cache::copy_file(a, b);
  struct stat sb;
  ASSERT_EQ(::stat(b.c_str(), &sb), 0);
  EXPECT_EQ(sb.st_size, k_size);
  EXPECT_LT(sb.st_blocks * 512, 4 << 20);  // two pages written, not 64 MiB
  std::ifstream f(b);
  std::string head(4, 0), mid(6, 0);
  f.read(head.data(), 4);
  f.seekg(32 << 20);
  f.read(mid.data(), 6);
  EXPECT_EQ(head, "head");
  EXPECT_EQ(mid, "middle");
  ::unlink(a.c_str());
  ::unlink(b.c_str());
}

}  // namespace
}  // namespace pmindex::bench
