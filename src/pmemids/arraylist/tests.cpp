// The tests of `arraylist` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "pmemids/detail/tests.hpp"

namespace pmindex::builtin {

index_tests arraylist_tests() {
  using namespace pmemids;
  // The generated crash runs use 512 slots (64 KiB of items in the checker's
  // 8 MiB pool): room for --keys 256 and the 24 probe keys above them.
  const std::string k_small = "--params capacity=512";
  // Fewer images than the other pmemids structures (800, as linkedlist):
  // the generated set stays near a minute under ASan; every mutant is
  // still caught within its first 120 images.
  const std::string run = "--ops 400 --images 800 --keys 200 --max-violations 1 " + k_small;
  index_tests e = ordered_tests(
      "arraylist",
      {crash_mutant("insert_unflushed", "persist: an insert stores the meta word and never flushes it", false, run),
       crash_mutant("update_in_place",
                    "persist, keys=bytes: an update overwrites the value copy in use (a crash tears it)", false,
                    run + " --params keys=bytes --dataset u64-bytes --value-size 100"),
       crash_mutant("tx_unlogged_remove", "tx: a remove clears the meta word without logging it (never flushed)", true,
                    run)},
      {});
  // A torn value: the update in flight left neither its old nor its new value.
  e.mutants[1].message = "in flight allows only";
  // A remove the crash undid: the key is back after its remove completed.
  e.mutants[2].message = "completed operations left absent";
  e.tests->crash_images = 800;
  e.tests->crash_args = k_small;
  e.tests->crash_bytes_args = k_small;
  e.tests->stress_args = "--params capacity=262144";
  // kill/verify and damage: 16384 slots (2 MiB; damage's pools are 4 MiB).
  e.tests->params = "capacity=16384";
  e.tests->kill_keys = 16000;
  const std::string tx = "crashtest --index arraylist --mode tx " + k_small + " ";
  e.tests->extra = {
      {"tx_random", tx + "--images 800 --ops 2500 --seed 1", "", ""},
      {"tx_exhaustive", tx + "--exhaustive --ops 50 --keys 16 --seed 2", "", ""},
      {"tx_bytes", tx + "--params keys=bytes --dataset u64-bytes --value-size 100 --images 500 --ops 1500 --seed 7",
       "", ""},
      {"tx_long", tx + "--images 100000 --ops 3000 --keys 256 --seed 11", "", "", true},
  };
  return e;
}

}  // namespace pmindex::builtin
