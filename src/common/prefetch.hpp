// Asking for a whole block's cache lines at once: a node whose live slots
// are spread over it, read in key order rather than in place order, would
// otherwise take its misses one after another.
#pragma once

#include <cstddef>

namespace pmindex::common {

// Every 64-byte line of [p + from, p + bytes) (p line-aligned: nodes are;
// `from`: the lines before it are already read).
inline void prefetch_lines(const void* p, size_t bytes, size_t from = 0) noexcept {
  const char* b = static_cast<const char*>(p);
  for (size_t i = from; i < bytes; i += 64) __builtin_prefetch(b + i);
}

}  // namespace pmindex::common
