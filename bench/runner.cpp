// The run of one benchmark (see runner.hpp). Structure:
//   setup      targets: one index (shared, global-lock) or one per thread
//              (instance), or PiBench trees from a plugin; fresh pools
//   prefill    T threads insert ids [0, n) (each a slice, in scattered order)
//   run        T threads: generate a batch (untimed), execute it (timed)
//   check      record count = prefill + inserts - removes; check(); scan
//   recover    (--recover) clean reopen, then abandon + dirty reopen
#include "runner.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <x86intrin.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

#include "plugin.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/counters.hpp"
#include "scratch_pool.hpp"
#include "targets.hpp"

namespace pmindex::bench {

std::string_view to_string(parallel_mode p) noexcept {
  switch (p) {
    case parallel_mode::shared: return "shared";
    case parallel_mode::instance: return "instance";
    case parallel_mode::global_lock: return "global-lock";
  }
  return "?";
}

namespace {

using steady = std::chrono::steady_clock;
constexpr size_t k_batch = 16384;       // ops generated per untimed step
constexpr size_t k_check_every = 256;   // ops between stop/window checks (power of 2)

double secs(steady::duration d) { return std::chrono::duration<double>(d).count(); }

// This thread's CPU time: on a machine shared with other work, ops per CPU
// second is steadier than ops per wall second (preemption is not counted).
double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct shared_state {
  std::atomic<uint32_t> ready{0};
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> progress{0};  // ops done (approximate, for the progress line)
  std::atomic<uint32_t> finished{0};
  steady::time_point start;
  steady::duration window{};
};

struct alignas(64) thread_ctx {
  uint32_t id = 0;
  std::unique_ptr<op_generator> gen;
  std::vector<op> batch;
  std::vector<record> scanbuf;
  op_stats per[k_nops];
  double ns_per_tick = 1;
  uint64_t tsc_overhead = 0;  // ticks an empty bracket measures (subtracted)
  std::vector<uint64_t> series;  // ops done at each window end
  uint64_t done = 0;
  double busy = 0;
  double cpu = 0;         // thread CPU time inside the timed sections
  steady::time_point end;  // when this thread finished its phase
  bool counted = false;   // count mode (--ops): run `budget` ops, not until stop
  uint64_t budget = 0;    // count mode: this thread's ops
  uint64_t load_ok = 0;
  pm::counters load_c;
  std::string error;
};

void pin_to(uint32_t t) {
  unsigned n = std::thread::hardware_concurrency();
  if (!n) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(t % n, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// A stride coprime with m: visiting lo + (j * step) % m for j < m touches
// every id once in a scattered order (so dense keys are not inserted sorted).
uint64_t coprime_step(uint64_t m) {
  if (m < 3) return 1;
  uint64_t s = static_cast<uint64_t>(static_cast<double>(m) * 0.6180339887) | 1;
  while (std::gcd(s, m) != 1) s += 2;
  return s % m ? s % m : 1;
}

// The id the prefill's i-th record takes: i itself, or (spread) a random
// id of the i-th of n equal slices of [0, space): distinct, and with
// space = 2n a random half of the ids.
struct prefill_ids {
  uint64_t n, space, seed;
  bool spread;
  uint64_t operator()(uint64_t i) const noexcept {
    if (!spread) return i;
    auto lo = static_cast<uint64_t>(static_cast<unsigned __int128>(i) * space / n);
    auto hi = static_cast<uint64_t>(static_cast<unsigned __int128>(i + 1) * space / n);
    return lo + mix64(i ^ seed) % (hi - lo);
  }
};

template <class T>
void prefill_slice(T& tgt, uint64_t lo, uint64_t hi, const key_map& keys, const prefill_ids& ids, thread_ctx& c,
                   shared_state& s) {
  const uint64_t m = hi - lo, step = coprime_step(m);
  auto c0 = pm::thread_counters();
  uint64_t pos = 0, ok = 0;
  for (uint64_t j = 0; j < m; ++j) {
    uint64_t k = keys(ids(lo + pos));
    ok += tgt.insert(k, value_of(k));
    pos += step;
    if (pos >= m) pos -= m;
    if ((j & 4095) == 4095) s.progress.fetch_add(4096, std::memory_order_relaxed);
  }
  c.load_ok = ok;
  c.load_c = pm::thread_counters() - c0;
}

// TSC reads that bracket the operation: rdtsc alone is not ordered with
// the loads before and after it, so a pointer chase still in flight could
// end after the second read (latencies far too short). lfence before the
// first read and rdtscp + lfence at the end keep the operation inside.
inline uint64_t tsc_begin() noexcept {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}
inline uint64_t tsc_end() noexcept {
  unsigned aux;
  uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}

template <class T>
inline void exec(T& tgt, const op& o, uint64_t seq, thread_ctx& c) {
  op_stats& st = c.per[static_cast<unsigned>(o.type)];
  const pm::counters& tc = pm::t_counters;
  const uint64_t f0 = tc.lines_flushed, e0 = tc.fences, a0 = tc.allocs;
  const uint64_t t0 = o.sampled ? tsc_begin() : 0;
  bool ok = false;
  switch (o.type) {
    case op_type::read: ok = tgt.read(o.key); break;
    case op_type::insert: ok = tgt.insert(o.key, value_of(o.key)); break;
    case op_type::update: ok = tgt.update(o.key, o.key + seq); break;
    case op_type::remove: ok = tgt.remove(o.key); break;
    case op_type::scan: ok = tgt.scan(o.key, o.len, c.scanbuf.data()) > 0; break;
    case op_type::rmw: ok = tgt.rmw(o.key, seq); break;
  }
  if (o.sampled) {
    uint64_t d = tsc_end() - t0;
    d = d > c.tsc_overhead ? d - c.tsc_overhead : 0;
    st.lat.record(static_cast<uint64_t>(static_cast<double>(d) * c.ns_per_tick));
  }
  ++st.done;
  st.ok += ok;
  st.flushes += tc.lines_flushed - f0;
  st.fences += tc.fences - e0;
  st.allocs += tc.allocs - a0;
}

template <class T>
void run_slice(T& tgt, thread_ctx& c, shared_state& s) {
  auto next_window = s.start + s.window;
  uint64_t done = 0;
  double busy = 0, cpu = 0;
  while (!s.stop.load(std::memory_order_relaxed) && (!c.counted || done < c.budget)) {
    size_t n = k_batch;
    if (c.counted && c.budget - done < n) n = static_cast<size_t>(c.budget - done);
    c.gen->fill(c.batch.data(), n);  // untimed
    const double c0 = thread_cpu_seconds();
    auto t0 = steady::now();
    size_t i = 0;
    for (; i < n; ++i) {
      if ((i & (k_check_every - 1)) == 0 && i) {
        if (s.stop.load(std::memory_order_relaxed)) break;
        auto now = steady::now();
        while (now >= next_window) {
          c.series.push_back(done + i);
          next_window += s.window;
        }
      }
      exec(tgt, c.batch[i], done + i, c);
    }
    busy += secs(steady::now() - t0);
    cpu += thread_cpu_seconds() - c0;
    done += i;
    s.progress.fetch_add(i, std::memory_order_relaxed);
  }
  c.done = done;
  c.busy = busy;
  c.cpu = cpu;
}

// Starts T threads running body(t, ctx) after a common go; returns when all
// finished, with the seconds from the go to the last thread's end. The
// caller's `during` runs on this thread meanwhile (timer, progress line).
template <class Body, class During>
double in_threads(run_config const& cfg, std::vector<thread_ctx>& ctx, shared_state& s, Body body, During during) {
  s.ready = 0;
  s.go = false;
  s.stop = false;
  s.progress = 0;
  s.finished = 0;
  std::vector<std::thread> th;
  th.reserve(ctx.size());
  for (uint32_t t = 0; t < ctx.size(); ++t)
    th.emplace_back([&, t] {
      if (cfg.pin) pin_to(t);
      s.ready.fetch_add(1);
      while (!s.go.load(std::memory_order_acquire)) std::this_thread::yield();
      try {
        body(t, ctx[t]);
      } catch (const std::exception& e) {
        ctx[t].error = e.what();
        s.stop = true;
      }
      ctx[t].end = steady::now();
      s.finished.fetch_add(1);
    });
  while (s.ready.load() < ctx.size()) std::this_thread::yield();
  s.start = steady::now();
  s.go.store(true, std::memory_order_release);
  during();
  for (auto& t : th) t.join();
  auto last = s.start;
  for (auto& c : ctx) {
    if (!c.error.empty()) throw error(errc::failure, "benchmark thread failed: " + c.error);
    last = std::max(last, c.end);
  }
  return secs(last - s.start);  // start to the last thread's end
}

void progress_line(const run_config& cfg, const char* phase, double frac, bool done) {
  if (!cfg.progress) return;
  if (done) {
    std::fprintf(stderr, "\r\033[K");
  } else {
    std::fprintf(stderr, "\r\033[K[%s %s] %s %3.0f%%", cfg.plugin.empty() ? cfg.index.c_str() : "plugin",
                 cfg.w.name.c_str(), phase, frac * 100);
  }
  std::fflush(stderr);
}

// Waits while threads run, refreshing the progress line; in timed mode
// sets stop after cfg.seconds. Returns when every thread finished.
void supervise(const run_config& cfg, shared_state& s, size_t nthreads, const char* phase, uint64_t total_ops,
               bool timed) {
  for (;;) {
    if (s.finished.load() >= nthreads) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(timed && cfg.seconds < 0.5 ? 5 : 25));
    double el = secs(steady::now() - s.start);
    if (timed) {
      progress_line(cfg, phase, std::min(1.0, el / cfg.seconds), false);
      if (el >= cfg.seconds) s.stop = true;
    } else {
      uint64_t p = s.progress.load(std::memory_order_relaxed);
      progress_line(cfg, phase, total_ops ? std::min(1.0, double(p) / double(total_ops)) : 1.0, false);
    }
  }
  progress_line(cfg, phase, 1, true);
}

// Full-scan record count, in key order, through scan().
uint64_t scan_count(index& idx) {
  std::vector<record> buf(1024);
  uint64_t n = 0, from = 0;
  for (;;) {
    size_t got = idx.scan(from, buf.size(), buf.data());
    n += got;
    if (got < buf.size() || buf[got - 1].key == UINT64_MAX) break;
    from = buf[got - 1].key + 1;
  }
  return n;
}

// The same through a PiBench tree (records are <8-byte key><8-byte value>).
uint64_t plugin_scan_count(tree_api& t) {
  constexpr int k_chunk = 1000;
  uint64_t n = 0, from = 0;
  for (;;) {
    char kb[8];
    key_bytes(from, kb);
    char* out = nullptr;
    int got = t.scan(kb, 8, k_chunk, out);
    if (got <= 0 || !out) break;
    n += static_cast<uint64_t>(got);
    uint64_t last = key_from_bytes(out + static_cast<size_t>(got - 1) * 16, 8);
    if (got < k_chunk || last == UINT64_MAX) break;
    from = last + 1;
  }
  return n;
}

double tsc_ns_per_tick() {
  static const double v = [] {
    auto t0 = steady::now();
    uint64_t c0 = __rdtsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uint64_t c1 = __rdtsc();
    double ns = std::chrono::duration<double, std::nano>(steady::now() - t0).count();
    return ns / static_cast<double>(c1 - c0);
  }();
  return v;
}

// What the fenced TSC bracket itself measures around nothing: the least of
// many tries, subtracted from every sample so latencies are the operation's.
uint64_t tsc_bracket_ticks() {
  static const uint64_t v = [] {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 10000; ++i) {
      uint64_t t0 = tsc_begin();
      best = std::min(best, tsc_end() - t0);
    }
    return best;
  }();
  return v;
}

}  // namespace

run_result run(const run_config& cfg) { return run_phases(cfg, {cfg.w}).front(); }

std::vector<run_result> run_phases(const run_config& cfg_in, const std::vector<workload>& phases) {
  if (phases.empty()) throw error(errc::usage, "no workload to run");
  run_config cfg = cfg_in;
  cfg.w = phases.front();
  run_result r;
  const bool use_plugin = !cfg.plugin.empty();
  if (cfg.threads == 0) throw error(errc::usage, "--threads must be at least 1");
  std::shared_ptr<const index_entry> entry;
  if (!use_plugin) {
    entry = find_index(cfg.index);
    if (!entry) throw error(errc::usage, "unknown index '" + cfg.index + "' (see `pmindex list`)");
    if (!entry->concurrent && cfg.threads > 1 && cfg.parallel == parallel_mode::shared) {
      cfg.parallel = parallel_mode::global_lock;
      r.notes.push_back(cfg.index + " is not thread-safe: ran with --parallel global-lock");
    }
  }
  if (use_plugin) {
    std::string f = cfg.plugin.substr(cfg.plugin.find_last_of('/') + 1);
    if (f.rfind("lib", 0) == 0) f = f.substr(3);
    if (f.size() > 3 && f.compare(f.size() - 3, 3, ".so") == 0) f.resize(f.size() - 3);
    r.label = "plugin:" + f;
  } else {
    r.label = cfg.index;
  }
  const uint32_t T = cfg.threads;
  const uint32_t ninst = cfg.parallel == parallel_mode::instance ? T : 1;
  const bool file_mode = cfg.base.mode != pm::mode::dram;
  const bool is_null = !use_plugin && cfg.index == "null";

  // --- setup (pools before indexes: indexes close before pools are removed)
  std::vector<scratch_pool> pools;
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<index>> idx;
  std::unique_ptr<plugin> plug;
  std::vector<std::unique_ptr<tree_api>> trees;
  std::mutex global_mu;
  for (uint32_t i = 0; i < ninst; ++i) {
    std::string path = ninst == 1 ? cfg.base.pool_path : cfg.base.pool_path + "." + std::to_string(i);
    paths.push_back(path);
    if (use_plugin) {
      if (!plug) plug = std::make_unique<plugin>(cfg.plugin);
      tree_options_t o;
      o.key_size = 8;
      o.value_size = 8;
      o.pool_path = path;
      o.pool_size = cfg.base.pool_size;
      o.num_threads = ninst == 1 ? T : 1;
      trees.push_back(plug->create(o));
      continue;
    }
    if (file_mode) pools.emplace_back(path);
    options o = cfg.base;
    o.index = cfg.index;
    o.pool_path = path;
    o.open = pm::open_mode::must_create;
    o.quiet = true;
    idx.push_back(open(o));
  }
  r.cfg = cfg;
  if (cfg.range_threads)
    r.notes.push_back(std::to_string(cfg.range_threads) + " of " + std::to_string(cfg.threads) +
                      " threads ran only range queries of " + std::to_string(cfg.range_size) +
                      " records (the 'scan' row)");

  auto with_target = [&](uint32_t t, auto&& f) {
    uint32_t inst = ninst == 1 ? 0 : t;
    if (use_plugin) {
      plugin_target tg{trees[inst].get(), cfg.parallel == parallel_mode::global_lock ? &global_mu : nullptr};
      f(tg);
    } else if (cfg.parallel == parallel_mode::global_lock) {
      locked_target tg{{idx[0].get()}, &global_mu};
      f(tg);
    } else {
      index_target tg{idx[inst].get()};
      f(tg);
    }
  };

  const key_map keys(cfg.universe, mix64(cfg.seed ^ 0x6B657973ull));
  std::vector<thread_ctx> ctx(T);
  shared_state s;

  // --- prefill
  const uint64_t n = cfg.records;
  const prefill_ids ids{n, cfg.key_space ? cfg.key_space : n, mix64(cfg.seed ^ 0x7072656669ull), cfg.prefill_spread};
  r.load_seconds = in_threads(
      cfg, ctx, s,
      [&](uint32_t t, thread_ctx& c) {
        uint64_t lo = ninst > 1 ? 0 : n * t / T, hi = ninst > 1 ? n : n * (t + 1) / T;
        with_target(t, [&](auto& tg) { prefill_slice(tg, lo, hi, keys, ids, c, s); });
      },
      [&] { supervise(cfg, s, T, "prefill", n * ninst, false); });
  for (auto& c : ctx) {
    r.load_ok += c.load_ok;
    r.load_flushes += c.load_c.lines_flushed;
    r.load_fences += c.load_c.fences;
    r.load_allocs += c.load_c.allocs;
  }
  if (!use_plugin) {
    r.have_space = true;
    for (auto& x : idx) {
      auto st = x->stats();
      r.space.records += st.records;
      r.space.pm_bytes_used += st.pm_bytes_used;
      r.space.pm_bytes_reserved += st.pm_bytes_reserved;
      r.space.dram_bytes += st.dram_bytes;
      if (r.space.extra.empty()) r.space.extra = st.extra;
    }
  }

  // --- run phases
  const double ns_per_tick = tsc_ns_per_tick();
  std::vector<run_result> out;
  std::vector<uint64_t> prior(ninst, 0);  // records per instance before the phase
  for (uint32_t th = 0; th < T; ++th) prior[ninst == 1 ? 0 : th] += ctx[th].load_ok;
  uint64_t first_insert = n;  // fresh ids of the phase start here
  const run_result loaded = r;
  for (size_t ph = 0; ph < phases.size(); ++ph) {
    run_result r = loaded;  // the phase's result: load and space as measured after the prefill
    cfg.w = phases[ph];
    r.cfg = cfg;
    if (ph) {
      uint64_t recs = 0;
      for (auto v : prior) recs += v;
      r.notes.push_back("phase " + std::to_string(ph + 1) + " of " + std::to_string(phases.size()) +
                        ": ran on the index the previous phase left (" + std::to_string(recs) + " records)");
    }
    for (auto& c : ctx) {
      for (auto& x : c.per) x = op_stats{};
      c.series.clear();
      c.done = 0;
      c.busy = c.cpu = 0;
    }
    for (uint32_t t = 0; t < T; ++t) {
      auto& c = ctx[t];
      c.id = t;
      op_generator::params p;
      p.w = cfg.w;
      p.keys = keys;
      p.prefill = n;
      p.key_space = cfg.key_space ? cfg.key_space : n;
      p.thread = t;
      p.nthreads = T;
      p.seed = cfg.seed;
      p.sample_every = cfg.sample_every;
      p.random_inserts = cfg.random_inserts;
      p.first_insert = first_insert;
      if (t + cfg.range_threads >= T) {  // a range-query thread
        p.w = workload{};
        p.w.name = "range";
        p.w.mix[0] = 0;
        p.w.mix[static_cast<unsigned>(op_type::scan)] = 1;
        p.w.scan_size = std::max<uint32_t>(cfg.range_size, 1);
      }
      c.gen = std::make_unique<op_generator>(p);
      c.batch.resize(k_batch);
      c.scanbuf.resize(std::max<uint32_t>(p.w.scan_size, 1));
      c.ns_per_tick = ns_per_tick;
      c.tsc_overhead = tsc_bracket_ticks();
      c.counted = cfg.ops > 0;
      c.budget = cfg.ops ? cfg.ops / T + (t < cfg.ops % T ? 1 : 0) : 0;
      c.series.reserve(cfg.ops ? 1024 : static_cast<size_t>(cfg.seconds * 1000 / std::max(1u, cfg.window_ms)) + 16);
    }
    s.window = std::chrono::milliseconds(std::max(1u, cfg.window_ms));
    r.wall_seconds = in_threads(
        cfg, ctx, s,
        [&](uint32_t t, thread_ctx& c) { with_target(t, [&](auto& tg) { run_slice(tg, c, s); }); },
        [&] { supervise(cfg, s, T, "run", cfg.ops, cfg.ops == 0); });

    for (auto& c : ctx) {
      uint64_t ok = 0;
      for (unsigned i = 0; i < k_nops; ++i) {
        auto& a = r.per_op[i];
        auto& b = c.per[i];
        a.done += b.done;
        a.ok += b.ok;
        a.flushes += b.flushes;
        a.fences += b.fences;
        a.allocs += b.allocs;
        a.lat.merge(b.lat);
        ok += b.ok;
      }
      r.busy_seconds += c.busy / T;
      r.cpu_seconds += c.cpu / T;
      if (c.cpu > 0) r.mops_cpu += static_cast<double>(c.done) / c.cpu / 1e6;
      if (c.busy > 0) {
        r.mops += static_cast<double>(c.done) / c.busy / 1e6;
        r.mops_ok += static_cast<double>(ok) / c.busy / 1e6;
      }
    }
    for (auto& a : r.per_op) {
      r.all.done += a.done;
      r.all.ok += a.ok;
      r.all.flushes += a.flushes;
      r.all.fences += a.fences;
      r.all.allocs += a.allocs;
      r.all.lat.merge(a.lat);
    }
    {
      const double wsec = std::max(1u, cfg.window_ms) / 1000.0;
      const size_t W = static_cast<size_t>(r.wall_seconds / wsec);
      std::vector<uint64_t> prev(T, 0);
      for (size_t w = 0; w < W; ++w) {
        uint64_t sum = 0;
        for (uint32_t t = 0; t < T; ++t) {
          uint64_t v = w < ctx[t].series.size() ? ctx[t].series[w] : ctx[t].done;
          sum += v - prev[t];
          prev[t] = v;
        }
        r.series_mops.push_back(static_cast<double>(sum) / wsec / 1e6);
      }
    }

    // --- checks: every record accounted for
    auto per_inst = [&](uint32_t i, op_type t, bool ok) {
      uint64_t v = 0;
      for (uint32_t th = 0; th < T; ++th)
        if (ninst == 1 || th == i) v += ok ? ctx[th].per[static_cast<unsigned>(t)].ok : ctx[th].per[static_cast<unsigned>(t)].done;
      return v;
    };
    auto fail = [&](std::string m) {
      if (!r.failed) r.failure = m;
      else r.failure += "; " + m;
      r.failed = true;
    };
    if (!is_null && r.load_ok != n * ninst)
      fail("prefill: " + std::to_string(n * ninst - r.load_ok) + " of " + std::to_string(n * ninst) +
           " inserts of fresh keys failed");
    {
      const auto& ins = r.per_op[static_cast<unsigned>(op_type::insert)];
      if (!is_null && !cfg.random_inserts && ins.ok != ins.done)
        fail("run: " + std::to_string(ins.done - ins.ok) + " of " + std::to_string(ins.done) +
             " inserts of fresh keys failed");
    }
    std::vector<uint64_t> expected(ninst);
    if (!use_plugin) {
      r.counted = true;
      r.scanned = cfg.check;
      for (uint32_t i = 0; i < ninst; ++i) {
        expected[i] = prior[i] + per_inst(i, op_type::insert, true) - per_inst(i, op_type::remove, true);
        r.expected_records += expected[i];
        auto st = idx[i]->stats();
        r.reported_records += st.records;
        if (cfg.check) r.scanned_records += scan_count(*idx[i]);
      }
      if (r.reported_records != r.expected_records || (cfg.check && r.scanned_records != r.expected_records))
        fail("record count mismatch: expected " + std::to_string(r.expected_records) + " (prefill + inserts - removes), index reports " +
             std::to_string(r.reported_records) +
             (cfg.check ? ", a full scan finds " + std::to_string(r.scanned_records) : std::string()));
      if (cfg.check) {
        r.structure = "ok";
        for (auto& x : idx) {
          auto cr = x->check();
          if (!cr.ok) {
            r.structure = cr.message;
            fail("check(): " + cr.message);
            break;
          }
        }
      }
    } else if (cfg.check) {
      // tree_api has no count: scan everything from the smallest key.
      uint64_t expected_all = std::accumulate(prior.begin(), prior.end(), uint64_t{0}) + r.per_op[static_cast<unsigned>(op_type::insert)].ok -
                              r.per_op[static_cast<unsigned>(op_type::remove)].ok;
      uint64_t total = 0;
      bool scans = true;
      for (auto& t : trees) {
        uint64_t got = plugin_scan_count(*t);
        if (got == 0 && expected_all > 0) scans = false;
        total += got;
      }
      if (!scans) {
        r.notes.push_back("plugin: record count not checked (its scan returns nothing)");
      } else {
        r.counted = r.scanned = true;
        r.expected_records = r.reported_records = expected_all;
        r.scanned_records = total;
        if (total != expected_all)
          fail("record count mismatch: expected " + std::to_string(expected_all) + ", a full scan finds " +
               std::to_string(total));
      }
    }

    // --- recovery (after the last phase): clean reopen, then a simulated
    // crash and a dirty reopen
    if (cfg.recover && !use_plugin && ph + 1 == phases.size()) {
      if (!file_mode) {
        r.notes.push_back("--recover needs a pool file: skipped in dram mode");
      } else {
        r.have_recovery = true;
        options o = cfg.base;
        o.index = cfg.index;
        o.pool_path = paths[0];
        o.open = pm::open_mode::must_exist;
        o.quiet = true;
        idx[0]->close();
        idx[0].reset();
        auto t0 = steady::now();
        idx[0] = open(o);
        r.clean_open_seconds = secs(steady::now() - t0);
        idx[0]->abandon();  // what a power failure leaves: no clean shutdown
        idx[0].reset();
        t0 = steady::now();
        idx[0] = open(o);
        double total = secs(steady::now() - t0);
        auto& rep = idx[0]->report();
        r.dirty_open_seconds = total;
        r.dirty_recover_seconds = rep.recover_seconds;
        r.dirty_traced_blocks = rep.traced_blocks;
        if (rep.was_clean) r.notes.push_back("--recover: the reopen after abandon() found the pool clean");
        r.records_after_recovery = idx[0]->stats().records;
        if (r.records_after_recovery != expected[0])
          fail("after recovery the index holds " + std::to_string(r.records_after_recovery) + " records, expected " +
               std::to_string(expected[0]));
        if (cfg.check) {
          auto cr = idx[0]->check();
          if (!cr.ok) fail("check() after recovery: " + cr.message);
        }
      }
    }
    // The next phase: fresh ids past every id this one generated, and the
    // records this one left.
    uint64_t most = 0;
    for (auto& c : ctx) most = std::max(most, c.gen->inserts_generated());
    first_insert += most * T;
    if (!use_plugin)
      prior = expected;
    else
      prior = {std::accumulate(prior.begin(), prior.end(), uint64_t{0}) + r.per_op[unsigned(op_type::insert)].ok -
               r.per_op[unsigned(op_type::remove)].ok};
    out.push_back(std::move(r));
  }
  for (auto& x : idx) x.reset();
  trees.clear();
  return out;
}

}  // namespace pmindex::bench
