// The common part of the registry entries of the pmemids structures
// (btree, btree-ref, skiplist, bplustree, rbtree; unordered_entry: hashtable,
// linkedlist): single-threaded, modes
// dram / volatile / persist / tx, keys=u64 and keys=bytes (keys up to 16
// bytes, front.hpp) and the study's paper (their tests:
// pmemids/detail/tests.hpp). An entry.cpp adds its name and description.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pmemids/detail/front.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids {

// max_value: the longest value with keys=bytes; value_param: the `value`
// parameter sizes a value slot embedded in the nodes (false: values live in
// blocks of their own). Core(pool, kind, config, args...) is the structure.
template <class Core, class... A>
index_entry ordered_entry(std::string name, std::string description, uint64_t max_value, bool value_param,
                          A... args) {
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
  e.factory = [args...](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<u64_front<Core>>(p, k, c, args...);
    return std::make_unique<bytes_front<Core>>(p, k, c, args...);
  };
  return e;
}

// The same for an unordered structure (value slot of `value` bytes):
// scan and range throw errc::unsupported, the checkers read it by lookups.
template <class Core>
index_entry unordered_entry(std::string name, std::string description) {
  index_entry e = ordered_entry<Core>(std::move(name), std::move(description), 256, true);
  e.ordered = false;
  e.scan_guarantee = "unordered: scan and range are not supported (errc::unsupported)";
  return e;
}

}  // namespace pmindex::pmemids
