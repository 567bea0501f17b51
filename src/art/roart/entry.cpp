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
  // In the order of enum class mutant (roart.hpp).
  const std::string crash = "--params leaf=4 --images 600 --ops 300 --seed 5 --max-violations 1";
  e.mutants = {
      {"leaf_unflushed", "a leaf's slot is committed before the leaf is flushed", "crashtest",
       crash + " --dataset u64-bytes --value-size 100 --params keys=bytes",
       "fingerprint disagrees|never written|never inserted|outside the history|damaged|recovery failed"},
      {"split_swing_early", "a split swings the parent before its new nodes are durable", "crashtest", crash,
       "recovery failed: roart|after recovery: roart"},
      {"stale_volatile", "a leaf array's bitmap is trusted across a restart (no generation check)",
       "crashtest", crash, "a completed operation was lost"},
      {"insert_unlocked", "an insert into a leaf array stores its slot without the array's lock word", "stress",
       "--threads 4 --seconds 3 --keys 200", "stress: violation"},
  };
  e.tests = test_profile{.crash_args = "--params leaf=4", .crash_bytes_args = "--params leaf=4"};
  e.tests->extra = {
      // A history long enough to split leaf arrays into every node kind.
      {"exhaustive_growth", "crashtest --index roart --params leaf=2 --exhaustive --ops 300 --keys 400 --seed 6 --stats",
       "", " [1-9][0-9]* violations"},
      {"snapshot", "stress --index roart --threads 2 --seconds 2 --check snapshot", "", " [1-9][0-9]* violations"},
      {"snapshot_bytes", "stress --index roart --params keys=bytes --threads 2 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
  };
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
