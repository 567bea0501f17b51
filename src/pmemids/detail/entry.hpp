// What the registry entries of the pmemids structures share: the paper,
// single-threaded, the four modes, u64 and byte keys (front.hpp) with the
// `value` slot parameter, the factory over the two fronts, the mutants'
// crash run and message, and the tx-mode crash tests. A structure's
// entry.cpp adds its name, description, ordering, mutants and extra tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pmemids/detail/front.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids {

// Mutant runs: short histories over 200 keys (enough to split nodes or
// double a table), stopped at the first violation, and what it must say.
inline const std::string k_mutant_crash = "--ops 400 --images 3000 --keys 200 --max-violations 1";
inline const std::string k_mutant_lost =
    "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted";

template <class Core>
index_entry structure_entry(std::string name, std::string description, bool ordered) {
  index_entry e;
  e.name = std::move(name);
  e.family = "pmemids";
  e.description = std::move(description);
  e.paper = "Performance study of Optane DC from indexing data structures' perspective (pmemids_bench, MSST'20)";
  e.concurrent = false;
  e.ordered = ordered;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = 256;
  if (!ordered) e.scan_guarantee = "unordered: scan and range are not supported (errc::unsupported)";
  e.params = {{"value", "keys=bytes: the longest value (the value slot of every record)", "100", {}, 8, 256}};
  e.tests = test_profile{};
  // Crash runs in tx mode (the generated ones run persist).
  const std::string tx = "crashtest --index " + e.name + " --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 2500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      {"tx_bytes", tx + "--params keys=bytes --dataset u64-bytes --value-size 100 --images 1500 --ops 1500 --seed 7", "",
       ""},
      {"tx_long", tx + "--images 100000 --ops 3000 --keys 256 --seed 11", "", "", true},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<u64_front<Core>>(p, k, c);
    return std::make_unique<bytes_front<Core>>(p, k, c);
  };
  return e;
}

}  // namespace pmindex::pmemids
