// A persistence observer sees every flush and fence of a pool before it
// executes. The crash checker installs one to shadow the durable image; pools
// without one pay a single predictable branch per primitive.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pmindex::pm {

class persist_observer {
 public:
  virtual ~persist_observer() = default;
  // The pool's mapping, reported once before its first flush (creation
  // included), so the observer can shadow it; an observed pool is anonymous
  // memory of `size` bytes at `base`.
  virtual void on_map(char* base, uint64_t size) {
    (void)base;
    (void)size;
  }
  virtual void on_flush(const void* addr, size_t len) = 0;
  virtual void on_fence() = 0;
};

}  // namespace pmindex::pm
