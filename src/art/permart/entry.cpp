// Registry entries of `permart` and `permart-2log` (see permart.hpp).
#include "art/permart/permart.hpp"
#include "art/permart/bytes_tree.hpp"
#include "art/permart/tree.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::art::permart {
namespace {

index_entry make_entry(bool log) {
  index_entry e;
  e.name = log ? "permart-2log" : "permart";
  e.family = "art";
  e.description = log ? "PermART (2-Log): two in-node log entries per big leaf (one fence per logged update)"
                      : "PermART: persistent multiversion ART, ROWEX, linearizable range queries";
  e.paper = "ART That Lasts (SIGMOD'26)";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = k_max_key;
  e.max_value = k_max_value;
  e.scan_guarantee = "atomic snapshot (linearizable range queries over versioned pointers)";
  // In the order of enum class mutant (permart.hpp).
  const std::string crash = "--images 600 --ops 300 --seed 5 --max-violations 1";
  e.mutants = {
      {"publish_before_flush", "slot stored before the new node's flush is fenced", "crashtest", crash,
       "(recovery failed|after recovery): permart"},
      {"flush_without_fence", "an operation returns with its slot flushed, not fenced", "crashtest", crash,
       "a completed operation was lost"},
      {"free_before_durable", "the replaced node is freed before the swing is durable", "crashtest", crash,
       "a completed operation was lost"},
      {"scan_not_atomic", "scans read current versions, not their snapshot's", "stress",
       "--threads 1 --seconds 3 --mode dram --check snapshot", "matches no state between ops"},
      {"block_unflushed", "keys=bytes: a key or value block is published without its flush", "crashtest",
       crash + " --dataset u64-bytes --value-size 100",
       "damaged (key|value) block|never written|never inserted"},
      {"link_nulled_early", "a removed slot's version link is nulled before its grace period", "stress",
       "--threads 1 --seconds 3 --mode dram --check snapshot", "matches no state between ops"},
      {"count_before_child", "a child added in place is counted before its leaf, byte and slot are durable",
       "crashtest", "--images 1000 --ops 1000 --keys 64 --seed 5 --max-violations 1",
       "(recovery failed|after recovery|was lost|damaged)"},
  };
  // Range queries are atomic snapshots under concurrent writes.
  e.tests = test_profile{};
  e.tests->extra = {
      {"snapshot", "stress --index " + e.name + " --threads 2 --seconds 3 --check snapshot"},
      {"snapshot_dram", "stress --index " + e.name + " --threads 1 --seconds 2 --mode dram --check snapshot"},
      {"snapshot_long", "stress --index " + e.name + " --threads 4 --seconds 60 --check snapshot,range", "", "", true},
  };
  e.factory = [log](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    if (c.keys() == key_kind::bytes) return std::make_unique<detail::bytes_tree>(p, k, c, log);
    return std::make_unique<detail::tree>(p, k, c, log);
  };
  return e;
}
index_entry make_permart() { return make_entry(false); }
index_entry make_permart_2log() { return make_entry(true); }

}  // namespace
}  // namespace pmindex::art::permart

namespace pmindex::builtin {
index_entry permart_entry() { return pmindex::art::permart::make_permart(); }
index_entry permart_2log_entry() { return pmindex::art::permart::make_permart_2log(); }
}  // namespace pmindex::builtin
