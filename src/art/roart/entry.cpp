// Registry entry of `roart` (see roart.hpp): one tree for both key kinds
// (keys=u64 stores 8-byte big-endian keys and 8-byte values as leaves).
#include "art/roart/roart.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::art::roart {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "roart";
  e.family = "art";
  e.description = "ROART: ART with 64-slot leaf arrays, one leaf per record, generation-based instant recovery";
  e.paper = "ROART (FAST'21)";
  e.concurrent = true;  // optimistic lock coupling; scans exclusive (atomic)
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = tree::k_max_key;
  e.max_value = tree::k_max_value;
  // A full leaf array splits into one array per distinct next key byte; from
  // about 10M random keys on most of those hold one or two records (measured:
  // 524 B/record at 10M), so a record may take a
  // 640-byte array block and its 32-byte leaf.
  e.pool_bytes_per_record = 768;
  e.scan_guarantee = "atomic snapshot (a scan or range excludes writers: it holds the tree lock exclusively)";
  e.params = {{"leaf", "records per leaf array before it splits (tests: small, so short histories split)",
               "64", {}, 2, 64}};
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    return std::make_unique<tree>(p, k, c);
  };
  return e;
}

}  // namespace
}  // namespace pmindex::art::roart

namespace pmindex::builtin {
index_entry roart_entry() { return pmindex::art::roart::make_entry(); }
}  // namespace pmindex::builtin
