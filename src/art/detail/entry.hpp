// What the three registry entries of the WORT family (wort, woart, artcow)
// share: one tree core (art/detail/tree.hpp for keys=u64,
// art/detail/bytes_tree.hpp for keys=bytes) instantiated with each index's
// policy, the same limits, scan promise and tests. Each entry.cpp names its
// policy, description and mutants.
#pragma once

#include <string>

#include "art/detail/bytes_tree.hpp"
#include "art/detail/tree.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::art::detail {

// `growth_pass`: what the exhaustive-growth crash run's --stats must show
// (a regex; "" when the index has no Node256 to reach).
template <class Policy>
index_entry family_entry(const char* description, const char* growth_pass) {
  const std::string name = Policy::k_name;
  index_entry e;
  e.name = name;
  e.family = "art";
  e.description = description;
  e.paper = "WORT (FAST'17)";
  e.concurrent = true;  // per-node version locks (art/detail/node_locks.hpp)
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = art_bytes_index<Policy>::k_max_key;
  e.max_value = art_bytes_index<Policy>::k_max_value;
  e.scan_guarantee = "atomic snapshot (a scan or range excludes writers throughout: it closes the writer gate)";
  // Exhaustive crash points over a history in which one node passes
  // Node4 -> 16 -> 48 -> 256 and prefixes split at every depth (400 keys: the
  // first 300 operations only grow); --stats proves the growth happened.
  // Ranges must be atomic snapshots in both layouts (`stress --check
  // snapshot`; the generic index::range failed it: tests/unit/wort_range_test.cpp).
  e.tests = test_profile{};
  e.tests->extra = {
      {"exhaustive_growth", "crashtest --index " + name + " --exhaustive --ops 300 --keys 400 --seed 6 --stats",
       growth_pass, " [1-9][0-9]* violations"},
      {"snapshot", "stress --index " + name + " --threads 2 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
      {"snapshot_bytes", "stress --index " + name + " --params keys=bytes --threads 2 --seconds 2 --check snapshot",
       "", " [1-9][0-9]* violations"},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    // A byte-path mutant (bytes_*) runs the byte layout whatever keys= says:
    // its generated test passes only mutant=NAME (8-byte keys through the
    // u64 calls then reach the byte layout).
    if (c.keys() == key_kind::bytes || c.mutant().rfind("bytes_", 0) == 0)
      return std::make_unique<art_bytes_index<Policy>>(p, k, c);
    return std::make_unique<art_index<Policy>>(p, k, c);
  };
  return e;
}

}  // namespace pmindex::art::detail
