// The run of one benchmark: open (or create) the index, prefill it in
// parallel, run the workload on T threads, check the record count, measure
// space and optionally recovery. What it measures is in run_result; the
// report writes it as a table, JSON and CSV.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataset.hpp"
#include "histogram.hpp"
#include "keys.hpp"
#include "plugin.hpp"
#include "pmindex/index.hpp"
#include "workload.hpp"

namespace pmindex::bench {

class prefill_cache;

enum class parallel_mode : uint8_t { shared, instance, global_lock };
std::string_view to_string(parallel_mode p) noexcept;

struct run_config {
  std::string index;          // registered index (ignored with a plugin)
  std::string plugin;         // PiBench wrapper .so, or empty
  std::string plugin_name;    // its rows' label (cmd_bench: NAME or plugin:FILE)
  plugin_abi abi = plugin_abi::master;  // its tree_api layout
  options base;               // pool path/size, mode, flush, params
  workload w;
  uint64_t records = 1000000; // prefill n
  // --records as the user typed it ("200K"; empty: not given). Counts of
  // records take decimal suffixes (200K = 200,000), pool sizes binary ones.
  std::string records_requested;
  uint64_t key_space = 0;     // ids reads draw from; 0: n
  uint64_t ops = 0;           // run-phase ops in total; 0: timed
  double seconds = 2;
  uint32_t threads = 2;
  uint64_t seed = 1;
  uint32_t sample_every = 64;  // latency: time 1 op in this many (0: none)
  uint32_t window_ms = 100;
  key_universe universe = key_universe::sparse;
  // Keys and values. The u64 dataset with 8-byte values runs the u64 calls
  // (the fast path); any other dataset or value size runs the byte calls on
  // an index created with keys=bytes (byte_path()). `data` is the dataset
  // already made (a file loaded once for many runs); when null, run() makes
  // `dataset` from `seed` and `universe`.
  std::string dataset = "u64";
  std::shared_ptr<const bench::dataset> data;
  uint32_t value_size = 8;
  bool byte_path() const noexcept { return dataset != "u64" || value_size != 8; }
  parallel_mode parallel = parallel_mode::shared;
  bool lock_in_pool = false;   // global-lock: the lock word in the index's pool (--lock pool)
  bool recover = false;
  bool check = true;           // check() and a full scan after the run
  bool pin = false;            // pin thread t to CPU t % cores
  bool progress = false;       // progress line on stderr
  // Range-query threads (VERLIB/PermART-style runs): the last `range_threads`
  // of the T threads only run scans of `range_size` records from uniform
  // starts; the others run the workload.
  uint32_t range_threads = 0;
  uint32_t range_size = 0;
  // Inserts draw ids from the distribution over [0, key_space) like removes
  // (the key may be present: the insert fails) instead of taking fresh ids.
  bool random_inserts = false;
  // Prefill a random id from each of n equal slices of [0, key_space)
  // instead of ids 0..n-1 (with key_space = 2n: a random half, as VERLIB).
  bool prefill_spread = false;
  // Each prefill thread inserts its slice in ascending key order instead of
  // a scattered one (u64 path only): blocks then sit in key order, the
  // best layout a scan can meet.
  bool prefill_sorted = false;
  // Cells with the same prefill start from a copy of one loaded pool,
  // reopened (--reuse-prefill; prefill_cache.hpp); null: every cell loads.
  std::shared_ptr<prefill_cache> reuse_prefill;
};

struct op_stats {
  uint64_t done = 0, ok = 0;
  uint64_t flushes = 0, fences = 0, allocs = 0;
  histogram lat;  // in ns after finish()
};

struct run_result {
  run_config cfg;
  std::string label;          // index name or plugin file
  // Its place in the schedule of `pmindex bench --repetitions` (repeat.hpp):
  // the cell (index into the plan) and the repetition (0-based).
  size_t cell = 0;
  uint32_t repetition = 0;
  std::vector<std::string> notes;
  bool failed = false;        // record-count or check failure
  std::string failure;

  // load
  double load_seconds = 0;    // wall clock of the parallel prefill
  double load_busy_seconds = 0;  // the slowest thread's time inside inserts (byte path: keys made outside)
  uint64_t load_ok = 0;
  uint64_t load_flushes = 0, load_fences = 0, load_allocs = 0;
  // Wall clock of the cell's setup: making and loading its pools, or with
  // --reuse-prefill copying a kept load and reopening it.
  double setup_seconds = 0;
  // space after the prefill (summed over instances)
  bool have_space = false;
  index_stats space;
  // run
  double wall_seconds = 0;    // run phase, start to last thread done
  double busy_seconds = 0;    // mean per-thread time inside the timed sections
  double cpu_seconds = 0;     // mean per-thread CPU time inside the timed sections
  double mops = 0;            // sum over threads of ops / busy time (completed)
  double mops_cpu = 0;        // sum over threads of ops / CPU time (steadier on a shared machine)
  double mops_ok = 0;         // same, succeeded ops only
  op_stats per_op[k_nops];
  op_stats all;
  std::vector<double> series_mops;  // per window, wall clock (includes generation)
  uint64_t bad_values = 0;    // lookups that found a value the record never had
  // Key comparisons per operation, when the index counts them (an extra
  // "key_compares" in stats(): a running total); negative when it does not.
  double key_compares_per_op = -1;
  bool exhausted = false;     // fresh inserts ran out of the dataset's keys
  // checks
  bool counted = false;
  uint64_t expected_records = 0, reported_records = 0, scanned_records = 0;
  bool scanned = false;
  std::string structure = "not checked";
  double check_seconds = 0;  // wall clock of the checks after the run
  // recovery (--recover)
  bool have_recovery = false;
  double clean_open_seconds = 0;
  double dirty_open_seconds = 0, dirty_recover_seconds = 0;
  // The same reopens in CPU seconds of the whole process (every thread the
  // open runs): on a shared machine the wall clock measures the CPU the
  // open was given, this what it needed.
  double clean_open_cpu_seconds = 0, dirty_open_cpu_seconds = 0;
  uint64_t dirty_traced_blocks = 0;
  uint64_t records_after_recovery = 0;
  // The index's own figures right after the dirty reopen (DPTree: records
  // replayed from its log), before the clean close changes them.
  std::vector<std::pair<std::string, double>> dirty_index_stats;
};

// Runs one benchmark. Throws pmindex::error for setup failures (bad pool,
// unsupported mode); a record-count mismatch is reported in the result.
run_result run(const run_config& cfg);
// Runs the workloads one after the other on one prefilled index (cfg.w is
// ignored): one result per phase, each with the prefill's load and space
// figures; phase k starts from the records phases 0..k-1 left, its fresh
// inserts take ids past theirs, and --recover runs after the last phase.
std::vector<run_result> run_phases(const run_config& cfg, const std::vector<workload>& phases);

}  // namespace pmindex::bench
