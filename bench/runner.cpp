// The run of one benchmark (see runner.hpp), as named steps over one
// `session` (the targets and what the steps share):
//   resolve         the index entry, the parallel-mode fallback, the label
//   open_targets    one index (shared, global-lock) or one per thread
//                   (instance), or PiBench trees from a plugin; fresh pools
//   prefill         T threads insert ids [0, n) (each a slice, scattered)
//   start_phase     per-thread generators for the phase's workload
//   run_phase       T threads: generate a batch (untimed), execute it (timed)
//   aggregate       per-op figures, throughput, the time series
//   check_records   record count = before + inserts - removes; check(); scan
//   time_recovery   (--recover, last phase) a crash and a dirty reopen, then
//                   a clean close and a clean reopen
// The timed loops themselves are in run_loop.hpp.
#include "runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <mutex>
#include <optional>

#include "null_index.hpp"
#include "prefill_cache.hpp"
#include "plugin.hpp"
#include "run_loop.hpp"
#include "scratch_pool.hpp"

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

using namespace detail;

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

void progress_line(const run_config& cfg, const char* phase, double frac, bool done) {
  if (!cfg.progress) return;
  if (done) {
    std::fprintf(stderr, "\r\033[K");
  } else {
    std::fprintf(stderr, "\r\033[K[%s %s] %s %3.0f%%", cfg.plugin.empty() ? cfg.index.c_str() : cfg.plugin_name.empty() ? "plugin" : cfg.plugin_name.c_str(),
                 cfg.w.name.c_str(), phase, frac * 100);
  }
  std::fflush(stderr);
}

// Waits while threads run, refreshing the progress line; in timed mode
// sets stop after cfg.seconds. Returns when every thread finished.
void supervise(const run_config& cfg, shared_state& s, size_t nthreads, const char* phase, uint64_t total_ops,
               bool timed) {
  // The first polls come soon (a small phase ends in a millisecond, and a
  // run of many cells would otherwise wait 25 ms for each); the times taken
  // are the threads' own, whenever this thread wakes.
  const int most_ms = timed && cfg.seconds < 0.5 ? 5 : 25;
  for (int wait_ms = 1;; wait_ms = std::min(2 * wait_ms, most_ms)) {
    if (s.finished.load() >= nthreads) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
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

// Full-scan record count, in key order, through scan() (either key kind).
uint64_t scan_count(index& idx, bool bytes) {
  uint64_t n = 0;
  if (bytes) {
    record_buffer buf;
    std::string from;
    for (;;) {
      buf.clear();
      size_t got = idx.scan(from, 1024, buf);
      n += got;
      if (got < 1024) break;
      from.assign(buf.key(got - 1));
      from.push_back('\0');  // the least key after it
    }
    return n;
  }
  std::vector<record> buf(1024);
  uint64_t from = 0;
  for (;;) {
    size_t got = idx.scan(from, buf.size(), buf.data());
    n += got;
    if (got < buf.size() || buf[got - 1].key == UINT64_MAX) break;
    from = buf[got - 1].key + 1;
  }
  return n;
}

// The same through a PiBench tree (records are <8-byte key><value>), or
// nothing when its records are not in the keys' byte order: a wrapper that
// reads the key bytes as a native integer (as several original authors' do)
// orders them otherwise, and its records cannot be counted this way.
std::optional<uint64_t> plugin_scan_count(tree_api& t, size_t value_size) {
  constexpr int k_chunk = 1000;
  uint64_t n = 0, from = 0;
  for (;;) {
    char kb[8];
    key_bytes(from, kb);
    char* out = nullptr;
    int got = t.scan(kb, 8, k_chunk, out);
    if (got <= 0 || !out) break;
    n += static_cast<uint64_t>(got);
    uint64_t last = 0;
    for (int i = 0; i < got; ++i) {
      const uint64_t k = key_from_bytes(out + static_cast<size_t>(i) * (8 + value_size), 8);
      if (k < from || (i > 0 && k <= last)) return std::nullopt;
      last = k;
    }
    if (got < k_chunk || last == UINT64_MAX) break;
    from = last + 1;
  }
  return n;
}

// One run_phases call. Pools are declared before indexes so that indexes
// close before their pools are removed.
struct session {
  run_config cfg;
  run_result base;  // label and notes every phase's result starts from
  std::shared_ptr<const index_entry> entry;
  bool use_plugin = false, file_mode = false, bytes = false, null_target = false;
  uint32_t T = 1, ninst = 1;
  uint64_t id_limit = UINT64_MAX;  // ids a key exists for (the dataset's size, the index's key limit)
  std::shared_ptr<const dataset> data;
  std::vector<scratch_pool> pools;
  std::vector<std::string> paths;
  std::vector<std::unique_ptr<index>> idx;
  std::unique_ptr<plugin> plug;
  std::vector<std::unique_ptr<tree_api>> trees;
  // Pool files a plugin made at the paths it was given (none was there
  // before): removed after the run, so that the next run of the same cell
  // (--repetitions) finds the path free, as a fresh PiBench process would.
  std::vector<std::string> plugin_made;
  global_lock global_mu;
  uint64_t lock_off = 0;  // --lock pool: the lock word's block in idx[0]'s pool
  std::vector<thread_ctx> ctx;
  shared_state s;
  key_map keys;
  prefill_ids ids{};
  std::vector<uint64_t> prior;  // records per instance before the phase
  uint64_t first_insert = 0;    // fresh ids of the phase start here
  double compares_before = -1;  // the indexes' key_compares total before the phase
  bool counts_compares = false;  // every index reported key_compares after the prefill
  const prefill_cache::image* restored = nullptr;  // --reuse-prefill: the kept load this cell runs on

  ~session() {
    if (lock_off) {
      global_mu.leave_pool();
      idx[0]->pool().free(lock_off);
    }
    idx.clear();
    trees.clear();
    for (auto& p : plugin_made) ::unlink(p.c_str());
  }

  template <class F>
  void with_target(uint32_t t, F&& f) {
    uint32_t inst = ninst == 1 ? 0 : t;
    if (use_plugin) {
      plugin_target tg{trees[inst].get(), cfg.parallel == parallel_mode::global_lock ? &global_mu : nullptr,
                       cfg.value_size, plug->counters()};
      f(tg);
    } else if (cfg.parallel == parallel_mode::global_lock) {
      locked_target tg{{idx[0].get()}, &global_mu};
      f(tg);
    } else {
      index_target tg{idx[inst].get()};
      f(tg);
    }
  }
};

void resolve(session& x, const run_config& in, const std::vector<workload>& phases) {
  if (phases.empty()) throw error(errc::usage, "no workload to run");
  if (in.threads == 0) throw error(errc::usage, "--threads must be at least 1");
  x.cfg = in;
  x.cfg.w = phases.front();
  auto& cfg = x.cfg;
  x.use_plugin = !cfg.plugin.empty();
  x.bytes = cfg.byte_path();
  if (cfg.prefill_sorted) {
    if (x.bytes) throw error(errc::usage, "--prefill-order sorted takes u64 keys with 8-byte values only");
    x.base.notes.push_back(cfg.threads > 1 ? "prefill: each thread inserted its slice in ascending key order"
                                           : "prefill: in ascending key order");
  }
  if (!x.use_plugin) {
    x.entry = find_index(cfg.index);
    if (!x.entry) throw error(errc::usage, "unknown index '" + cfg.index + "' (see `pmindex list`)");
    if (!x.entry->concurrent && cfg.threads > 1 && cfg.parallel == parallel_mode::shared) {
      cfg.parallel = parallel_mode::global_lock;
      x.base.notes.push_back(cfg.index + " is not thread-safe: ran with --parallel global-lock");
    }
    x.null_target = discards_records(*x.entry);
    x.base.label = cfg.index;
  } else {
    x.base.label = cfg.plugin_name.empty() ? "plugin:" + cfg.plugin : cfg.plugin_name;
  }
  // An index with a key limit takes the slot numbers below it: ids are
  // keys (the `slots` universe), fresh inserts stop at the limit.
  const uint64_t limit = x.entry ? key_limit(*x.entry, cfg.base.params) : 0;
  if (limit && cfg.universe != key_universe::slots) {
    if (cfg.dataset != "u64" && cfg.dataset != "u64-bytes")
      throw error(errc::usage, cfg.index + " takes integer keys below " + std::to_string(limit) +
                                   ": --dataset must be u64 or u64-bytes");
    cfg.universe = key_universe::slots;
    cfg.data = nullptr;
    x.base.notes.push_back(cfg.index + " takes keys below " + std::to_string(limit) +
                           ": keys are the ids (universe slots), fresh inserts stop there");
  }
  x.data = cfg.data ? cfg.data : std::shared_ptr<const dataset>(make_dataset(cfg.dataset, cfg.seed, cfg.universe));
  cfg.data = x.data;
  const uint64_t space = cfg.key_space ? cfg.key_space : cfg.records;
  if (space > x.data->size() || cfg.records > x.data->size())
    throw error(errc::usage, "dataset " + cfg.dataset + " holds " + std::to_string(x.data->size()) +
                                 " keys: fewer than --records / --key-space");
  x.id_limit = limit ? std::min(limit, x.data->size()) : x.data->size();
  if (space > x.id_limit)
    throw error(errc::usage, cfg.index + " takes keys below " + std::to_string(x.id_limit) +
                                 ": fewer than --records / --key-space (a larger --params capacity=N?)");
  x.T = cfg.threads;
  x.ninst = cfg.parallel == parallel_mode::instance ? x.T : 1;
  x.file_mode = cfg.base.mode != pm::mode::dram;
  x.keys = key_map(cfg.universe, key_salt(cfg.seed));
  x.ids = {cfg.records, space, mix64(cfg.seed ^ 0x7072656669ull), cfg.prefill_spread};
  if (cfg.range_threads)
    x.base.notes.push_back(std::to_string(cfg.range_threads) + " of " + std::to_string(cfg.threads) +
                           " threads ran only range queries of " + std::to_string(cfg.range_size) +
                           " records (the 'scan' row)");
}

// The index's parameters on the byte path: keys=bytes unless given.
std::string byte_params(const std::string& params) {
  if (params.find("keys=") != std::string::npos) return params;
  return params.empty() ? "keys=bytes" : params + ",keys=bytes";
}

// --reuse-prefill: whether this cell's load can be kept and reopened (a
// pmindex index in a pool file that a clean close leaves whole).
bool reusable(const session& x) {
  const auto& c = x.cfg;
  if (!c.reuse_prefill || x.use_plugin || !x.file_mode || x.null_target) return false;
  if (c.lock_in_pool && c.parallel == parallel_mode::global_lock) return false;  // the lock word is in the pool
  const auto m = c.base.mode.value_or(pm::mode::persist);
  return m == pm::mode::persist || m == pm::mode::eadr || m == pm::mode::tx;
}

// The prefill's identity: everything that shapes the loaded pool and the
// load's figures (not the workload, which runs after). A dataset is its
// name (a generated one is made from the seed and universe; a file's is its
// path) and size, not its object: run() makes a dataset per call.
std::string prefill_key(const session& x) {
  const auto& c = x.cfg;
  std::string k = c.index + '\n' + (x.bytes ? byte_params(c.base.params) : c.base.params) + '\n';
  for (uint64_t v : {uint64_t(c.base.mode.value_or(pm::mode::persist)), uint64_t(c.base.flush),
                     uint64_t(c.base.pm_write_ns), c.base.pool_size, c.records, c.key_space, c.seed,
                     uint64_t(c.universe), uint64_t(c.value_size), uint64_t(c.prefill_spread),
                     uint64_t(c.prefill_sorted), uint64_t(c.threads), uint64_t(c.parallel), uint64_t(c.pin),
                     uint64_t(x.data->size())})
    k += std::to_string(v) + ' ';
  return k + c.dataset;
}

// Opens (image: reopens the copy the cache just made) every instance.
void open_indexes(session& x, bool existing) {
  const auto& cfg = x.cfg;
  x.idx.clear();
  for (auto& path : x.paths) {
    options o = cfg.base;
    o.index = cfg.index;
    o.pool_path = path;
    o.open = existing ? pm::open_mode::must_exist : pm::open_mode::must_create;
    o.quiet = true;
    if (x.bytes) o.params = byte_params(o.params);
    x.idx.push_back(open(o));
    if (existing) prefill_cache::populate(path, x.idx.back()->pool().base(), x.idx.back()->pool().size());
  }
}

// Returns true when the cell's pools are a kept load (--reuse-prefill),
// copied to its paths and opened: no prefill to run.
bool open_targets(session& x) {
  const auto& cfg = x.cfg;
  bool restored = false;
  for (uint32_t i = 0; i < x.ninst; ++i) {
    std::string path = x.ninst == 1 ? cfg.base.pool_path : cfg.base.pool_path + "." + std::to_string(i);
    x.paths.push_back(path);
    if (x.use_plugin) {
      if (!x.plug) x.plug = std::make_unique<plugin>(cfg.plugin, cfg.abi);
      tree_options_t o;
      o.key_size = x.data->max_key();
      o.value_size = cfg.value_size;
      o.pool_path = path;
      o.pool_size = cfg.base.pool_size;
      o.num_threads = x.ninst == 1 ? x.T : 1;
      const bool existed = ::access(path.c_str(), F_OK) == 0;
      x.trees.push_back(x.plug->create(o));
      if (!existed && ::access(path.c_str(), F_OK) == 0) x.plugin_made.push_back(path);
      continue;
    }
    if (x.file_mode) x.pools.emplace_back(path);
  }
  if (!x.use_plugin) {
    if (reusable(x)) {
      x.restored = cfg.reuse_prefill->restore(prefill_key(x), x.paths);
      if (!x.restored) cfg.reuse_prefill->room_for_pool(x.paths.front(), cfg.base.pool_size * x.ninst);
    }
    restored = x.restored != nullptr;
    open_indexes(x, restored);
  }
  if (cfg.lock_in_pool && cfg.parallel == parallel_mode::global_lock) {
    if (x.use_plugin) throw error(errc::usage, "--lock pool needs a pmindex index (a plugin's pool is its own)");
    static_assert(sizeof(std::mutex) <= 64 && alignof(std::mutex) <= 64);
    x.lock_off = x.idx[0]->pool().alloc_or_throw(64);  // a line of its own
    x.global_mu.in_pool(x.idx[0]->pool().ptr<char>(x.lock_off));
    x.base.notes.push_back("global lock: a std::mutex in a line of the pool (--lock pool)");
  }
  x.ctx = std::vector<thread_ctx>(x.T);
  for (auto& c : x.ctx) {
    c.data = x.data.get();
    c.value_size = cfg.value_size;
  }
  return restored;
}

void prefill(session& x, run_result& r) {
  const uint64_t n = x.cfg.records;
  const uint32_t T = x.T, ninst = x.ninst;
  r.load_seconds = in_threads(
      x.cfg.pin, x.ctx, x.s,
      [&](uint32_t t, thread_ctx& c) {
        uint64_t lo = ninst > 1 ? 0 : n * t / T, hi = ninst > 1 ? n : n * (t + 1) / T;
        x.with_target(t, [&](auto& tg) {
          if (x.bytes) prefill_slice_bytes(tg, lo, hi, x.ids, c, x.s);
          else prefill_slice(tg, lo, hi, x.keys, x.ids, x.cfg.prefill_sorted, c, x.s);
        });
      },
      [&] { supervise(x.cfg, x.s, T, "prefill", n * ninst, false); });
  for (auto& c : x.ctx) {
    r.load_ok += c.load_ok;
    r.load_flushes += c.load_c.lines_flushed;
    r.load_fences += c.load_c.fences;
    r.load_allocs += c.load_c.allocs;
    r.load_busy_seconds = std::max(r.load_busy_seconds, c.load_busy);
  }
  if (!x.use_plugin) {
    r.have_space = true;
    x.counts_compares = true;
    for (auto& i : x.idx) {
      auto st = i->stats();
      bool counted = false;
      for (auto& e : st.extra) counted = counted || e.first == "key_compares";
      x.counts_compares = x.counts_compares && counted;
      r.space.records += st.records;
      r.space.pm_bytes_used += st.pm_bytes_used;
      r.space.pm_bytes_reserved += st.pm_bytes_reserved;
      r.space.dram_bytes += st.dram_bytes;
      r.space.alloc_dram_bytes += st.alloc_dram_bytes;
      if (r.space.extra.empty()) r.space.extra = st.extra;
    }
  }
  x.prior.assign(ninst, 0);
  for (uint32_t th = 0; th < T; ++th) x.prior[ninst == 1 ? 0 : th] += x.ctx[th].load_ok;
  x.first_insert = n;
}

// The load's figures of a result, as the run keeps them and the cache
// hands them to later cells.
void copy_load(const run_result& from, run_result& to) {
  to.load_seconds = from.load_seconds;
  to.load_busy_seconds = from.load_busy_seconds;
  to.load_ok = from.load_ok;
  to.load_flushes = from.load_flushes;
  to.load_fences = from.load_fences;
  to.load_allocs = from.load_allocs;
  to.have_space = from.have_space;
  to.space = from.space;
}

constexpr const char* k_reused_note =
    "--reuse-prefill: ran on the index reopened from a copy of its loaded pool (one load for the cells of the same "
    "prefill; the load's figures are that load's)";

// After a load with --reuse-prefill: close the indexes cleanly, keep their
// pools, and open a copy of them, so that this cell runs as the later ones
// will.
void keep_load(session& x, run_result& r) {
  if (!reusable(x)) return;
  for (auto& i : x.idx) i->close();
  x.idx.clear();
  run_result figures;
  copy_load(r, figures);
  const bool kept = x.cfg.reuse_prefill->keep(prefill_key(x), x.paths, figures, x.prior, x.counts_compares);
  open_indexes(x, true);
  if (kept) r.notes.push_back(k_reused_note);
  else r.notes.push_back("--reuse-prefill: no room for a copy of this load beside it: not kept, later cells load again");
}

// A kept load, copied and opened by open_targets: its figures.
void reuse_load(session& x, run_result& r) {
  const auto* m = x.restored;
  copy_load(m->loaded, r);
  x.prior = m->prior;
  x.first_insert = x.cfg.records;
  x.counts_compares = m->counts_compares;
  r.notes.push_back(k_reused_note);
}

// The indexes' running total of key comparisons, or -1 when they keep none.
// An index that did not count them after the prefill is not asked again:
// stats() may walk the whole index (seconds at 10M records).
double key_compares(session& x) {
  if (!x.counts_compares) return -1;
  double sum = 0;
  for (auto& i : x.idx) {
    bool found = false;
    for (auto& [k, v] : i->stats().extra)
      if (k == "key_compares") sum += v, found = true;
    if (!found) return -1;
  }
  return sum;
}

void start_phase(session& x, run_result& r, const workload& w) {
  auto& cfg = x.cfg;
  cfg.w = w;
  r.cfg = cfg;
  const double ns_per_tick = tsc_ns_per_tick();
  // Byte path batches hold their keys and values: about 32 MiB a thread.
  const size_t per_op = std::min<size_t>(x.data->max_key(), 256) + (x.bytes ? cfg.value_size : 0) + 32;
  const size_t batch = x.bytes ? std::clamp<size_t>((size_t{32} << 20) / per_op, 16, k_batch) : k_batch;
  for (uint32_t t = 0; t < x.T; ++t) {
    auto& c = x.ctx[t];
    for (auto& o : c.per) o = op_stats{};
    c.series.clear();
    c.done = 0;
    c.busy = c.cpu = 0;
    c.bad_values = 0;
    c.exhausted = false;
    c.id = t;
    op_generator::params p;
    p.w = cfg.w;
    p.keys = x.keys;
    p.prefill = cfg.records;
    p.key_space = cfg.key_space ? cfg.key_space : cfg.records;
    p.thread = t;
    p.nthreads = x.T;
    p.seed = cfg.seed;
    p.sample_every = cfg.sample_every;
    p.random_inserts = cfg.random_inserts;
    p.first_insert = x.first_insert;
    p.emit_ids = x.bytes;
    p.id_limit = x.id_limit;
    if (t + cfg.range_threads >= x.T) {  // a range-query thread
      p.w = workload{};
      p.w.name = "range";
      p.w.mix[0] = 0;
      p.w.mix[static_cast<unsigned>(op_type::scan)] = 1;
      p.w.scan_size = std::max<uint32_t>(cfg.range_size, 1);
    }
    c.gen = std::make_unique<op_generator>(p);
    c.batch_size = batch;
    c.batch.resize(batch);
    c.scanbuf.resize(std::max<uint32_t>(p.w.scan_size, 1));
    c.ns_per_tick = ns_per_tick;
    c.tsc_overhead = tsc_bracket_ticks();
    c.counted = cfg.ops > 0;
    c.budget = cfg.ops ? cfg.ops / x.T + (t < cfg.ops % x.T ? 1 : 0) : 0;
    c.series.reserve(cfg.ops ? 1024 : static_cast<size_t>(cfg.seconds * 1000 / std::max(1u, cfg.window_ms)) + 16);
  }
  x.s.window = std::chrono::milliseconds(std::max(1u, cfg.window_ms));
  x.compares_before = key_compares(x);
}

void run_phase(session& x, run_result& r) {
  const auto& cfg = x.cfg;
  r.wall_seconds = in_threads(
      cfg.pin, x.ctx, x.s,
      [&](uint32_t t, thread_ctx& c) {
        x.with_target(t, [&](auto& tg) {
          if (x.bytes) run_slice<true>(tg, c, x.s);
          else run_slice<false>(tg, c, x.s);
        });
      },
      [&] { supervise(cfg, x.s, x.T, "run", cfg.ops, cfg.ops == 0); });
}

void aggregate(session& x, run_result& r) {
  const uint32_t T = x.T;
  for (auto& c : x.ctx) {
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
    r.bad_values += c.bad_values;
    r.exhausted |= c.exhausted;
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
  const double wsec = std::max(1u, x.cfg.window_ms) / 1000.0;
  const size_t W = static_cast<size_t>(r.wall_seconds / wsec);
  std::vector<uint64_t> prev(T, 0);
  for (size_t w = 0; w < W; ++w) {
    uint64_t sum = 0;
    for (uint32_t t = 0; t < T; ++t) {
      uint64_t v = w < x.ctx[t].series.size() ? x.ctx[t].series[w] : x.ctx[t].done;
      sum += v - prev[t];
      prev[t] = v;
    }
    r.series_mops.push_back(static_cast<double>(sum) / wsec / 1e6);
  }
  if (x.compares_before >= 0 && r.all.done) {
    double after = key_compares(x);
    if (after >= 0) r.key_compares_per_op = (after - x.compares_before) / static_cast<double>(r.all.done);
  }
  if (r.exhausted)
    r.notes.push_back("the run ended early: fresh inserts used every key of dataset " + x.cfg.dataset + " (" +
                      std::to_string(x.id_limit) + ")");
}

void fail(run_result& r, const std::string& m) {
  r.failure = r.failed ? r.failure + "; " + m : m;
  r.failed = true;
}

// Returns each instance's expected record count after the phase.
std::vector<uint64_t> check_records(session& x, run_result& r) {
  const auto& cfg = x.cfg;
  const uint32_t T = x.T, ninst = x.ninst;
  const uint64_t n = cfg.records;
  const auto& ins = r.per_op[static_cast<unsigned>(op_type::insert)];
  const auto& rem = r.per_op[static_cast<unsigned>(op_type::remove)];
  // The null index stores nothing: its inserts "fail" by design.
  if (!x.null_target && r.load_ok != n * ninst)
    fail(r, "prefill: " + std::to_string(n * ninst - r.load_ok) + " of " + std::to_string(n * ninst) +
                " inserts of fresh keys failed");
  if (!x.null_target && !cfg.random_inserts && ins.ok != ins.done)
    fail(r, "run: " + std::to_string(ins.done - ins.ok) + " of " + std::to_string(ins.done) +
                " inserts of fresh keys failed");
  if (r.bad_values)
    fail(r, std::to_string(r.bad_values) + " lookups found a value the record never had");
  std::vector<uint64_t> expected(ninst);
  if (x.use_plugin) {
    uint64_t all = 0;
    for (auto v : x.prior) all += v;
    all = all + ins.ok - rem.ok;
    expected = {all};
    if (!cfg.check) return expected;
    // tree_api has no count: scan everything from the smallest key (keys
    // of 8 bytes only: a scan's records are <key><value> of fixed sizes).
    if (x.data->max_key() != 8) {
      r.notes.push_back("plugin: record count not checked (variable-length keys)");
      return expected;
    }
    uint64_t total = 0;
    bool scans = true, ordered = true;
    for (auto& t : x.trees) {
      const auto got = plugin_scan_count(*t, cfg.value_size);
      if (!got) {
        ordered = false;
        break;
      }
      if (*got == 0 && all > 0) scans = false;
      total += *got;
    }
    if (!ordered) {
      r.notes.push_back("plugin: record count not checked (its scan's records are not <key><value> in the keys' byte order)");
    } else if (!scans) {
      r.notes.push_back("plugin: record count not checked (its scan returns nothing)");
    } else {
      r.counted = r.scanned = true;
      r.expected_records = r.reported_records = all;
      r.scanned_records = total;
      if (total != all)
        fail(r, "record count mismatch: expected " + std::to_string(all) + ", a full scan finds " +
                    std::to_string(total));
    }
    return expected;
  }
  const auto per_inst = [&](uint32_t i, op_type t) {
    uint64_t v = 0;
    for (uint32_t th = 0; th < T; ++th)
      if (ninst == 1 || th == i) v += x.ctx[th].per[static_cast<unsigned>(t)].ok;
    return v;
  };
  r.counted = true;
  r.scanned = cfg.check && x.entry->ordered;  // an unordered index: the count it reports
  for (uint32_t i = 0; i < ninst; ++i) {
    expected[i] = x.prior[i] + per_inst(i, op_type::insert) - per_inst(i, op_type::remove);
    r.expected_records += expected[i];
    r.reported_records += x.idx[i]->stats().records;
    if (r.scanned) r.scanned_records += scan_count(*x.idx[i], x.bytes);
  }
  if (r.reported_records != r.expected_records || (r.scanned && r.scanned_records != r.expected_records))
    fail(r, "record count mismatch: expected " + std::to_string(r.expected_records) +
                " (prefill + inserts - removes), index reports " + std::to_string(r.reported_records) +
                (r.scanned ? ", a full scan finds " + std::to_string(r.scanned_records) : std::string()));
  if (cfg.check) {
    r.structure = "ok";
    for (auto& i : x.idx) {
      auto cr = i->check();
      if (!cr.ok) {
        r.structure = cr.message;
        fail(r, "check(): " + cr.message);
        break;
      }
    }
  }
  return expected;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void time_recovery(session& x, run_result& r, uint64_t expected0) {
  if (!x.file_mode) {
    r.notes.push_back("--recover needs a pool file: skipped in dram mode");
    return;
  }
  r.have_recovery = true;
  options o = x.cfg.base;
  o.index = x.cfg.index;
  o.pool_path = x.paths[0];
  o.open = pm::open_mode::must_exist;
  o.quiet = true;
  auto& idx = x.idx[0];
  if (x.lock_off) {  // the run is over: the lock word goes back before the crash and the reopens
    x.global_mu.leave_pool();
    idx->pool().free(x.lock_off);
    x.lock_off = 0;
  }
  // The crash comes first, so recovery sees what the run left: an index
  // with volatile state in flight (DPTree's unmerged log, pending frees) is
  // recovered from exactly that, not from what a clean close tidied up.
  idx->abandon();  // what a power failure leaves: no clean shutdown
  idx.reset();
  auto t0 = steady::now();
  double c0 = process_cpu_seconds();
  idx = open(o);
  const auto& rep = idx->report();
  r.dirty_open_seconds = secs(steady::now() - t0);
  r.dirty_open_cpu_seconds = process_cpu_seconds() - c0;
  r.dirty_recover_seconds = rep.recover_seconds;
  r.dirty_traced_blocks = rep.traced_blocks;
  if (rep.was_clean) r.notes.push_back("--recover: the reopen after abandon() found the pool clean");
  {
    auto st = idx->stats();
    r.records_after_recovery = st.records;
    r.dirty_index_stats = st.extra;
  }
  if (r.records_after_recovery != expected0)
    fail(r, "after recovery the index holds " + std::to_string(r.records_after_recovery) + " records, expected " +
                std::to_string(expected0));
  if (x.cfg.check) {
    auto cr = idx->check();
    if (!cr.ok) fail(r, "check() after recovery: " + cr.message);
  }
  // Then a clean shutdown and the clean reopen.
  idx->close();
  idx.reset();
  t0 = steady::now();
  c0 = process_cpu_seconds();
  idx = open(o);
  r.clean_open_seconds = secs(steady::now() - t0);
  r.clean_open_cpu_seconds = process_cpu_seconds() - c0;
}

}  // namespace

run_result run(const run_config& cfg) { return run_phases(cfg, {cfg.w}).front(); }

std::vector<run_result> run_phases(const run_config& cfg, const std::vector<workload>& phases) {
  session x;
  resolve(x, cfg, phases);
  run_result loaded = x.base;
  const auto setup0 = steady::now();
  if (open_targets(x)) {
    reuse_load(x, loaded);
  } else {
    prefill(x, loaded);
    keep_load(x, loaded);
  }
  loaded.setup_seconds = secs(steady::now() - setup0);
  std::vector<run_result> out;
  for (size_t ph = 0; ph < phases.size(); ++ph) {
    run_result r = loaded;  // each phase reports the prefill's load and space
    if (ph) {
      uint64_t recs = 0;
      for (auto v : x.prior) recs += v;
      r.notes.push_back("phase " + std::to_string(ph + 1) + " of " + std::to_string(phases.size()) +
                        ": ran on the index the previous phase left (" + std::to_string(recs) + " records)");
    }
    start_phase(x, r, phases[ph]);
    run_phase(x, r);
    aggregate(x, r);
    const auto check0 = steady::now();
    auto expected = check_records(x, r);
    r.check_seconds = secs(steady::now() - check0);
    if (x.cfg.recover && !x.use_plugin && ph + 1 == phases.size()) time_recovery(x, r, expected[0]);
    // The next phase: fresh ids past every id this one generated, and the
    // records this one left.
    uint64_t most = 0;
    for (auto& c : x.ctx) most = std::max(most, c.gen->inserts_generated());
    x.first_insert += most * x.T;
    x.prior = expected;
    r.cfg.data.reset();  // results do not keep a dataset alive
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace pmindex::bench
