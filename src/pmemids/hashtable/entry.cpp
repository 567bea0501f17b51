// Registry entry of the pmemids `hashtable` (see hashtable.hpp).
#include "pmemids/hashtable/hashtable.hpp"

namespace pmindex::pmemids::hashtable {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "hashtable";
  e.family = "pmemids";
  e.description = "pmemids chained hash table, load factor 0.75, new elements at the chain head (unordered)";
  e.paper = "Performance study of Optane DC from indexing data structures' perspective (pmemids_bench, MSST'20)";
  e.concurrent = false;
  e.ordered = false;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = 256;
  e.scan_guarantee = "unordered: scan and range are not supported (errc::unsupported)";
  e.params = {{"value", "keys=bytes: the longest value (the value slot of every element)", "100", {}, 8, 256}};
  // Crash runs: 200 keys take the table through four doublings.
  const std::string crash = "--ops 400 --images 3000 --keys 200 --max-violations 1";
  const std::string lost = "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted";
  e.mutants = {
      {"publish_before_flush", "persist: a new element is linked before it is flushed", "crashtest", crash, lost},
      {"resize_in_place", "persist: a resize relinks the chains the committed table still uses", "crashtest",
       crash, lost},
      {"tx_unlogged_head", "tx: an insert stores the chain head without logging it (never flushed at commit)",
       "crashtest", crash + " --mode tx", lost},
  };
  e.tests = test_profile{};
  const std::string tx = "crashtest --index hashtable --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 2500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      // Exhaustive over histories that double the table (16 -> 32 -> 64).
      {"exhaustive_resize", "crashtest --index hashtable --exhaustive --ops 70 --keys 60 --seed 5", "", ""},
      {"tx_exhaustive_resize", tx + "--exhaustive --ops 70 --keys 60 --seed 5", "", ""},
      {"tx_bytes", "crashtest --index hashtable --mode tx --params keys=bytes --dataset u64-bytes --value-size 100 "
                   "--images 1500 --ops 1500 --seed 7",
       "", ""},
      {"tx_long", tx + "--images 100000 --ops 3000 --keys 256 --seed 11", "", "", true},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<u64_front<hash_table>>(p, k, c);
    return std::make_unique<bytes_front<hash_table>>(p, k, c);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::pmemids::hashtable
