// Registry entry of `artcow` (see artcow.hpp); the tree, limits and tests are
// the WORT family's (art/detail/entry.hpp).
#include "art/artcow/artcow.hpp"

#include "art/detail/entry.hpp"
#include "builtin_indexes.hpp"

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
  index_entry e = detail::family_entry<policy>("ART with copy-on-write Node4/16 and splits");
  return e;
}

}  // namespace
}  // namespace pmindex::art::artcow

namespace pmindex::builtin {
index_entry artcow_entry() { return pmindex::art::artcow::make_entry(); }
}  // namespace pmindex::builtin
