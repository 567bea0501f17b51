// What the registry entries of the hybrid B+-trees (fptree, lbtree) share:
// one core (btree/detail/hybrid_tree.hpp for keys=u64, hybrid_bytes.hpp for
// keys=bytes) over each index's leaf operations, the same limits and scan
// promise (their tests: btree/detail/tests.hpp). Each entry.cpp adds its
// parameters.
#pragma once

#include <string>

#include "btree/detail/hybrid_bytes.hpp"
#include "btree/detail/hybrid_tree.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::btree::detail {

template <template <class> class LeafOps>
index_entry hybrid_entry(const std::string& name, const char* description, const char* paper) {
  index_entry e;
  e.name = name;
  e.family = "btree";
  e.description = description;
  e.paper = paper;
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  // Keys and values live in kv blocks (32-bit lengths); 4096 and 128 MiB
  // are the layout's limits (byte_keys), which recovery enforces.
  e.max_key = byte_keys::k_max_key;
  e.max_value = byte_keys::k_max_value;
  e.scan_guarantee =
      "sorted, no duplicates; each leaf read as one validated snapshot; a record present for the whole scan is "
      "returned";
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::bytes) return std::make_unique<hybrid_bytes<LeafOps<byte_keys>>>(p, k, c);
    return std::make_unique<hybrid_tree<LeafOps<u64_keys>>>(p, k, c);
  };
  return e;
}

}  // namespace pmindex::btree::detail
