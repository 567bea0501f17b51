// A persistence observer sees every flush and fence of a pool before it
// executes. The crash checker installs one to shadow the durable image; pools
// without one pay a single predictable branch per primitive.
#pragma once

#include <cstddef>

namespace pmindex::pm {

class persist_observer {
 public:
  virtual ~persist_observer() = default;
  virtual void on_flush(const void* addr, size_t len) = 0;
  virtual void on_fence() = 0;
};

}  // namespace pmindex::pm
