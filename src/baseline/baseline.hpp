// Baselines: volatile DRAM indexes a user would otherwise compare against,
// registered like any index so the harness runs them the same way.
//
//   stdmap      std::map (red-black tree) behind a std::shared_mutex
//   btree-dram  abseil's absl::btree_map (Debian libabsl-dev) behind a
//               std::shared_mutex; present when pmindex was built with abseil
//   tbb-map     oneTBB's tbb::concurrent_map (Debian libtbb-dev), a concurrent
//               skip list with a lock per entry; present when pmindex was
//               built with oneTBB (its guarantees and costs: tbb_map.hpp)
//
// Keys: keys=u64 maps uint64_t -> uint64_t; keys=bytes maps std::string ->
// std::string (keys up to 4096 bytes, values up to common::k_max_value).
// Guarantees of the locked two: linearizable (readers share the lock,
// writers own it); scans are atomic snapshots. Nothing is persistent, so
// they run in `dram` mode only and a pool holds none of their data. Cost:
// one lock acquisition per operation, no flushes. stats() reports the DRAM
// their nodes take.
// The harness's `null` index (does nothing) lives in bench/.
#pragma once

#include <memory>

#include "baseline/locked_map.hpp"
#include "common/kv_block.hpp"
#include "pmindex/index.hpp"

namespace pmindex::baseline {

// What every baseline's entry says: volatile, dram mode only, both key
// kinds with the same limits. The caller adds the scan guarantee and factory.
inline index_entry baseline_entry(std::string name, std::string description) {
  index_entry e;
  e.name = std::move(name);
  e.family = "baseline";
  e.description = std::move(description);
  e.concurrent = true;
  e.modes = {pm::mode::dram};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = 4096;
  e.max_value = common::k_max_value;  // as the persistent indexes (DRAM strings: no layout limit)
  return e;
}

// The entry of a locked map; `MapOf` is the map of one kind.
template <template <class, class, class, class> class MapOf>
index_entry make_baseline_entry(std::string name, std::string description) {
  index_entry e = baseline_entry(std::move(name), std::move(description));
  e.scan_guarantee = "atomic snapshot (scans hold the shared lock)";
  e.factory = [](pm::pool& p, open_kind, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<detail::locked_u64_index<MapOf>>(p);
    return std::make_unique<detail::locked_bytes_index<MapOf>>(p);
  };
  return e;
}

}  // namespace pmindex::baseline
