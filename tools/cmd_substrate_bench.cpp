// pmindex substrate-bench: what the substrate itself costs on this machine.
//  1. allocation and free (ns/op) of the pool allocator against glibc
//     malloc/free, 1 and 2 threads, in the same run;
//  2. clean reopen and tracing recovery of a pool holding N blocks (default
//     10M): a bench-only layout, a root array of N offsets to 64-byte blocks,
//     so the figures are the substrate's (heap load, rebuild by tracing)
//     without any index's own repair; plus canary end to end (M keys);
//  3. store + persist of one line and of four lines per mode and flush
//     instruction (dram, volatile, persist clwb/clflushopt/clflush, eadr).
// Every figure is the median of --repeat runs; --json FILE writes them all.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "json.hpp"
#include "pmindex/error.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::cli {
namespace {

// Times are this thread's CPU time by default (--clock cpu): on a shared
// machine that leaves out the time the thread waits for a core, which wall
// time (--clock wall) includes. Page faults and flush stalls count in both.
bool g_wall_clock = false;
struct clock_type {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(g_wall_clock ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
};
double since(double t0) { return clock_type::now() - t0; }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct figure {
  std::string group, name;
  std::vector<double> samples;
  std::string unit;
};

struct pool_file {
  std::string path;
  explicit pool_file(const std::string& dir, const std::string& tag)
      : path(dir + "/pmindex-sbench-" + tag + "-" + std::to_string(::getpid()) + ".pool") {
    ::unlink(path.c_str());
  }
  ~pool_file() { ::unlink(path.c_str()); }
};

std::unique_ptr<pm::pool> open_pool(const std::string& path, uint64_t size, pm::mode m,
                                    pm::flush_kind k = pm::flush_kind::automatic) {
  pm::pool_options po;
  po.path = path;
  po.size = size;
  po.pm_mode = m;
  po.flush = k;
  po.quiet = true;
  po.index_name = "substrate-bench";
  return pm::pool::open(po);
}

// --- 1. allocation

// Each thread: `rounds` times allocate `n` blocks (alloc() also writes the
// block's first word, as any user does), then free them all. Returns {ns
// per alloc, ns per free}, averaged over threads, after one warm-up round.
template <class Alloc, class Free>
std::pair<double, double> alloc_free(unsigned threads, uint64_t n, int rounds, Alloc alloc, Free release) {
  std::vector<double> a_ns(threads), f_ns(threads);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::vector<uint64_t> blocks(n);
      double ta = 0, tf = 0;
      for (int r = -1; r < rounds; ++r) {  // round -1 warms up (page faults)
        if (r == 0) ta = tf = 0;
        auto t0 = clock_type::now();
        for (uint64_t i = 0; i < n; ++i) blocks[i] = alloc();
        ta += since(t0);
        if (std::find(blocks.begin(), blocks.end(), 0) != blocks.end()) std::abort();  // full: bench too big
        auto t1 = clock_type::now();
        for (uint64_t i = 0; i < n; ++i) release(blocks[i]);
        tf += since(t1);
      }
      a_ns[t] = ta * 1e9 / (double(n) * rounds);
      f_ns[t] = tf * 1e9 / (double(n) * rounds);
    });
  for (auto& t : ts) t.join();
  double a = 0, f = 0;
  for (unsigned t = 0; t < threads; ++t) a += a_ns[t], f += f_ns[t];
  return {a / threads, f / threads};
}

void bench_alloc(std::vector<figure>& out, const std::string& dir, int repeat, uint64_t per_thread) {
  // Keep glibc from giving memory back to the OS between rounds (and from
  // serving these sizes by mmap), so both allocators are measured warm.
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  for (size_t size : {64, 256, 1024, 4096}) {
    uint64_t n = std::min<uint64_t>(per_thread, (uint64_t{96} << 20) / size);
    for (unsigned threads : {1u, 2u}) {
      std::string tag = std::to_string(size) + "B " + std::to_string(threads) + "T";
      figure pa{"alloc", "pool alloc " + tag, {}, "ns/op"}, pf{"alloc", "pool free " + tag, {}, "ns/op"};
      figure pr{"alloc", "pool retire " + tag, {}, "ns/op"};
      figure ma{"alloc", "malloc " + tag, {}, "ns/op"}, mf{"alloc", "glibc free " + tag, {}, "ns/op"};
      for (int r = 0; r < repeat; ++r) {
        pool_file f(dir, "alloc");
        auto p = open_pool(f.path, uint64_t{512} << 20, pm::mode::persist);
        auto [a, fr] = alloc_free(
            threads, n, 3,
            [&] {
              uint64_t o = p->alloc(size);
              *p->ptr<volatile uint64_t>(o) = o;
              return o;
            },
            [&](uint64_t o) { p->free(o); });
        pa.samples.push_back(a);
        pf.samples.push_back(fr);
        auto [a2, rt] = alloc_free(
            threads, n, 1,
            [&] {
              uint64_t o = p->alloc(size);
              *p->ptr<volatile uint64_t>(o) = o;
              return o;
            },
            [&](uint64_t o) { p->retire(o); });
        (void)a2;
        pr.samples.push_back(rt);
        p->quiesce();
        p->close();
        auto [ma_ns, mf_ns] = alloc_free(
            threads, n, 3,
            [&] {
              void* m = std::malloc(size);
              *static_cast<volatile uint64_t*>(m) = size;
              return reinterpret_cast<uint64_t>(m);
            },
            [&](uint64_t o) { std::free(reinterpret_cast<void*>(o)); });
        ma.samples.push_back(ma_ns);
        mf.samples.push_back(mf_ns);
      }
      for (auto* fig : {&pa, &pf, &pr, &ma, &mf}) out.push_back(*fig);
    }
  }
}

// --- 2. reopen and recovery

void bench_reopen(std::vector<figure>& out, const std::string& dir, int repeat, uint64_t blocks,
                  uint64_t canary_keys) {
  pool_file f(dir, "reopen");
  const uint64_t array_bytes = blocks * 8;
  const uint64_t size = blocks * 64 + array_bytes + (uint64_t{128} << 20) + blocks * 64 / 100;
  {
    // Build with volatile mode (no flushes: only the layout matters here).
    auto p = open_pool(f.path, size, pm::mode::volatile_);
    uint64_t arr = p->alloc_or_throw(array_bytes + 64);
    auto* a = p->ptr<uint64_t>(arr);
    a[0] = blocks;
    for (uint64_t i = 0; i < blocks; ++i) {
      uint64_t b = p->alloc_or_throw(64);
      *p->ptr<uint64_t>(b) = i;
      a[i + 1] = b;
    }
    p->set_root(arr);
    p->close();
  }
  auto trace = [](pm::pool& p) {
    uint64_t arr = p.root();
    auto* a = p.ptr<uint64_t>(arr);
    uint64_t n = a[0];
    return p.rebuild_heap([&](pm::pool::trace_sink& s) {
      s.add(arr, n * 8 + 64);
      for (uint64_t i = 0; i < n; ++i) s.add(a[i + 1], 64);
    });
  };
  std::string tag = std::to_string(blocks) + " blocks";
  figure clean{"reopen", "clean reopen, " + tag, {}, "ms"}, dirty{"reopen", "dirty open (map only), " + tag, {}, "ms"};
  figure rec{"reopen", "tracing recovery, " + tag, {}, "ms"};
  for (int r = 0; r < repeat; ++r) {
    auto t0 = clock_type::now();
    auto p = open_pool(f.path, size, pm::mode::persist);
    clean.samples.push_back(since(t0) * 1e3);
    if (!p->was_clean()) throw error(errc::failure, "substrate-bench: the pool was not clean");
    p->abandon();
    auto t1 = clock_type::now();
    auto q = open_pool(f.path, size, pm::mode::persist);
    dirty.samples.push_back(since(t1) * 1e3);
    auto t2 = clock_type::now();
    uint64_t traced = trace(*q);
    rec.samples.push_back(since(t2) * 1e3);
    if (traced != blocks + 1 || q->usage().used_blocks != blocks + 1)
      throw error(errc::failure, "substrate-bench: tracing found " + std::to_string(traced) + " blocks");
    q->close();  // clean again for the next round
  }
  out.push_back(clean);
  out.push_back(dirty);
  out.push_back(rec);

  if (!canary_keys) return;
  pool_file g(dir, "canary");
  options o;
  o.index = "canary";
  o.pool_path = g.path;
  o.pool_size = canary_keys * 160 + (uint64_t{64} << 20);
  o.mode = pm::mode::volatile_;
  o.quiet = true;
  {
    auto idx = open(o);
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < canary_keys; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      idx->insert(x, i);
    }
    idx->close();
  }
  o.mode = pm::mode::persist;
  o.open = pm::open_mode::must_exist;
  std::string ctag = "canary " + std::to_string(canary_keys) + " keys";
  figure cc{"reopen", "clean reopen, " + ctag, {}, "ms"}, cr{"reopen", "dirty open: map + repair + trace, " + ctag, {}, "ms"};
  for (int r = 0; r < repeat; ++r) {
    auto t0 = clock_type::now();
    auto idx = open(o);
    cc.samples.push_back(since(t0) * 1e3);
    idx->abandon();
    idx.reset();
    auto t1 = clock_type::now();
    idx = open(o);
    cr.samples.push_back(since(t1) * 1e3);
    if (idx->report().was_clean) throw error(errc::failure, "substrate-bench: canary pool was clean");
    idx->close();
  }
  out.push_back(cc);
  out.push_back(cr);
}

// --- 3. flush + fence

struct persist_case {
  const char* name;
  pm::mode m;
  pm::flush_kind k;
};

void bench_persist(std::vector<figure>& out, const std::string& dir, int repeat) {
  const persist_case cases[] = {
      {"dram", pm::mode::dram, pm::flush_kind::automatic},
      {"volatile", pm::mode::volatile_, pm::flush_kind::automatic},
      {"persist clwb", pm::mode::persist, pm::flush_kind::clwb},
      {"persist clflushopt", pm::mode::persist, pm::flush_kind::clflushopt},
      {"persist clflush", pm::mode::persist, pm::flush_kind::clflush},
      {"eadr", pm::mode::eadr, pm::flush_kind::automatic},
  };
  const uint64_t region = 16 << 20;  // bigger than L2, so lines walk through memory
  for (auto& c : cases) {
    if (!pm::cpu_supports(c.k)) continue;
    figure one{"persist", std::string(c.name) + ", 1 line", {}, "ns/persist"};
    figure four{"persist", std::string(c.name) + ", 4 lines", {}, "ns/persist"};
    figure same{"persist", std::string(c.name) + ", same line again", {}, "ns/persist"};
    for (int r = 0; r < repeat; ++r) {
      pool_file f(dir, "persist");
      auto p = open_pool(f.path, region + (8 << 20), c.m, c.k);
      char* buf = p->ptr<char>(p->alloc_or_throw(region));
      std::memset(buf, 0, region);
      auto run = [&](uint64_t lines, uint64_t stride, uint64_t n) {
        auto t0 = clock_type::now();
        uint64_t off = 0;
        for (uint64_t i = 0; i < n; ++i) {
          for (uint64_t l = 0; l < lines; ++l) reinterpret_cast<volatile uint64_t*>(buf + off)[l * 8] = i;
          p->persist(buf + off, lines * 64);
          off = (off + stride) % region;
        }
        return since(t0) * 1e9 / double(n);
      };
      run(1, 64, 100000);  // warm up
      one.samples.push_back(run(1, 64, 1000000));
      four.samples.push_back(run(4, 256, 500000));
      same.samples.push_back(run(1, 0, 1000000));
    }
    out.push_back(one);
    out.push_back(four);
    out.push_back(same);
  }
}

void write_json(const std::string& file, const std::vector<figure>& figs, int repeat, uint64_t blocks) {
  char host[256] = "?";
  gethostname(host, sizeof host);
  // The machine may be shared: its load average goes with the figures.
  double load[3] = {0, 0, 0};
  getloadavg(load, 3);
  using bench::json::value;
  auto ctx = value::object();
  ctx["host"] = std::string(host);
  ctx["cpus"] = std::thread::hardware_concurrency();
  ctx["flush"] = std::string(pm::to_string(pm::best_flush()));
  ctx["repeat"] = repeat;
  ctx["blocks"] = blocks;
  ctx["loadavg_1min"] = load[0];
  ctx["clock"] = g_wall_clock ? "wall" : "thread-cpu";
  auto arr = value::array();
  for (auto& g : figs) {
    auto f = value::object();
    f["group"] = g.group;
    f["name"] = g.name;
    f["unit"] = g.unit;
    f["median"] = median(g.samples);
    auto s = value::array();
    for (double x : g.samples) s.push_back(x);
    f["samples"] = s;
    arr.push_back(f);
  }
  auto doc = value::object();
  doc["context"] = ctx;
  doc["figures"] = arr;
  std::ofstream out(file);
  out << bench::json::dump(doc);
  if (!out) throw error(errc::io, "cannot write " + file);
}

}  // namespace

int cmd_substrate_bench(args& a) {
  std::string json = a.str("json", "");
  std::string dir = a.str("dir", "/dev/shm");
  int repeat = static_cast<int>(a.u64("repeat", 5, 1, 1000));
  uint64_t blocks = a.u64("blocks", 10000000, 1, uint64_t{1} << 32);
  uint64_t canary_keys = a.u64("canary-keys", 1000000, 1, uint64_t{1} << 32);
  uint64_t alloc_n = a.u64("alloc-blocks", 200000, 1, uint64_t{1} << 32);
  std::string only = a.str("only", "alloc,reopen,persist");
  std::string clk = a.str("clock", "cpu");
  if (clk != "cpu" && clk != "wall") throw error(errc::usage, "--clock is cpu or wall");
  g_wall_clock = clk == "wall";
  a.finish();
  if (repeat < 1) throw error(errc::usage, "--repeat must be at least 1");
  std::vector<figure> figs;
  auto want = [&](const char* g) { return ("," + only + ",").find(std::string(",") + g + ",") != std::string::npos; };
  if (want("alloc")) bench_alloc(figs, dir, repeat, alloc_n);
  if (want("reopen")) bench_reopen(figs, dir, repeat, blocks, canary_keys);
  if (want("persist")) bench_persist(figs, dir, repeat);
  std::string group;
  for (auto& g : figs) {
    if (g.group != group) std::printf("\n%-48s %12s  %s\n", g.group.c_str(), "median", "unit (min..max)"), group = g.group;
    auto s = g.samples;
    std::sort(s.begin(), s.end());
    std::printf("  %-46s %12.2f  %s (%.2f..%.2f)\n", g.name.c_str(), median(g.samples), g.unit.c_str(), s.front(),
                s.back());
  }
  std::printf("\n(median of %d runs; %s time; pools in %s; flush instruction by default: %s)\n", repeat,
              g_wall_clock ? "wall" : "thread CPU", dir.c_str(), std::string(pm::to_string(pm::best_flush())).c_str());
  if (!json.empty()) write_json(json, figs, repeat, blocks);
  return 0;
}

}  // namespace pmindex::cli
