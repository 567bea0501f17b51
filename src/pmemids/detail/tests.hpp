// What the tests of the pmemids structures share: the crash mutants' runs
// and the standard tx crash runs. A tests.cpp adds its mutants and own
// extra tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "index_tests.hpp"

namespace pmindex::pmemids {

// What a crash-checker mutant must be caught with.
inline const char* const k_caught =
    "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted";
// A short history that still splits nodes and fills and empties the keys.
inline const char* const k_mutant_run = "--ops 400 --images 800 --keys 200 --max-violations 1";

// A crash mutant over the short history, in tx mode when `tx`.
inline mutant_spec crash_mutant(std::string name, std::string help, bool tx, std::string args = k_mutant_run) {
  return {std::move(name), std::move(help), "crashtest", tx ? args + " --mode tx" : args, k_caught};
}

inline index_tests ordered_tests(const std::string& name, std::vector<mutant_spec> mutants,
                                 std::vector<extra_test> extra = {}) {
  index_tests e;
  e.mutants = std::move(mutants);
  e.tests = test_profile{};
  // Smaller runs than the concurrent indexes' (CI time): these structures
  // are single-threaded with short operations, so 1500 images per run still
  // reach every kind of crash point many times (and the exhaustive runs
  // below and in tests.cpp cover every point of a short history).
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

}  // namespace pmindex::pmemids
