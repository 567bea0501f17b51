// Registry entry of the pmemids `linkedlist` (see linkedlist.hpp).
#include "pmemids/linkedlist/linkedlist.hpp"

namespace pmindex::pmemids::linkedlist {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "linkedlist";
  e.family = "pmemids";
  e.description = "pmemids append-only linked list in the pool, found through a DRAM hash table rebuilt at open (unordered)";
  e.paper = "Performance study of Optane DC from indexing data structures' perspective (pmemids_bench, MSST'20)";
  e.concurrent = false;
  e.ordered = false;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = 256;
  e.scan_guarantee = "unordered: scan and range are not supported (errc::unsupported)";
  e.params = {{"value", "keys=bytes: the longest value (the value slot of every element)", "100", {}, 8, 256}};
  const std::string crash = "--ops 400 --images 3000 --keys 200 --max-violations 1";
  const std::string lost = "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted";
  e.mutants = {
      {"publish_before_flush", "persist: a new element is linked before it is flushed", "crashtest", crash, lost},
      {"tx_unlogged_link", "tx: an insert stores the link to the new element without logging it (never flushed)",
       "crashtest", crash + " --mode tx", lost},
  };
  e.tests = test_profile{};
  const std::string tx = "crashtest --index linkedlist --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 2500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      {"tx_bytes", "crashtest --index linkedlist --mode tx --params keys=bytes --dataset u64-bytes --value-size 100 "
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
}  // namespace pmindex::pmemids::linkedlist
