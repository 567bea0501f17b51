// Registry entry of the pmemids `rbtree` (see rbtree.hpp).
#include "pmemids/rbtree/rbtree.hpp"

namespace pmindex::pmemids::rbtree {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "rbtree";
  e.family = "pmemids";
  e.description = "pmemids red-black tree: rebalanced on every insert and remove, values in the nodes (persist: copy of the changed region + 8-byte commit)";
  e.paper = "Performance study of Optane DC from indexing data structures' perspective (pmemids_bench, MSST'20)";
  e.concurrent = false;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = 256;
  e.scan_guarantee =
      "sorted, no duplicates, every key >= from; single-threaded (the harness runs it behind one lock), so a scan "
      "sees exactly the records present when it runs";
  e.params = {{"value", "keys=bytes: the longest value (the value slot of every node)", "100", {}, 8, 256}};
  const std::string crash = "--ops 400 --images 3000 --keys 200 --max-violations 1";
  const std::string caught = "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted";
  e.mutants = {
      {"commit_before_flush", "persist: the commit word is stored before the copies are flushed", "crashtest", crash,
       caught},
      {"tx_unlogged_color", "tx: node headers (colours, children) changed without saving them", "crashtest",
       crash + " --mode tx", caught},
  };
  e.tests = test_profile{};
  const std::string tx = "crashtest --index rbtree --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 2500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      // Exhaustive over histories that fill 40 keys and empty them (every
      // rotation and recolouring case of insert and remove).
      {"exhaustive_removes", "crashtest --index rbtree --exhaustive --ops 120 --keys 40 --seed 5", "", ""},
      {"tx_exhaustive_removes", tx + "--exhaustive --ops 120 --keys 40 --seed 5", "", ""},
      {"tx_bytes", "crashtest --index rbtree --mode tx --params keys=bytes --dataset u64-bytes --value-size 100 "
                   "--images 1500 --ops 1500 --seed 7",
       "", ""},
      {"tx_long", tx + "--images 100000 --ops 3000 --keys 256 --seed 11", "", "", true},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<u64_front<tree>>(p, k, c);
    return std::make_unique<bytes_front<tree>>(p, k, c);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::pmemids::rbtree
