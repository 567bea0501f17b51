// Registry entry of `wort` (see wort.hpp); the tree, limits and tests are
// the WORT family's (art/detail/entry.hpp).
#include "art/wort/wort.hpp"

#include "art/detail/entry.hpp"
#include "builtin_indexes.hpp"

namespace pmindex::art::wort {
namespace {

struct policy {
  static constexpr const char* k_name = "wort";
  static constexpr unsigned k_span = 4;
  static constexpr bool k_adaptive = false;
  static constexpr bool k_cow_small = false;
  static constexpr bool k_cow_split = false;
  static constexpr uint64_t k_magic = 0x54524f572d50ull;
  static constexpr uint64_t k_magic_bytes = 0x53455442572d50ull;  // keys=bytes
};

index_entry make_entry() {
  index_entry e = detail::family_entry<policy>("WORT radix tree, 4-bit spans, 8-byte atomic commits");
  return e;
}

}  // namespace
}  // namespace pmindex::art::wort

namespace pmindex::builtin {
index_entry wort_entry() { return pmindex::art::wort::make_entry(); }
}  // namespace pmindex::builtin
