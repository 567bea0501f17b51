#include "prefill_cache.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "pmindex/error.hpp"
#include "sparse_file.hpp"

namespace pmindex::bench {

namespace {

constexpr uint64_t k_gib = uint64_t{1} << 30;

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

uint64_t allocated_bytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

// Free bytes of the file system at `dir`, and its size.
std::pair<uint64_t, uint64_t> fs_space(const std::string& dir) {
  struct statvfs v;
  if (::statvfs(dir.c_str(), &v) != 0) return {0, 0};
  return {static_cast<uint64_t>(v.f_bavail) * v.f_frsize, static_cast<uint64_t>(v.f_blocks) * v.f_frsize};
}

bool in_memory(const std::string& dir) {
  struct statfs f;
  return ::statfs(dir.c_str(), &f) == 0 && f.f_type == TMPFS_MAGIC;
}

// MemAvailable of /proc/meminfo in bytes; UINT64_MAX when unknown.
uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string name;
  uint64_t kb = 0;
  std::string unit;
  while (in >> name >> kb) {
    std::getline(in, unit);
    if (name == "MemAvailable:") return kb * 1024;
  }
  return UINT64_MAX;
}

struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void io_fail(const std::string& what, const std::string& path) {
  throw error(errc::io, what + " " + path + ": " + std::strerror(errno));
}

// Gives back the room of a file's holes of 1 MiB or more (on a RAM disk a
// reserved page that was never written still takes memory).
void release_holes(const std::string& path) {
  fd_guard f{::open(path.c_str(), O_RDWR | O_CLOEXEC)};
  if (f.fd < 0) return;
  struct stat st;
  if (::fstat(f.fd, &st) != 0) return;
  const off_t size = st.st_size;
  for (off_t pos = 0; pos < size;) {
    off_t hole = ::lseek(f.fd, pos, SEEK_HOLE);
    if (hole < 0 || hole >= size) break;
    off_t data = ::lseek(f.fd, hole, SEEK_DATA);
    if (data < 0) data = size;  // holes to the end
    if (data - hole >= (off_t{1} << 20))
      (void)::fallocate(f.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, hole, data - hole);
    pos = data;
  }
}

}  // namespace

void prefill_cache::copy_file(const std::string& from, const std::string& to) {
  fd_guard in{::open(from.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) io_fail("cannot open", from);
  fd_guard out{::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (out.fd < 0) io_fail("cannot create", to);
  struct stat st;
  if (::fstat(in.fd, &st) != 0) io_fail("cannot stat", from);
  const off_t size = st.st_size;
  if (::ftruncate(out.fd, size) != 0) io_fail("cannot size", to);
  // Window by window: a seek skips the holes (a pool file is mostly holes
  // past its high mark), a read takes the rest, and only pages that are not
  // all zeros are written. One extent at a time (copy_file_range per data
  // extent) costs two seeks and a call per page of a fragmented pool.
  constexpr off_t k_window = off_t{4} << 20, k_page = 4096;
  auto buf = std::make_unique<char[]>(k_window);
  off_t pos = 0;
  while (pos < size) {
    off_t data = ::lseek(in.fd, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // no data past pos
      data = pos;                 // no SEEK_DATA here: read everything
    }
    pos = data - data % k_page;
    const size_t len = static_cast<size_t>(std::min(size - pos, k_window));
    size_t got = 0;
    while (got < len) {
      const ssize_t r = ::pread(in.fd, buf.get() + got, len - got, pos + static_cast<off_t>(got));
      if (r <= 0) io_fail("cannot read", from);
      got += static_cast<size_t>(r);
    }
    if (!write_nonzero_pages(out.fd, buf.get(), len, pos)) io_fail("cannot write", to);
    pos += static_cast<off_t>(len);
  }
}

void prefill_cache::populate(const std::string& path, char* base, uint64_t len) {
  fd_guard in{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) return;
  constexpr off_t k_gap = off_t{1} << 20;  // smaller holes are filled on the way
  const off_t size = static_cast<off_t>(len);
  off_t pos = 0;
  while (pos < size) {
    const off_t data = ::lseek(in.fd, pos, SEEK_DATA);
    if (data < 0) break;
    off_t end = ::lseek(in.fd, data, SEEK_HOLE);
    if (end < 0) end = size;
    for (off_t next; end < size && (next = ::lseek(in.fd, end, SEEK_DATA)) >= 0 && next - end < k_gap;) {
      end = ::lseek(in.fd, next, SEEK_HOLE);
      if (end < 0) end = size;
    }
    const off_t lo = data & ~off_t{4095}, hi = std::min(size, (end + 4095) & ~off_t{4095});
    if (::madvise(base + lo, static_cast<size_t>(hi - lo), MADV_POPULATE_WRITE) != 0) {
      // An older kernel: a write fault per page, by rewriting one byte.
      for (off_t at = lo; at < hi; at += 4096) {
        auto* b = reinterpret_cast<volatile char*>(base + at);
        *b = *b;
      }
    }
    pos = end;
  }
}

bool prefill_cache::make_room(const std::string& dir, uint64_t need, const image* spare) {
  const bool ram = in_memory(dir);
  for (;;) {
    const auto [free, total] = fs_space(dir);
    // Room for `need` and a margin beside it; on a RAM disk the files are
    // memory too, and the index and the harness need theirs.
    const uint64_t margin = std::min(k_gib, total / 10);
    bool fits = free >= need + margin;
    if (fits && ram) {
      const uint64_t avail = mem_available();
      fits = avail == UINT64_MAX || avail >= need + 2 * k_gib;
    }
    if (fits) return true;
    auto victim = images_.end();
    for (auto it = images_.begin(); it != images_.end(); ++it)
      if (&*it != spare) victim = it;  // the last one not spared: least recently used
    if (victim == images_.end()) return false;
    images_.erase(victim);
  }
}

const prefill_cache::image* prefill_cache::restore(const std::string& key, const std::vector<std::string>& paths) {
  auto it = std::find_if(images_.begin(), images_.end(), [&](const image& m) { return m.key == key; });
  if (it == images_.end() || it->files.size() != paths.size()) return nullptr;
  images_.splice(images_.begin(), images_, it);
  image& m = images_.front();
  // The copy holds the written pages; the run's writes add to them: the
  // margin is their room (a write to a page the file system cannot give
  // would kill the run).
  if (!make_room(dir_of(paths.front()), m.bytes + k_gib, &m)) {
    images_.pop_front();  // it cannot be copied beside itself: the cell loads
    return nullptr;
  }
  for (size_t i = 0; i < paths.size(); ++i) copy_file(m.files[i].path(), paths[i]);
  return &m;
}

void prefill_cache::room_for_pool(const std::string& path, uint64_t size) {
  make_room(dir_of(path), size, nullptr);
}

bool prefill_cache::keep(const std::string& key, const std::vector<std::string>& paths, const run_result& loaded,
                         const std::vector<uint64_t>& prior, bool counts_compares) {
  images_.remove_if([&](const image& m) { return m.key == key; });
  image m;
  m.key = key;
  m.loaded = loaded;
  m.prior = prior;
  m.counts_compares = counts_compares;
  // The loaded pools become the image (no copy: a copy beside a pool that
  // reserved its whole size would need room for both), their reserved but
  // unwritten room given back.
  const uint64_t n = next_++;
  for (size_t i = 0; i < paths.size(); ++i) {
    m.files.emplace_back(paths.front() + ".prefill" + std::to_string(n) + (paths.size() > 1 ? "." + std::to_string(i) : ""));
    if (::rename(paths[i].c_str(), m.files.back().path().c_str()) != 0) io_fail("cannot keep", paths[i]);
    release_holes(m.files.back().path());
    m.bytes += allocated_bytes(m.files.back().path());
  }
  images_.push_front(std::move(m));
  // The cell runs on a copy, as every later cell of this prefill will.
  image& k = images_.front();
  if (make_room(dir_of(paths.front()), k.bytes + k_gib, &k)) {
    for (size_t i = 0; i < paths.size(); ++i) copy_file(k.files[i].path(), paths[i]);
    return true;
  }
  // No room for a copy beside it: the pools go back, and are not kept.
  for (size_t i = 0; i < paths.size(); ++i)
    if (::rename(k.files[i].path().c_str(), paths[i].c_str()) != 0) io_fail("cannot put back", paths[i]);
  images_.pop_front();
  return false;
}

}  // namespace pmindex::bench
