// pmindex bench: the harness (bench/). Runs every selected index on every
// selected workload and prints one table; --json / --csv write the figures.
// See docs/bench.md for the options and the meaning of every output field.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "bench_pmemids.hpp"
#include "commands.hpp"
#include "null_index.hpp"
#include "plan.hpp"
#include "prefill_cache.hpp"
#include "repeat.hpp"
#include "pmindex/error.hpp"
#include "report.hpp"
#include "runner.hpp"
#include "sysinfo.hpp"

namespace pmindex::cli {

namespace json = bench::json;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) v.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) v.push_back(cur);
  return v;
}

// A PiBench wrapper of --plugin: its cell's name, its rows' label (NAME, or
// plugin:FILE), its file and its tree_api layout.
struct plugin_item {
  std::string name, label, path;
  bench::plugin_abi abi = bench::plugin_abi::master;
};

// --plugin [NAME=]PATH[,...] and --plugin-abi A[,...] (one for all, or one
// per wrapper). A lone PATH keeps the cell name "plugin"; among several, a
// PATH without a NAME is named by its file (plugin:FILE).
std::vector<plugin_item> parse_plugins(const std::string& arg, const std::string& abi_arg) {
  std::vector<bench::plugin_abi> abis;
  for (auto& x : split(abi_arg)) {
    if (x == "bulk") abis.push_back(bench::plugin_abi::bulk);
    else if (x == "master") abis.push_back(bench::plugin_abi::master);
    else throw error(errc::usage, "unknown --plugin-abi '" + x + "' (master, bulk)");
  }
  if (abis.empty()) throw error(errc::usage, "unknown --plugin-abi '" + abi_arg + "' (master, bulk)");
  std::vector<plugin_item> v;
  const auto items = split(arg);
  for (auto& it : items) {
    plugin_item p;
    const size_t eq = it.find('=');
    if (eq != std::string::npos && it.find('/') > eq) {
      p.name = p.label = it.substr(0, eq);
      p.path = it.substr(eq + 1);
      if (!plugin_label_ok(p.name) || p.path.empty())
        throw error(errc::usage, "--plugin '" + it + "': NAME=PATH wants a name of letters, digits, '-', '_', '.'");
    } else {
      p.path = it;
      std::string f = it.substr(it.find_last_of('/') + 1);
      if (f.rfind("lib", 0) == 0) f = f.substr(3);
      if (f.size() > 3 && f.compare(f.size() - 3, 3, ".so") == 0) f.resize(f.size() - 3);
      p.label = "plugin:" + f;
      p.name = items.size() == 1 ? "plugin" : p.label;
    }
    for (auto& q : v)
      if (q.name == p.name) throw error(errc::usage, "--plugin: two wrappers named '" + p.name + "' (name them NAME=PATH)");
    v.push_back(p);
  }
  if (abis.size() != 1 && abis.size() != v.size())
    throw error(errc::usage, "--plugin-abi: " + std::to_string(abis.size()) + " layouts for " +
                                 std::to_string(v.size()) + " wrappers (give one for all, or one each)");
  for (size_t i = 0; i < v.size(); ++i) v[i].abi = abis.size() == 1 ? abis[0] : abis[i];
  return v;
}

// A fraction of the mix, in [0, 1]; -1 when not given.
double fraction(args& a, const std::string& name, bool& given) {
  auto v = a.opt_real(name, 0, 1);
  if (!v) return -1;
  given = true;
  return *v;
}

// A count of records or operations (--records, --key-space, --ops,
// --range-size): K/M/G/T are powers of 1000 here, as a user writing 200K
// records means 200,000 (pool sizes are bytes: their 64M is 64 MiB). 2^k and
// KiB/MiB/GiB/TiB still spell binary counts. `typed` receives the text as
// given (empty when the option is not given).
std::optional<uint64_t> record_count(args& a, const std::string& name, uint64_t lo, uint64_t hi,
                                     std::string* typed = nullptr) {
  const std::string text = a.str(name, "");
  if (typed) *typed = text;
  const size_t digits = text.find_first_not_of("0123456789");
  if (text.size() >= 2 && digits == text.size() - 1) {
    uint64_t mul = 0;
    switch (text.back()) {
      case 'K': case 'k': mul = 1000; break;
      case 'M': case 'm': mul = 1000'000; break;
      case 'G': case 'g': mul = 1000'000'000; break;
      case 'T': case 't': mul = 1000'000'000'000; break;
      default: break;
    }
    if (mul) {
      errno = 0;
      const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
      if (errno || v > UINT64_MAX / mul) throw error(errc::usage, "--" + name + ": '" + text + "' is too large");
      const uint64_t n = v * mul;
      if (n < lo || n > hi)
        throw error(errc::usage, "--" + name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                     "], got " + std::to_string(n));
      return n;
    }
  }
  // No decimal suffix: the shared parser (range, malformed numbers, 2^k).
  return a.opt_count(name, lo, hi);
}

}  // namespace

int cmd_bench(args& a) {
  // The source tree's commit as the run begins: a change made to the tree
  // while a long run goes on must not mark its results "-dirty".
  (void)bench::git_commit();
  bench::run_config base;
  const bool mode_given = a.has("mode") || std::getenv("PMINDEX_MODE");
  base.base = index_options(a, pm::open_mode::must_create);
  if (!base.base.mode) base.base.mode = pm::mode::persist;  // bench always creates its pools
  const bool pool_size_given = a.has("pool-size") || std::getenv("PMINDEX_POOL_SIZE");
  // On the command line only: PMINDEX_INDEX in the environment also names
  // the index of pmindex's own PiBench wrapper (a --plugin run of it).
  const bool index_given = a.has("index");
  std::string index_list = a.str("index", "all");
  const std::string plugin_arg = a.str("plugin", "");
  const std::string abi = a.str("plugin-abi", "master");
  std::string wl = a.str("workload", "");
  base.records = record_count(a, "records", 1, uint64_t{1} << 40, &base.records_requested).value_or(1000000);
  base.key_space = record_count(a, "key-space", 1, uint64_t{1} << 63).value_or(0);  // not given: --records
  base.ops = record_count(a, "ops", 0, uint64_t{1} << 50).value_or(0);              // 0: timed
  // Every cell once per repetition, interleaved (bench/repeat.hpp).
  const auto repetitions = static_cast<uint32_t>(a.u64("repetitions", 1, 1, 1000));
  base.seconds = a.real("seconds", 1.5, 0, 1e6);
  unsigned hc = std::thread::hardware_concurrency();
  base.threads = static_cast<uint32_t>(a.u64("threads", std::min(hc ? hc : 1, 256u), 1, 256));
  base.seed = a.u64("seed", 1, 0, UINT64_MAX);
  base.sample_every = static_cast<uint32_t>(a.u64("latency-sample", 64, 0, 1u << 20));
  base.window_ms = static_cast<uint32_t>(a.u64("window-ms", 100, 1, 3600000));
  std::string uni = a.str("universe", "sparse");
  base.dataset = a.str("dataset", "u64");
  base.value_size = static_cast<uint32_t>(a.u64("value-size", 8, 0, uint64_t{1} << 30));
  std::string par = a.str("parallel", "shared");
  std::string lock = a.str("lock", "dram");
  base.recover = a.flag("recover");
  base.check = !a.flag("no-check");
  base.pin = a.flag("pin");
  bool detail = a.flag("detail");
  bool no_progress = a.flag("no-progress");
  std::string json_path = a.str("json", "");
  std::string csv_path = a.str("csv", "");
  // Workload shaping (override the preset's).
  bool mix_given = false;
  double fr[bench::k_nops];
  const char* names[bench::k_nops] = {"read", "insert", "update", "remove", "scan", "rmw"};
  for (unsigned i = 0; i < bench::k_nops; ++i) fr[i] = fraction(a, names[i], mix_given);
  std::string dist = a.str("distribution", "");
  double skew = a.opt_real("skew", 0, 0.5).value_or(-1), theta = a.opt_real("theta", 0, 10).value_or(-1);
  uint64_t scan_size = a.opt_u64("scan-size", 1, 100000).value_or(0);  // not given: the preset's
  bool scan_uniform = a.flag("scan-uniform");
  base.range_threads = static_cast<uint32_t>(a.u64("range-threads", 0, 0, 255));
  uint64_t range_size = record_count(a, "range-size", 1, uint64_t{1} << 40).value_or(0);
  double selectivity = a.opt_real("selectivity", 0, 1).value_or(-1);
  std::string inserts = a.str("inserts", "fresh");
  std::string prefill = a.str("prefill", "low");
  std::string prefill_order = a.str("prefill-order", "scattered");
  const bool same_index = a.flag("same-index");
  const bool reuse_prefill = a.flag("reuse-prefill");
  const std::string grid = a.str("preset", "");
  a.finish();

  const auto plugins = parse_plugins(plugin_arg, abi);
  auto u = bench::parse_universe(uni);
  if (!u) throw error(errc::usage, "unknown --universe '" + uni + "' (dense, sparse, clustered, hashed, slots)");
  base.universe = *u;
  if (par == "shared")
    base.parallel = bench::parallel_mode::shared;
  else if (par == "instance")
    base.parallel = bench::parallel_mode::instance;
  else if (par == "global-lock")
    base.parallel = bench::parallel_mode::global_lock;
  else
    throw error(errc::usage, "unknown --parallel '" + par + "' (shared, instance, global-lock)");
  if (lock != "dram" && lock != "pool")
    throw error(errc::usage, "unknown --lock '" + lock + "' (dram, pool)");
  base.lock_in_pool = lock == "pool";
  if (base.threads == 0 || base.threads > 256) throw error(errc::usage, "--threads must be in 1..256");
  if (!(base.seconds > 0) && !base.ops) throw error(errc::usage, "--seconds must be positive");
  if (base.key_space && base.key_space < base.records)
    throw error(errc::usage, "--key-space must be at least --records");
  if (base.records > (uint64_t{1} << 62)) throw error(errc::usage, "--records is too large");
  if (skew >= 0 && !(skew > 0 && skew < 0.5)) throw error(errc::usage, "--skew must be in (0, 0.5)");
  if (theta >= 0 && !(theta > 0 && theta != 1 && theta < 10))
    throw error(errc::usage, "--theta must be > 0 and != 1");
  if (scan_size > 100000) throw error(errc::usage, "--scan-size is at most 100000");
  if (inserts == "random")
    base.random_inserts = true;
  else if (inserts != "fresh")
    throw error(errc::usage, "unknown --inserts '" + inserts + "' (fresh, random)");
  if (prefill == "spread")
    base.prefill_spread = true;
  else if (prefill != "low")
    throw error(errc::usage, "unknown --prefill '" + prefill + "' (low, spread)");
  if (prefill_order == "sorted")
    base.prefill_sorted = true;
  else if (prefill_order != "scattered")
    throw error(errc::usage, "unknown --prefill-order '" + prefill_order + "' (scattered, sorted)");
  if (base.range_threads >= base.threads)
    throw error(errc::usage, "--range-threads must be less than --threads (the others run the workload)");
  if (selectivity >= 0 && range_size)
    throw error(errc::usage, "give --range-size or --selectivity, not both");
  if (selectivity >= 0) {
    if (!(selectivity > 0 && selectivity <= 1))
      throw error(errc::usage, "--selectivity is a fraction in (0, 1]");
    range_size =
        std::max<uint64_t>(1, static_cast<uint64_t>(selectivity * static_cast<double>(base.records) + 0.5));
  }
  if (base.range_threads && !range_size)
    throw error(errc::usage, "--range-threads needs --range-size or --selectivity");
  if (range_size > 10'000'000) throw error(errc::usage, "--range-size is at most 10M records");
  base.range_size = static_cast<uint32_t>(range_size);
  base.progress = !no_progress && isatty(2);
  if (reuse_prefill) base.reuse_prefill = std::make_shared<bench::prefill_cache>();

  // --preset pmemids: the pmemids_bench study's grid (its structures, its two
  // workloads, every mode, 1 and T threads, one instance per thread), unless
  // an option says otherwise.
  std::vector<pm::mode> modes = {*base.base.mode};
  std::vector<uint32_t> thread_counts = {base.threads};
  if (!grid.empty()) {
    if (grid != "pmemids") throw error(errc::usage, "unknown --preset '" + grid + "' (pmemids)");
    if (!a.has("index") && !std::getenv("PMINDEX_INDEX")) {
      index_list.clear();
      for (auto& e : registered_indexes())
        if (e->family == "pmemids") index_list += (index_list.empty() ? "" : ",") + e->name;
    }
    if (wl.empty() && !mix_given) wl = "pmemids-read,pmemids-write";
    if (!a.has("parallel") && !std::getenv("PMINDEX_PARALLEL")) {
      par = "instance";
      base.parallel = bench::parallel_mode::instance;
    }
    if (!mode_given) modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};
    // The study's records: u64 keys, 100-byte values (the byte path).
    if (!a.has("value-size") && !std::getenv("PMINDEX_VALUE_SIZE")) base.value_size = 100;
    thread_counts = {1};
    if (base.threads > 1) thread_counts.push_back(base.threads);
  }

  // Workloads: presets, then the explicit mix/distribution options on top.
  std::vector<bench::workload> wls;
  if (wl.empty() && !mix_given) wl = "ycsb-c,update90insert10";
  if (wl.empty()) wls.push_back(bench::workload{});
  for (auto& name : split(wl)) wls.push_back(bench::parse_workload(name));
  for (auto& w : wls) {
    if (mix_given && w.name.find('=') == std::string::npos) {
      double sum = 0;
      for (unsigned i = 0; i < bench::k_nops; ++i) {
        w.mix[i] = fr[i] >= 0 ? fr[i] : (wl.empty() ? 0 : w.mix[i]);
        sum += w.mix[i];
      }
      if (!(sum > 0)) throw error(errc::usage, "the operation mix is empty (give --read, --insert, ...)");
      if (wl.empty())
        w.name = "custom";
      else
        w.name += "*";
    }
    if (!dist.empty()) {
      auto d = bench::parse_distribution(dist);
      if (!d)
        throw error(errc::usage,
                    "unknown --distribution '" + dist + "' (uniform, selfsimilar, zipfian, latest)");
      w.dist = *d;
    }
    if (skew >= 0) w.skew = skew;
    if (theta >= 0) w.theta = theta;
    if (scan_size && !w.scan_size_given) w.scan_size = static_cast<uint32_t>(scan_size);
    if (scan_uniform) w.scan_uniform = true;
  }

  // Indexes: a list, or every registered one; the dataset, made once.
  const bool all = index_list == "all";
  // --plugin alone runs the wrappers; with --index as well, the wrappers'
  // cells join the indexes' in one interleaving, so a port and its
  // original are measured side by side.
  std::vector<std::string> indexes;
  if (plugins.empty() || index_given) indexes = bench::select_indexes(index_list);
  for (auto& pl : plugins) {
    if (std::find(indexes.begin(), indexes.end(), pl.name) != indexes.end())
      throw error(errc::usage, "--plugin: '" + pl.name + "' is also an index of --index: name the wrapper NAME=PATH");
    indexes.push_back(pl.name);
  }
  auto plugin_named = [&](const std::string& n) -> const plugin_item* {
    for (auto& pl : plugins)
      if (pl.name == n) return &pl;
    return nullptr;
  };
  base.data = bench::make_dataset(base.dataset, base.seed, base.universe);
  std::vector<bench::run_result> results;
  std::vector<std::string> skipped, errors;
  bool failed = false;
  // The exit code when runs failed: a typed error's (8: pool full, ...) if
  // that is what every failed run met, else 1.
  errc failure = errc::ok;
  auto failed_with = [&](errc c) { failure = failure == errc::ok || failure == c ? c : errc::failure; };
  const size_t grid_cells = modes.size() * thread_counts.size();
  // The plan: one cell per index, mode, thread count and workload (with
  // --same-index, the workloads as phases of one cell). A grid runs the
  // modes of one index and thread count back to back, so the ratios between
  // modes (the study's findings) are measured side by side, not minutes apart.
  struct cell {
    bench::run_config cfg;
    std::vector<bench::workload> phases;  // --same-index: run as phases of one prefill
    bool alone = false;                   // the only run of the command: its error is the command's
    bool dead = false;                    // threw: not run again
  };
  std::vector<cell> plan;
  for (uint32_t t : thread_counts)
    for (auto& name : indexes)
      for (auto m : modes) {
        base.base.mode = m;
        base.threads = t;
        if (!pool_size_given) base.base.pool_size = bench::default_pool_size(base, wls);
        if (base.range_threads >= base.threads)
          throw error(errc::usage, "--range-threads must be less than --threads (the others run the workload)");
        const plugin_item* plug = plugin_named(name);
        const bool is_plugin = plug != nullptr;
        bench::run_config cfg = base;
        if (is_plugin) {
          cfg.plugin = plug->path;
          cfg.plugin_name = plug->label;
          cfg.abi = plug->abi;
        } else {
          cfg.index = name;
          auto fit = bench::fit_to_index(cfg, mode_given || grid_cells > 1);
          if (!fit) {
            if (fit.mode && !all && grid_cells == 1)
              throw error(errc::unsupported, "index " + name + ": " + fit.reason);
            skipped.push_back(name + " (" + fit.reason + ")");
            continue;
          }
          if (!pool_size_given) {
            const uint64_t want = bench::default_pool_size(cfg, wls);
            cfg.base.pool_size = bench::cap_to_free_space(want, cfg.base.pool_path);
            if (cfg.base.pool_size < want)
              std::fprintf(stderr,
                           "pmindex bench: %s: the default pool (%.1f GiB) is more than the free space of the "
                           "pool's file system allows; using %.1f GiB (--pool-size to choose)\n",
                           name.c_str(), static_cast<double>(want) / (1 << 30),
                           static_cast<double>(cfg.base.pool_size) / (1 << 30));
          }
        }
        // An unordered index runs no scans: its scan workloads are skipped.
        std::vector<bench::workload> mine;
        for (auto& w : wls) {
          auto e = is_plugin ? nullptr : find_index(name);
          if (e && !e->ordered && w.mix[static_cast<unsigned>(bench::op_type::scan)] > 0)
            skipped.push_back(name + " " + w.name + " (unordered: no scans)");
          else
            mine.push_back(w);
        }
        if (same_index) {
          if (!mine.empty()) plan.push_back({cfg, mine, indexes.size() == 1});
          continue;
        }
        for (auto& w : mine) {
          cfg.w = w;
          plan.push_back({cfg, {}, indexes.size() * mine.size() * grid_cells == 1});
        }
      }  // the grid's cells (one without --preset)

  // --reuse-prefill keeps a load only for a prefill that runs again: a cell
  // alone on its prefill (one workload, one repetition) loads as without it.
  if (base.reuse_prefill) {
    std::map<std::string, size_t> uses;
    auto prefill_of = [](const cell& c) {
      return c.cfg.index + " " + std::to_string(static_cast<int>(c.cfg.base.mode.value_or(pm::mode::persist))) + " " +
             std::to_string(c.cfg.threads);
    };
    for (auto& c : plan) uses[prefill_of(c)] += repetitions;
    for (auto& c : plan)
      if (uses[prefill_of(c)] < 2) c.cfg.reuse_prefill.reset();
  }

  // The schedule: every cell once per repetition, repetition r starting at
  // cell r mod n (bench/repeat.hpp).
  for (const auto [rep, i] : bench::interleaved_order(plan.size(), repetitions)) {
    cell& c = plan[i];
    if (c.dead) continue;
    const std::string& name = c.cfg.plugin.empty() ? c.cfg.index : c.cfg.plugin_name;
    if (!c.phases.empty()) {  // one prefill, the workloads as phases
      try {
        auto rs = bench::run_phases(c.cfg, c.phases);
        for (auto& r : rs) {
          r.cell = i;
          r.repetition = rep;
          failed |= r.failed;
          if (r.failed) failed_with(errc::failure);
          if (r.failed)
            std::fprintf(stderr, "pmindex bench: FAILED %s %s: %s\n", r.label.c_str(), r.cfg.w.name.c_str(),
                         r.failure.c_str());
          results.push_back(std::move(r));
        }
      } catch (const error& e) {
        if (e.code() == errc::io || e.code() == errc::usage || c.alone) throw;
        std::fprintf(stderr, "pmindex bench: FAILED %s: %s\n", name.c_str(), e.what());
        errors.push_back(name + ": " + e.what());
        failed = true;
        failed_with(e.code());
        c.dead = true;
      }
      continue;
    }
    try {
      results.push_back(bench::run(c.cfg));
      results.back().cell = i;
      results.back().repetition = rep;
    } catch (const error& e) {
      // One index failing must not lose the others' results; but a bad
      // option or pool path would fail every run: stop at once.
      if (e.code() == errc::io || e.code() == errc::usage || c.alone) throw;
      std::fprintf(stderr, "pmindex bench: FAILED %s %s: %s\n", name.c_str(), c.cfg.w.name.c_str(), e.what());
      errors.push_back(name + " " + c.cfg.w.name + ": " + e.what());
      failed = true;
      failed_with(e.code());
      c.dead = true;
      continue;
    }
    failed |= results.back().failed;
    if (results.back().failed) failed_with(errc::failure);
    if (results.back().failed)
      std::fprintf(stderr, "pmindex bench: FAILED %s %s: %s\n", results.back().label.c_str(), c.cfg.w.name.c_str(),
                   results.back().failure.c_str());
  }

  bench::print_table(stdout, results, detail || results.size() == 1);
  if (!grid.empty()) print_pmemids_table(stdout, results);
  for (auto& s : skipped) std::printf("skipped: %s\n", s.c_str());
  for (auto& s : errors) std::printf("FAILED %s\n", s.c_str());
  std::fflush(stdout);

  if (!json_path.empty() || !csv_path.empty()) {
    std::vector<bench::json::value> runs;
    for (auto& r : results) runs.push_back(bench::to_json(r));
    bench::unique_cells(runs);
    if (!json_path.empty()) {
      auto doc = bench::json::value::object();
      auto ctx = bench::context();
      std::string cmdline = "pmindex bench";
      auto opts = bench::json::value::object();
      opts["index"] = index_list;
      if (!plugin_arg.empty()) opts["plugin"] = plugin_arg;
      opts["workload"] = wl;
      opts["records"] = base.records;
      opts["records_requested"] = base.records_requested.empty() ? std::to_string(base.records)
                                                                    : base.records_requested;
      opts["key_space"] = base.key_space;
      opts["ops"] = base.ops;
      opts["seconds"] = base.seconds;
      opts["threads"] = base.threads;
      opts["seed"] = base.seed;
      opts["latency_sample"] = base.sample_every;
      opts["window_ms"] = base.window_ms;
      opts["universe"] = uni;
      opts["dataset"] = base.dataset;
      opts["value_size"] = base.value_size;
      opts["parallel"] = par;
      opts["lock"] = lock;
      opts["mode"] = std::string(pm::to_string(*base.base.mode));
      opts["flush"] = std::string(pm::to_string(base.base.flush));
      opts["pm_write_ns"] = base.base.pm_write_ns;
      opts["pool"] = base.base.pool_path;
      opts["pool_size"] = base.base.pool_size;
      opts["params"] = base.base.params;
      opts["recover"] = base.recover;
      opts["check"] = base.check;
      opts["pin"] = base.pin;
      opts["range_threads"] = base.range_threads;
      opts["range_size"] = base.range_size;
      opts["inserts"] = inserts;
      opts["prefill"] = prefill;
      opts["prefill_order"] = prefill_order;
      opts["same_index"] = same_index;
      opts["reuse_prefill"] = reuse_prefill;
      opts["repetitions"] = repetitions;
      if (!grid.empty()) opts["preset"] = grid;
      if (!dist.empty()) opts["distribution"] = dist;
      ctx["options"] = opts;
      doc["context"] = ctx;
      auto arr = bench::json::value::array();
      for (auto& r : runs) arr.push_back(r);
      doc["results"] = arr;
      doc["aggregates"] = bench::aggregates(runs);
      std::ofstream f(json_path);
      f << json::dump(doc);
      if (!f) throw error(errc::io, "cannot write " + json_path);
    }
    if (!csv_path.empty()) {
      std::ofstream f(csv_path);
      f << bench::to_csv(runs);
      if (!f) throw error(errc::io, "cannot write " + csv_path);
    }
  }
  if (failed) {
    std::fprintf(stderr, "pmindex bench: some runs FAILED their checks (see above)\n");
    return static_cast<int>(failure == errc::ok ? errc::failure : failure);
  }
  return 0;
}

}  // namespace pmindex::cli
