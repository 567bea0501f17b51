// Running a study: its runs expanded into `pmindex bench` invocations at one
// scale, each executed as a child process of this same binary with --json
// (docs/studies.md says why), and what the results say.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "json.hpp"
#include "study.hpp"

namespace pmindex::cli::study {

struct invocation {
  const run_spec* run = nullptr;
  std::string id;                              // names its files under DIR/raw/
  std::vector<std::string> indexes;            // built-in indexes
  std::vector<const plugin_spec*> plugins;     // PiBench wrappers, in the same interleaving
  std::vector<std::pair<std::string, std::string>> options;  // bench option -> value ("" for a flag)
  std::map<std::string, std::string> labels;   // part, run, and the options as the file writes them
  uint64_t records = 0, threads = 1;           // resolved (for the footprint estimate)
  bool instances = false;                      // --parallel instance: one index per thread
};

struct run_settings {
  std::string scale = "default";
  std::string out_dir;
  std::set<std::string> only;  // parts; empty = all
  uint64_t repetitions = 0;    // 0: the study's default for the scale
  std::string pool_dir = "/dev/shm";
  // Reuse the results of runs an earlier, interrupted run of the same study
  // into the same --out finished with the same command (raw/ID.done).
  bool resume = false;
  std::string self;            // this binary
  std::string command;         // the exact command, for the record
};

// Every invocation of the study at the scale (parts filtered by `only`).
std::vector<invocation> expand(const study_spec& s, const run_settings& rs, unsigned cores);

// The argv of `pmindex bench` for one invocation (without the binary).
std::vector<std::string> bench_argv(const invocation& inv, const run_settings& rs, uint64_t repetitions,
                                    const std::string& json_path, const std::string& pool);

// Runs argv with stdout and stderr to files; returns the exit status
// (128 + signal when killed).
int run_child(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file);

// Paper scale: per index, bytes of pool and DRAM per record after a small
// load; the indexes whose estimate does not fit are taken out of `inv` and
// each gets a note.
void fit_to_machine(std::vector<invocation>& inv, const run_settings& rs, std::vector<std::string>& notes);

// A `kind = "serve"` run: `pmindex serve` over each index and a bounded
// memcached load from loopback clients; returns result entries shaped as
// bench's (index, workload "memcached-set"/"memcached-get", run.mops).
std::vector<bench::json::value> run_serve(const invocation& inv, const run_settings& rs, uint64_t repetitions,
                                          std::vector<std::string>& notes);

// The whole study at a scale: runs, results.json, README.md and the HTML
// report in rs.out_dir. Returns the exit code.
int run_study(const study_spec& s, const run_settings& rs);

}  // namespace pmindex::cli::study
