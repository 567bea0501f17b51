// Registry entry of `artcow` (see artcow.hpp); the tree is the WORT-family core
// in art/detail/tree.hpp (keys=u64) or art/detail/bytes_tree.hpp (keys=bytes).
#include "art/artcow/artcow.hpp"

#include "art/detail/bytes_tree.hpp"
#include "art/detail/tree.hpp"

namespace pmindex::art::artcow {
namespace {

struct policy {
  static constexpr const char* k_name = "artcow";
  static constexpr unsigned k_span = 8;
  static constexpr bool k_adaptive = true;
  static constexpr bool k_cow_small = true;
  static constexpr bool k_cow_split = true;
  static constexpr uint64_t k_magic = 0x574f432b5452412dull;
  static constexpr uint64_t k_magic_bytes = 0x5342432b5452412dull;  // keys=bytes
};

index_entry make_entry() {
  index_entry e;
  e.name = "artcow";
  e.family = "art";
  e.description = "ART with copy-on-write Node4/16 and splits";
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
      {"exhaustive_growth", "crashtest --index artcow --exhaustive --ops 300 --keys 400 --seed 6 --stats",
       "node256=[1-9]", " [1-9][0-9]* violations"},
      {"snapshot", "stress --index artcow --threads 2 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
      {"snapshot_bytes", "stress --index artcow --params keys=bytes --threads 2 --seconds 2 --check snapshot",
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
}  // namespace pmindex::art::artcow
