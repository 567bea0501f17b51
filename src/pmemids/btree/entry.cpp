// Registry entry of the pmemids `btree` (see btree.hpp).
#include "pmemids/btree/btree.hpp"

namespace pmindex::pmemids::btree {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "btree";
  e.family = "pmemids";
  e.description = "pmemids B-tree: values in the nodes, minimum degree 9, linear search (persist: copy-on-write)";
  e.paper = "Performance study of Optane DC from indexing data structures' perspective (pmemids_bench, MSST'20)";
  e.concurrent = false;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = 256;
  e.scan_guarantee =
      "sorted, no duplicates, every key >= from; single-threaded (the harness runs it behind one lock), so a scan "
      "sees exactly the records present when it runs";
  e.params = {{"value", "keys=bytes: the longest value (the value slot of every record)", "100", {}, 8, 256}};
  // Crash runs: short histories still split (17 records a node).
  const std::string crash = "--ops 400 --images 3000 --keys 200 --max-violations 1";
  e.mutants = {
      {"publish_before_flush", "persist: a new node is linked before it is flushed", "crashtest", crash,
       "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted"},
      {"tx_unlogged_shift", "tx: a leaf insert shifts records it did not save in the undo log", "crashtest",
       crash + " --mode tx", "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted"},
  };
  e.tests = test_profile{};
  // Byte keys are at most 16 bytes here, shorter than urls/names: the byte
  // runs take 8-byte keys (the checker adds their prefixes, the empty key too).
  e.tests->bytes_long_dataset = "u64-bytes";
  e.tests->bytes_short_dataset = "u64-bytes";
  const std::string tx = "crashtest --index btree --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 2500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      // Exhaustive over histories that split nodes (and the root) in both modes.
      {"exhaustive_splits", "crashtest --index btree --exhaustive --ops 90 --keys 60 --seed 5", "", ""},
      {"tx_exhaustive_splits", tx + "--exhaustive --ops 90 --keys 60 --seed 5", "", ""},
      {"tx_bytes", "crashtest --index btree --mode tx --params keys=bytes --dataset u64-bytes --value-size 100 "
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
}  // namespace pmindex::pmemids::btree
