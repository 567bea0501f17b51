// Registry entry of `lbtree` (see lbtree.hpp); the tree is the hybrid B+-tree
// core in btree/detail/hybrid_tree.hpp with the LB+-Tree leaf (leaf.hpp).
#include "btree/lbtree/lbtree.hpp"

#include "btree/detail/hybrid_bytes.hpp"
#include "btree/detail/hybrid_tree.hpp"
#include "btree/lbtree/leaf.hpp"

namespace pmindex::btree::lbtree {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "lbtree";
  e.family = "btree";
  e.description = "LB+-Tree: 256-byte PM leaves, entry moving, logless splits, DRAM inner nodes";
  e.paper = "LB+-Tree (VLDB'20)";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  // Keys and values live in kv blocks (32-bit lengths); 4096 and 1 MiB are
  // the layout's limits (btree::detail::byte_keys), which recovery enforces.
  e.max_key = btree::detail::byte_keys::k_max_key;
  e.max_value = btree::detail::byte_keys::k_max_value;
  e.scan_guarantee =
      "sorted, no duplicates; each leaf read as one validated snapshot; a record present for the whole scan is "
      "returned";
  e.params = {{"inner", "separator keys per DRAM inner node", "15", {}, 3, 4096}};
  e.tests = test_profile{.crash_args = "--params inner=3", .crash_bytes_args = "--params inner=3"};
  // The byte layout's mutants (btree::detail::bytes_mutant, same order).
  e.mutants = {
      {"kv_block_unflushed", "keys=bytes: a record's kv block is published without being flushed", "crashtest",
       "--params keys=bytes,inner=3 --images 800 --ops 400 --keys 64 --seed 1 --max-violations 1",
       "record block"},
  };
  e.tests->extra = {
      // keys=bytes through the u64 calls (8-byte keys and values in record
      // blocks): leaf and inner splits with byte fences, 2 threads, and the
      // default leaf.
      {"crash_bytes_u64_calls", "crashtest --index lbtree --params keys=bytes,inner=3 --images 1500 --ops 1500 --seed 7"},
      {"crash_bytes_threads2",
       "crashtest --index lbtree --params keys=bytes,inner=3 --threads 2 --images 600 --ops 400 --seed 3"},
      {"crash_bytes_default_nodes",
       "crashtest --index lbtree --params keys=bytes --images 1000 --ops 1200 --keys 3000 --seed 23"},
      {"stress_bytes_small_nodes",
       "stress --index lbtree --params keys=bytes,inner=3 --threads 2 --seconds 3 --keys 3000 --check stats,range"},
      {"crash_default_inner", "crashtest --index lbtree --images 1500 --ops 800 --keys 1000 --seed 22"},
      {"stress_small_inner",
       "stress --index lbtree --params inner=3 --threads 2 --seconds 3 --keys 3000 --check stats,range"},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    namespace bd = btree::detail;
    if (c.keys() == key_kind::bytes)
      return std::make_unique<bd::hybrid_bytes<detail::leaf_ops<bd::byte_keys>>>(p, k, c);
    return std::make_unique<bd::hybrid_tree<detail::leaf_ops<bd::u64_keys>>>(p, k, c);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::btree::lbtree
