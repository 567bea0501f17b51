// Registration of woart (see include/pmindex/art/woart/woart.hpp); the tree is the
// shared core in include/pmindex/art/detail/tree.hpp.
#include "pmindex/art/woart/woart.hpp"

#include "pmindex/art/detail/tree.hpp"

namespace pmindex::art::woart {

namespace {
struct policy {
  static constexpr const char* k_name = "woart";
  static constexpr unsigned k_span = 8;
  static constexpr bool k_adaptive = true;
  static constexpr bool k_cow_small = false;
  static constexpr bool k_cow_split = false;
  static constexpr uint64_t k_magic = 0x545241304f572d50ull;
};
}  // namespace

index_entry make_entry() {
  index_entry e;
  e.name = "woart";
  e.description = "WOART adaptive radix tree, 8-byte atomic commits (FAST'17)";
  e.concurrent = true;  // one reader-writer lock
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.factory = [](pm::pool& p, open_kind k) -> std::unique_ptr<index> {
    return std::make_unique<detail::art_index<policy>>(p, k);
  };
  return e;
}

}  // namespace pmindex::art::woart
