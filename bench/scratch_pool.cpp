#include "scratch_pool.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "pmindex/error.hpp"
#include "pmindex/pm/detail/header.hpp"

namespace pmindex::bench {

namespace {
bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
}  // namespace

scratch_pool::scratch_pool(std::string path) {
  const std::string marker = path + ".bench";
  if (exists(path)) {
    int fd = ::open(path.c_str(), O_RDONLY);
    char magic[8] = {};
    bool is_pool = fd >= 0 && ::pread(fd, magic, 8, 0) == 8 && std::memcmp(magic, pm::detail::k_magic, 8) == 0;
    bool busy = fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0;
    if (fd >= 0) ::close(fd);
    if (!is_pool)
      throw error(errc::io, path + " exists and is not a pmindex pool; the harness will not touch it (use --pool)");
    if (!exists(marker))
      throw error(errc::io, path + " holds a pmindex pool the harness did not make; remove it or use another --pool");
    if (busy) throw error(errc::io, "pool " + path + " is in use by another process (another bench?)");
    ::unlink(path.c_str());  // a leftover of a killed bench run
  }
  int m = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (m < 0) throw error(errc::io, "cannot create " + marker + ": " + std::strerror(errno));
  ::close(m);
  path_ = std::move(path);
}

scratch_pool::~scratch_pool() {
  if (path_.empty()) return;
  ::unlink(path_.c_str());
  ::unlink((path_ + ".bench").c_str());
}

}  // namespace pmindex::bench
