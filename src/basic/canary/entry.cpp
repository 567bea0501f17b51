// Registry entry of `canary` (see canary.hpp for the design).
#include "basic/canary/canary.hpp"

namespace pmindex::basic::canary {
namespace {

index_entry make_entry() {
  index_entry e;
  e.name = "canary";
  e.family = "basic";
  e.description = "persistent sorted skip list (substrate and crash-checker canary)";
  e.concurrent = true;
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64};
  e.scan_guarantee = "sorted, no duplicates; each record returned was present at some moment during the scan";
  // In the order of enum class mutant (canary.hpp).
  const std::string crash = "--ops 300 --images 3000 --max-violations 1";
  e.mutants = {
      {"publish_before_flush", "links a node before its contents are durable", "crashtest", crash, "damaged node"},
      {"flush_without_fence", "insert returns with its link flushed, not fenced", "crashtest", crash,
       "a completed operation was lost"},
      {"torn_16byte", "update writes two words in two lines, not atomically", "crashtest", crash, "torn value"},
      {"free_before_durable", "remove frees the node before the unlink is fenced", "crashtest", crash,
       "a freed block is still"},
  };
  e.tests = test_profile{};
  // The stress test must catch a use-after-free (a node freed while readers
  // may hold it); probabilistic, so long runs only.
  e.tests->extra = {{"stress_catches_free_before_durable",
                     "stress --index canary --mode dram --seconds 10 --keys 500 --params mutant=free_before_durable",
                     "stress: violation", "", true, true}};
  e.factory = make_canary;
  return e;
}

}  // namespace
PMINDEX_REGISTER_INDEX(make_entry);
}  // namespace pmindex::basic::canary
