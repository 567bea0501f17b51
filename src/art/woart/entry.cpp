// Registry entry of `woart` (see woart.hpp); the tree, limits and tests are
// the WORT family's (art/detail/entry.hpp).
#include "art/woart/woart.hpp"

#include "art/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::art::woart {
namespace {

struct policy {
  static constexpr const char* k_name = "woart";
  static constexpr unsigned k_span = 8;
  static constexpr bool k_adaptive = true;
  static constexpr bool k_cow_small = false;
  static constexpr bool k_cow_split = false;
  static constexpr uint64_t k_magic = 0x545241304f572d50ull;
  static constexpr uint64_t k_magic_bytes = 0x5342304f572d50ull;  // keys=bytes
};

index_entry make_entry() {
  index_entry e = detail::family_entry<policy>("WOART adaptive radix tree, 8-byte atomic commits", "node256=[1-9]");
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

}  // namespace
}  // namespace pmindex::art::woart

namespace pmindex::builtin {
index_entry woart_entry() { return pmindex::art::woart::make_entry(); }
}  // namespace pmindex::builtin
