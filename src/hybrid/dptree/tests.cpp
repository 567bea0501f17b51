// The tests of `dptree` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "index_tests.hpp"

namespace pmindex::builtin {

index_tests dptree_tests() {
  index_tests e;
  // In the order of enum class mutant (dptree.hpp).
  const std::string crash =
      "--params leaf=4,merge_min=6 --images 800 --ops 400 --keys 48 --seed 5 --max-violations 1";
  e.mutants = {
      {"log_unflushed", "a write is acknowledged before its log record is durable", "crashtest", crash,
       "completed operation was lost|recovered absent, but a completed|completed operations left"},
      // A new leaf reachable before its first line is durable: lost writes,
      // or a recovery that refuses its slot word (which image comes first
      // depends on the merge thread's timing).
      {"flip_before_flush", "the version flips before the next-version metadata and stamps are durable",
       "crashtest", crash,
       "completed operation was lost|recovered absent, but a completed|completed operations "
       "left|check\\(\\)|recovery failed: dptree: a slot block outside the heap"},
      {"log_truncated_early", "the frozen buffer's log is invalidated before its merge commits", "crashtest",
       crash, "completed operation was lost|recovered absent, but a completed|completed operations left"},
      {"scan_duplicates", "a key in both a buffer and the base is scanned twice (the original's bug)",
       "crashtest", crash, "live run: scan|scan out of order"},
      {"carry_after_commit",
       "a partial merge carries its unplaced records to the next log after the commit, not before",
       "crashtest",
       "--params leaf=4,merge_min=6,fail_leaves=2 --exhaustive --ops 120 --keys 24 --seed 6 "
       "--max-violations 1",
       // A carried record lost: absent at recovery, or an update or remove
       // of it after recovery fails.
       "completed operation was lost|recovered absent, but a completed|completed operations "
       "left|after recovery: [a-z]+\\([0-9]+\\) returned false"},
      // A record without its fingerprint is invisible to lookups (and to
      // the presence checks of writes): the live run's lookups, or check().
      {"fingerprint_skipped", "a merge writes a new slot without its fingerprint", "crashtest", crash,
       "live run|wrong fingerprint|after recovery: [a-z]+\\([0-9]+\\) returned false"},
      // Found only after a crash that loses the fingerprint's line.
      {"fingerprint_unflushed", "a merge does not flush the fingerprints of the slots it writes",
       "crashtest", crash,
       "wrong fingerprint|completed operation was lost|recovered absent, but a completed"},
      // Per-thread logs without a per-key order: two threads' records of
      // one key in two logs. Replay refuses a record outside its key's
      // stripe (a check that also stops a later build's other hash).
      {"log_by_thread", "a writer logs to its thread's stripe of the log, not its key's", "crashtest",
       "--params leaf=4,merge_min=6 --threads 2 --keyset shared --images 400 --ops 400 --keys 32 --seed 5 "
       "--max-violations 1",
       "log of another stripe"},
      {"in_place_unflushed", "an update stored in its base slot is acknowledged before it is durable",
       "crashtest", crash, "completed operation was lost|recovered absent, but a completed|completed operations left|in flight allows only"},
      {"moving_unlisted", "a merge copies a leaf's records elsewhere without keeping updates in place out of it",
       "stress", "--params leaf=4,merge_min=4 --threads 4 --seconds 3 --keys 3000", "violation"},
      // An insert of a merged key the filter does not name succeeds twice:
      // the live run's oracle, or check().
      {"base_filter_skipped", "a merge places new records without adding their keys to the base filter",
       "crashtest", crash, "live run|the base filter misses"},
      // Inserts and removes that cycle over the same keys make a buffer's
      // log long while it holds few entries; a trim cuts the new buffer's
      // log under its cursors: its next record finds no room, or lands in
      // a freed chunk.
      {"trim_active_log", "a merge trims the log a buffer frozen since its commit writes to", "stress",
       "--params leaf=4,merge_min=4 --threads 4 --seconds 3 --keys 3000 --check stats,range", "violation"},
  };
  const std::string small = "--params leaf=4,merge_min=4";
  e.tests = test_profile{
      .crash_args = small, .crash_bytes_args = "--params leaf=4,merge_min=4", .stress_args = small};
  const std::string run = " --index dptree --params leaf=4,merge_min=4";
  e.tests->extra = {
      // Every persistence event of a history full of merges (leaf splits,
      // leaves emptied and unlinked) is a crash point, the merge thread's too.
      {"exhaustive_merges", "crashtest" + run + " --exhaustive --ops 120 --keys 24 --seed 6 --stats", "",
       " [1-9][0-9]* violations"},
      {"exhaustive_merges_bytes", "crashtest" + run + ",keys=bytes --exhaustive --ops 80 --keys 24 --seed 7",
       "", " [1-9][0-9]* violations"},
      // Partial merges (every 2nd new leaf refused): the carry to the next
      // log, and its crash points, in every history.
      {"exhaustive_partial_merges",
       "crashtest" + run + ",fail_leaves=2 --exhaustive --ops 120 --keys 24 --seed 6 --stats", "",
       " [1-9][0-9]* violations"},
      {"exhaustive_partial_merges_bytes",
       "crashtest" + run + ",keys=bytes,fail_leaves=2 --exhaustive --ops 80 --keys 24 --seed 7 --stats", "",
       " [1-9][0-9]* violations"},
      {"threads2_partial_merges",
       "crashtest" + run + ",fail_leaves=3 --threads 2 --images 800 --ops 600 --keys 32 --seed 8", "",
       " [1-9][0-9]* violations"},
      {"threads2_merges", "crashtest" + run + " --threads 2 --images 800 --ops 600 --keys 32 --seed 8", "",
       " [1-9][0-9]* violations"},
      {"threads4_merges_bytes",
       "crashtest" + run +
           ",keys=bytes --threads 4 --images 600 --ops 600 --keyset shared --keys 32 --seed 9",
       "", " [1-9][0-9]* violations"},
      {"default_leaves",
       "crashtest --index dptree --params merge_min=64 --images 600 --ops 1500 --keys 800 --seed 10", "",
       " [1-9][0-9]* violations"},
      {"stress_scans_small", "stress" + run + " --threads 4 --seconds 3 --keys 3000 --check stats,range", "",
       " [1-9][0-9]* violations"},
      {"snapshot", "stress" + run + " --threads 3 --seconds 2 --check snapshot", "",
       " [1-9][0-9]* violations"},
  };
  return e;
}

}  // namespace pmindex::builtin
