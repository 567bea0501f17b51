// Registry entry of `wort` (see wort.hpp); the tree is the WORT-family core
// in art/detail/tree.hpp (keys=u64) or art/detail/bytes_tree.hpp (keys=bytes).
#include "art/wort/wort.hpp"

#include "art/detail/bytes_tree.hpp"
#include "art/detail/tree.hpp"

namespace pmindex::art::wort {
namespace {

struct policy {
  static constexpr const char* k_name = "wort";
  static constexpr unsigned k_span = 4;
  static constexpr bool k_adaptive = false;
  static constexpr bool k_cow_small = false;
  static constexpr bool k_cow_split = false;
  static constexpr uint64_t k_magic = 0x54524f572d50ull;
  static constexpr uint64_t k_magic_bytes = 0x53455442572d50ull;  // keys=bytes
};

index_entry make_entry() {
  index_entry e;
  e.name = "wort";
  e.family = "art";
  e.description = "WORT radix tree, 4-bit spans, 8-byte atomic commits";
  e.paper = "WORT (FAST'17)";
  e.concurrent = true;  // one reader-writer lock
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = detail::art_bytes_index<policy>::k_max_key;
  e.max_value = detail::art_bytes_index<policy>::k_max_value;
  e.scan_guarantee = "atomic snapshot (a scan or range holds the shared lock throughout)";
  // Exhaustive crash points over a history in which one node passes
  // Node4 -> 16 -> 48 -> 256 and prefixes split at every depth (400 keys: the
  // first 300 operations only grow); --stats proves the growth happened.
  e.tests = test_profile{};
  // Ranges must be atomic snapshots in both layouts (`stress --check
  // snapshot`; the generic index::range failed it: tests/unit/wort_range_test.cpp).
  e.tests->extra = {
      {"exhaustive_growth", "crashtest --index wort --exhaustive --ops 300 --keys 400 --seed 6 --stats", "",
       " [1-9][0-9]* violations"},
      {"snapshot", "stress --index wort --threads 2 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
      {"snapshot_bytes", "stress --index wort --params keys=bytes --threads 2 --seconds 2 --check snapshot",
       "", " [1-9][0-9]* violations"},
  };
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::bytes) return std::make_unique<detail::art_bytes_index<policy>>(p, k, c);
    return std::make_unique<detail::art_index<policy>>(p, k, c);
  };
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::art::wort
