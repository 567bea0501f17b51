// Extension point of `pmindex stress`: named extra checks, chosen with
// `--check NAME[,NAME...]`. A check may run its own thread beside the
// workers (on a key set that belongs to it alone) and may inspect the index
// at the end of the run and after each reopen.
//
// To add one, define it in a tools/*.cpp file and register it statically:
//
//   static const pmindex::cli::stress_check_registrar reg({
//       "snapshot", "range scans are atomic snapshots",
//       [](pmindex::cli::stress_context& ctx) { ...; return violations; },  // or nullptr
//       [](pmindex::index& idx, const pmindex::cli::stress_records& expected) { ...; }});  // or nullptr
//
// A check with a thread of its own works on u64 keys: it runs only without
// --dataset (stress's own keys); final checks run on byte runs too.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "pmindex/index.hpp"

namespace pmindex::cli {

// What a check's own thread gets. Keys: the workers and the checks share the
// key space by residue, so `key(i)` (i = 0, 1, ...) gives distinct keys that
// no worker and no other check touches.
struct stress_context {
  index& idx;
  const std::atomic<bool>& stop;   // set when --seconds are up
  uint64_t seed;
  std::function<uint64_t(uint64_t i)> key;
  // The check's own oracle: what its keys must hold at the end (it inserts,
  // updates and removes only its own keys and records the result here).
  std::map<uint64_t, uint64_t> oracle;
  // Operations the check performed (added to the total) and a sink for a
  // one-line description of each violation (printed, first few only).
  std::atomic<uint64_t>* ops;
  std::function<void(const std::string&)> report;
};

// Every record the index must hold at the end: `u64` on u64 runs, `by_key`
// (key -> value bytes) on byte runs (--dataset / --value-size).
struct stress_records {
  bool bytes = false;
  std::map<uint64_t, uint64_t> u64;
  std::map<std::string, std::string> by_key;
  size_t size() const { return bytes ? by_key.size() : u64.size(); }
};

struct stress_check {
  std::string name;
  std::string description;
  // Runs on its own thread until ctx.stop; returns the violations it found.
  std::function<uint64_t(stress_context&)> concurrent;
  // Runs after the workers are done, and again after each reopen, with
  // every record the index must hold; returns violations.
  std::function<uint64_t(index&, const stress_records& expected)> final;
  // Reads with range()/scan(): asking for it on an unordered index
  // (index_entry::ordered false) is a usage error.
  bool needs_scans = false;
};

// Registered checks (built-in ones and those of other tools/*.cpp files).
std::vector<stress_check>& stress_checks();

struct stress_check_registrar {
  explicit stress_check_registrar(stress_check c) { stress_checks().push_back(std::move(c)); }
};

}  // namespace pmindex::cli
