// The common part of the registry entries of the pmemids structures
// (btree, btree-ref, skiplist, bplustree, rbtree; unordered_entry: hashtable,
// linkedlist): single-threaded, modes
// dram / volatile / persist / tx, keys=u64 and keys=bytes (keys up to 16
// bytes, front.hpp), the study's paper, and the standard tx crash runs. An
// entry.cpp adds its name, description, mutants and own extra tests.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pmemids/detail/front.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids {

// What a crash-checker mutant must be caught with.
inline const char* const k_caught =
    "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted";
// A short history that still splits nodes and fills and empties the keys.
inline const std::string k_mutant_run = "--ops 400 --images 800 --keys 200 --max-violations 1";

// A crash mutant over the short history, in tx mode when `tx`.
inline mutant_spec crash_mutant(std::string name, std::string help, bool tx, std::string args = k_mutant_run) {
  return {std::move(name), std::move(help), "crashtest", tx ? args + " --mode tx" : args, k_caught};
}

// max_value: the longest value with keys=bytes; value_param: the `value`
// parameter sizes a value slot embedded in the nodes (false: values live in
// blocks of their own). Core(pool, kind, config, args...) is the structure.
template <class Core, class... A>
index_entry ordered_entry(std::string name, std::string description, uint64_t max_value, bool value_param,
                          std::vector<mutant_spec> mutants, std::vector<extra_test> extra, A... args) {
  index_entry e;
  e.name = name;
  e.family = "pmemids";
  e.description = std::move(description);
  e.paper = "Performance study of Optane DC from indexing data structures' perspective (pmemids_bench, MSST'20)";
  e.concurrent = false;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = max_value;
  e.scan_guarantee =
      "sorted, no duplicates, every key >= from; single-threaded (the harness runs it behind one lock), so a scan "
      "sees exactly the records present when it runs";
  if (value_param) e.params = {{"value", "keys=bytes: the longest value (the value slot of every record)", "100", {}, 8, max_value}};
  e.mutants = std::move(mutants);
  e.tests = test_profile{};
  // Smaller runs than the concurrent indexes' (CI time): these structures
  // are single-threaded with short operations, so 1500 images per run still
  // reach every kind of crash point many times (and the exhaustive runs
  // below and in entry.cpp cover every point of a short history).
  e.tests->crash_images = 1500;
  // Byte keys are at most 16 bytes here, shorter than urls/names: the byte
  // runs take 8-byte keys (the checker adds their prefixes, the empty key too).
  e.tests->bytes_long_dataset = "u64-bytes";
  e.tests->bytes_short_dataset = "u64-bytes";
  const std::string tx = "crashtest --index " + name + " --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 1500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      {"tx_bytes", tx + "--params keys=bytes --dataset u64-bytes --value-size 100 --images 800 --ops 1500 --seed 7",
       "", ""},
      {"tx_long", tx + "--images 100000 --ops 3000 --keys 256 --seed 11", "", "", true},
  };
  for (auto& x : extra) e.tests->extra.push_back(std::move(x));
  e.factory = [args...](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<u64_front<Core>>(p, k, c, args...);
    return std::make_unique<bytes_front<Core>>(p, k, c, args...);
  };
  return e;
}

// Exhaustive crash runs over a history that fills `keys` keys and empties
// them again (splits, merges, rebalancing), in persist and in tx mode.
inline std::vector<extra_test> exhaustive_fill_empty(const std::string& name, const std::string& label, int ops,
                                                     int keys) {
  const std::string run = "--exhaustive --ops " + std::to_string(ops) + " --keys " + std::to_string(keys) + " --seed 5";
  return {{"exhaustive_" + label, "crashtest --index " + name + " " + run, "", ""},
          {"tx_exhaustive_" + label, "crashtest --index " + name + " --mode tx " + run, "", ""}};
}

// The same for an unordered structure (value slot of `value` bytes):
// scan and range throw errc::unsupported, the checkers read it by lookups.
template <class Core>
index_entry unordered_entry(std::string name, std::string description, std::vector<mutant_spec> mutants,
                            std::vector<extra_test> extra = {}) {
  index_entry e = ordered_entry<Core>(std::move(name), std::move(description), 256, true, std::move(mutants),
                                      std::move(extra));
  e.ordered = false;
  e.scan_guarantee = "unordered: scan and range are not supported (errc::unsupported)";
  return e;
}

}  // namespace pmindex::pmemids
