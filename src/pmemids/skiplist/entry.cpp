// Registry entry of the pmemids `skiplist` (see skiplist.hpp).
#include "pmemids/skiplist/skiplist.hpp"

namespace pmindex::pmemids::skiplist {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "skiplist";
  e.family = "pmemids";
  e.description = "pmemids skip list: p = 0.5, 16 levels, values in the nodes (persist: level 0 commits)";
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
      {"link_before_flush", "persist: a new node is linked at level 0 before it is flushed", "crashtest", crash, caught},
      {"tx_unlogged_link", "tx: an insert links level 0 without saving the old next word", "crashtest",
       crash + " --mode tx", caught},
      {"no_rebuild", "persist: recovery trusts the upper levels a crash left", "crashtest", crash, caught},
  };
  e.tests = test_profile{};
  const std::string tx = "crashtest --index skiplist --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 2500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      {"exhaustive_removes", "crashtest --index skiplist --exhaustive --ops 200 --keys 60 --seed 5", "", ""},
      {"tx_bytes", "crashtest --index skiplist --mode tx --params keys=bytes --dataset u64-bytes --value-size 100 "
                   "--images 1500 --ops 1500 --seed 7",
       "", ""},
      {"tx_long", tx + "--images 100000 --ops 3000 --keys 256 --seed 11", "", "", true},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<u64_front<list>>(p, k, c);
    return std::make_unique<bytes_front<list>>(p, k, c);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::pmemids::skiplist
