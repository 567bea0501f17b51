// The tests of `woart` (index_tests.hpp): its mutants, in the order of
// its mutant enum, and its test profile; its registry entry is entry.cpp.
#include "art/detail/tests.hpp"

namespace pmindex::builtin {

index_tests woart_tests() {
  index_tests e = art::detail::family_tests("woart", "node256=[1-9]");
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
  return e;
}

}  // namespace pmindex::builtin
