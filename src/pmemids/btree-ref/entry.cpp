// Registry entry of the pmemids `btree-ref`: the btree (src/pmemids/btree)
// with values referenced by pointer, one value block per record (see
// btree.hpp, "btree-ref").
#include "pmemids/btree/btree.hpp"

namespace pmindex::pmemids::btree {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "btree-ref";
  e.family = "pmemids";
  e.description = "pmemids B-tree with values referenced by pointer (a value block per record), minimum degree 9";
  e.paper = "Performance study of Optane DC from indexing data structures' perspective (pmemids_bench, MSST'20)";
  e.concurrent = false;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::tx};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = k_max_ref_value;
  e.scan_guarantee =
      "sorted, no duplicates, every key >= from; single-threaded (the harness runs it behind one lock), so a scan "
      "sees exactly the records present when it runs";
  const std::string crash = "--ops 400 --images 3000 --keys 200 --max-violations 1";
  const std::string caught = "a completed operation was lost|check\\(\\) after recovery|recovery failed|never inserted";
  // In mutant enum order (btree.hpp): btree's three, then btree-ref's two.
  e.mutants = {
      {"publish_before_flush", "persist: a new node is linked before it is flushed", "crashtest", crash, caught},
      {"tx_unlogged_shift", "tx: a leaf insert shifts records it did not save in the undo log", "crashtest",
       crash + " --mode tx", caught},
      {"tx_unlogged_merge", "tx: a remove merges two nodes into one it did not save in the undo log", "crashtest",
       "--mode tx --exhaustive --ops 200 --keys 60 --seed 5 --max-violations 1", caught},
      {"value_not_flushed", "persist: a value block is linked without being flushed", "crashtest", crash,
       caught + "|wrong value|value"},
      {"tx_value_outside", "tx: a value block allocated outside the transaction (never flushed)", "crashtest",
       crash + " --mode tx", caught + "|wrong value|value"},
  };
  e.tests = test_profile{};
  const std::string tx = "crashtest --index btree-ref --mode tx ";
  e.tests->extra = {
      {"tx_random", tx + "--images 2500 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      {"exhaustive_removes", "crashtest --index btree-ref --exhaustive --ops 200 --keys 60 --seed 5", "", ""},
      {"tx_exhaustive_removes", tx + "--exhaustive --ops 200 --keys 60 --seed 5", "", ""},
      {"tx_bytes", "crashtest --index btree-ref --mode tx --params keys=bytes --dataset u64-bytes --value-size 100 "
                   "--images 1500 --ops 1500 --seed 7",
       "", ""},
      {"tx_long", tx + "--images 100000 --ops 3000 --keys 256 --seed 11", "", "", true},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::u64) return std::make_unique<u64_front<tree>>(p, k, c, true);
    return std::make_unique<bytes_front<tree>>(p, k, c, true);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::pmemids::btree
