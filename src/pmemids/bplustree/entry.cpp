// Registry entry of the pmemids `bplustree` (see bplustree.hpp).
#include "pmemids/bplustree/bplustree.hpp"

namespace pmindex::pmemids::bplustree {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "bplustree";
  e.family = "pmemids";
  e.description = "pmemids B+-tree: 16-record leaves with a slot bitmap (the 8-byte commit), values in the leaves";
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
  // Crash runs: short histories still split (16 records a leaf).
  const std::string crash = "--ops 400 --images 3000 --keys 200 --max-violations 1";
  const std::string caught = "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted";
  e.mutants = {
      {"bitmap_before_record", "persist: the bitmap bit is stored before the record is flushed", "crashtest", crash,
       caught},
      {"tx_unlogged_bitmap", "tx: an insert sets its bitmap bit without saving the old word", "crashtest",
       crash + " --mode tx", caught},
      {"link_before_flush", "persist: a split links its new nodes before they are flushed", "crashtest", crash,
       caught},
  };
  e.tests = test_profile{};
  const std::string tx = "crashtest --index bplustree --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 2500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      // Exhaustive over histories that split leaves and the root, then empty them.
      {"exhaustive_splits", "crashtest --index bplustree --exhaustive --ops 200 --keys 60 --seed 5", "", ""},
      {"tx_exhaustive_splits", tx + "--exhaustive --ops 200 --keys 60 --seed 5", "", ""},
      {"tx_bytes", "crashtest --index bplustree --mode tx --params keys=bytes --dataset u64-bytes --value-size 100 "
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
}  // namespace pmindex::pmemids::bplustree
