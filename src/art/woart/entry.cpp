// Registry entry of `woart` (see woart.hpp); the tree is the WORT-family core
// in art/detail/tree.hpp (keys=u64) or art/detail/bytes_tree.hpp (keys=bytes).
#include "art/woart/woart.hpp"

#include "art/detail/bytes_tree.hpp"
#include "art/detail/tree.hpp"

namespace pmindex::art::woart {
namespace {

struct policy {
  static constexpr const char* k_name = "woart";
  static constexpr unsigned k_span = 8;
  static constexpr bool k_adaptive = true;
  static constexpr bool k_cow_small = false;
  static constexpr bool k_cow_split = false;
  static constexpr uint64_t k_magic = 0x545241304f572d50ull;
  static constexpr uint64_t k_magic_bytes = 0x5342304f572d50ull;  // keys=bytes
};

index_entry make_entry() {
  index_entry e;
  e.name = "woart";
  e.family = "art";
  e.description = "WOART adaptive radix tree, 8-byte atomic commits";
  e.paper = "WORT (FAST'17)";
  e.concurrent = true;  // one reader-writer lock
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = detail::art_bytes_index<policy>::k_max_key;
  e.max_value = detail::art_bytes_index<policy>::k_max_value;
  e.scan_guarantee = "atomic snapshot (a scan or range holds the shared lock throughout)";
  // In the order of detail::mutant (art/detail/nodes.hpp): an in-place u64
  // insert that makes its commit durable before the child word; a byte-key
  // leaf published unflushed.
  e.mutants = {
      {"node4_child_after_meta", "Node4 meta word durable before the child word", "crashtest",
       "--images 1000 --ops 300 --keys 200 --seed 1 --max-violations 1", "node4 valid slot without child"},
      {"node16_bitmap_before_child", "Node16 bitmap durable before the child word", "crashtest",
       "--images 1000 --ops 300 --keys 200 --seed 1 --max-violations 1", "node16 valid slot without child"},
      {"node48_index_before_child", "Node48 index byte durable before the child word", "crashtest",
       "--images 1000 --ops 300 --keys 200 --seed 1 --max-violations 1", "node48 indexed slot without child"},
      {"bytes_leaf_unflushed", "keys=bytes: a new leaf's kv block published before it is flushed",
       "crashtest", "--images 1000 --ops 300 --keys 200 --seed 1 --max-violations 1",
       "recovered absent|disagrees with its path|leaf of [0-9]+ bytes|damaged leaf"},
  };
  // Exhaustive crash points over a history in which one node passes
  // Node4 -> 16 -> 48 -> 256 and prefixes split at every depth (400 keys: the
  // first 300 operations only grow); --stats proves the growth happened.
  e.tests = test_profile{};
  // Ranges must be atomic snapshots in both layouts (`stress --check
  // snapshot`; the generic index::range failed it: tests/unit/wort_range_test.cpp).
  e.tests->extra = {
      {"exhaustive_growth", "crashtest --index woart --exhaustive --ops 300 --keys 400 --seed 6 --stats",
       "node256=[1-9]", " [1-9][0-9]* violations"},
      {"snapshot", "stress --index woart --threads 2 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
      {"snapshot_bytes", "stress --index woart --params keys=bytes --threads 2 --seconds 2 --check snapshot",
       "", " [1-9][0-9]* violations"},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    // The byte-path mutant runs the byte layout whatever keys= says: its
    // generated test passes only mutant=NAME (8-byte keys through the u64
    // calls then reach the byte layout).
    if (c.keys() == key_kind::bytes || c.mutant() == "bytes_leaf_unflushed")
      return std::make_unique<detail::art_bytes_index<policy>>(p, k, c);
    return std::make_unique<detail::art_index<policy>>(p, k, c);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::art::woart
