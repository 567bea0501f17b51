// How the indexes are tested: each index's mutants (deliberately broken
// variants, proven to be caught) and its test profile (how the generated
// tests run it: tests/registry_tests.cmake, from `pmindex list --json`).
// Test machinery, not part of the library's interface: a built-in index's
// folder holds its tests.cpp (listed in index_tests.cpp), next to its
// entry.cpp. Compiled into the checkers (pmindex_check), never into the
// library; test builds select a mutant with the index parameter
// "mutant=NAME" (common/mutant.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmindex/registry.hpp"

namespace pmindex {

// A deliberately broken variant of an index (test builds only), proven to be
// caught: `checker` is "crashtest" or "stress", `args` its extra options,
// and `message` a regular expression the violation it reports must match.
struct mutant_spec {
  std::string name;
  std::string help;
  std::string checker = "crashtest";
  std::string args;
  std::string message;
};

// One more test of an index: `pmindex <args>` (the args name the index),
// passing when its output matches the regular expression `pass` (empty: on
// exit code 0) and does not match `fail`.
struct extra_test {
  std::string name;  // test name: extra_<index>_<name>
  std::string args;
  std::string pass;
  std::string fail;
  bool long_run = false;         // only under --long
  bool test_build_only = false;  // needs the mutants (PMINDEX_TEST_BUILD)
};

// How the generated tests run an index (tests/registry_tests.cmake). Every
// index with a persistent mode must have one (a unit test checks it).
struct test_profile {
  std::string crash_args;         // extra `pmindex crashtest` options (e.g. "--params leaf=4")
  std::string crash_bytes_args;   // extra options for the byte-key crash run
  // Datasets of the byte-key runs (crash, kill/verify, stress): long keys
  // with 100-byte values, and short keys for the exhaustive run. An index
  // whose longest key is shorter than these datasets' keys names its own.
  std::string bytes_long_dataset = "urls";
  std::string bytes_short_dataset = "names";
  std::string stress_args;        // extra `pmindex stress` options
  uint32_t crash_images = 2500;   // random-mode images in the default run
  bool kill_verify = true;
  // Index params of the generated runs that take no other arguments:
  // kill/verify (`load`/`verify --params`) and damage (`damagetest
  // --params`), e.g. a small array for an index with a key limit; and the
  // keys kill/verify loads (0: its default, 200000).
  std::string params;
  uint64_t kill_keys = 0;
  std::vector<extra_test> extra;  // index-specific checks beyond the standard set
};

// The tests of one index. (Its fields are named as an index_entry's were,
// so a tests.cpp reads as its entry.cpp did.)
struct index_tests {
  // In the order of the index's mutant enum (common/mutant.hpp): the
  // position plus one is the id its code sees.
  std::vector<mutant_spec> mutants;
  std::optional<test_profile> tests;  // required for persistent indexes
};

// The tests of the index named `index_name` (none: empty). The built-in
// indexes' are added on first use.
index_tests find_index_tests(std::string_view index_name);
// Adds (or replaces) the tests of an index registered with register_index().
void register_index_tests(std::string index_name, index_tests t);

namespace builtin {
// Each built-in index's tests, from its folder's tests.cpp.
index_tests arraylist_tests();
index_tests artcow_tests();
index_tests bplustree_tests();
index_tests btree_tests();
index_tests btree_ref_tests();
index_tests canary_tests();
index_tests dptree_tests();
index_tests fptree_tests();
index_tests hashtable_tests();
index_tests lbtree_tests();
index_tests linkedlist_tests();
index_tests pactree_tests();
index_tests permart_tests();
index_tests permart_2log_tests();
index_tests pmasstree_tests();
index_tests rbtree_tests();
index_tests roart_tests();
index_tests skiplist_tests();
index_tests utree_tests();
index_tests woart_tests();
index_tests wort_tests();
}  // namespace builtin

namespace detail {
// How the registry learns the mutants' names (index_config::parse,
// "mutant=NAME"): index_tests.cpp sets this when it is linked in (the
// command line, the tests); the library alone knows none.
using variant_names_fn = std::vector<std::string> (*)(std::string_view index_name);
void set_variant_names(variant_names_fn f) noexcept;
}  // namespace detail

}  // namespace pmindex
