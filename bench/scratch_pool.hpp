// Pool files the harness makes for one run and removes afterwards. The
// harness never deletes a file it did not make: next to each pool it keeps a
// marker `<pool>.bench`; a leftover pool is removed only when its marker is
// there (a run that was killed), it is a pmindex pool, and no process holds
// it open. Anything else at the path is an error with a one-line message.
#pragma once

#include <string>

namespace pmindex::bench {

class scratch_pool {
 public:
  scratch_pool() = default;
  // Prepares `path` for a fresh pool (file modes); throws error(io).
  explicit scratch_pool(std::string path);
  ~scratch_pool();
  scratch_pool(scratch_pool&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  scratch_pool& operator=(scratch_pool&&) = delete;
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;  // empty: nothing to clean up
};

}  // namespace pmindex::bench
