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
  index_entry e = detail::family_entry<policy>("WOART adaptive radix tree, 8-byte atomic commits");
  return e;
}

}  // namespace
}  // namespace pmindex::art::woart

namespace pmindex::builtin {
index_entry woart_entry() { return pmindex::art::woart::make_entry(); }
}  // namespace pmindex::builtin
