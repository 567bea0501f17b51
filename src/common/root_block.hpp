// The root block of an index: the first block it allocates, named by the
// pool header's root word. Creation writes and persists it before the root
// word commits it; every later open checks it before trusting anything.
//
//   struct root { uint64_t magic; ... };   // magic first, one per index layout
#pragma once

#include <cstring>
#include <string>
#include <string_view>

#include "pmindex/error.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::common {

// Allocates a zeroed Root (at least `size` bytes), sets its magic, lets
// `init` fill the rest, persists it and commits it as the pool root.
template <class Root, class Init>
Root* create_root(pm::pool& p, uint64_t magic, Init&& init, size_t size = sizeof(Root)) {
  uint64_t off = p.alloc_or_throw(size);
  Root* r = p.ptr<Root>(off);
  std::memset(static_cast<void*>(r), 0, size);
  r->magic = magic;
  init(*r);
  p.persist(r, size);
  p.set_root(off);
  return r;
}
template <class Root>
Root* create_root(pm::pool& p, uint64_t magic, size_t size = sizeof(Root)) {
  return create_root<Root>(p, magic, [](Root&) {}, size);
}

// The pool's root, checked: inside the heap, aligned, allocated with at
// least `size` bytes, with the right magic; errc::corrupt otherwise.
template <class Root>
Root* attach_root(pm::pool& p, uint64_t magic, std::string_view index, size_t size = sizeof(Root)) {
  uint64_t off = p.root();
  if (!p.valid_block(off, size) || p.ptr<Root>(off)->magic != magic)
    throw error(errc::corrupt, std::string(index) + ": the pool has no valid root");
  return p.ptr<Root>(off);
}

}  // namespace pmindex::common
