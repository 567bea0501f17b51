#include "sparse_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace pmindex::bench {

bool write_nonzero_pages(int fd, const char* p, size_t n, off_t at) {
  constexpr size_t k_page = 4096;
  static const char k_zeros[k_page] = {};
  const auto zero = [&](size_t i) { return std::memcmp(p + i, k_zeros, std::min(n - i, k_page)) == 0; };
  for (size_t i = 0; i < n;) {
    if (zero(i)) {
      i += k_page;
      continue;
    }
    size_t end = i + k_page;
    while (end < n && !zero(end)) end += k_page;
    end = std::min(end, n);
    for (size_t done = i; done < end;) {
      const ssize_t w = ::pwrite(fd, p + done, end - done, at + static_cast<off_t>(done));
      if (w <= 0) return false;
      done += static_cast<size_t>(w);
    }
    i = end;
  }
  return true;
}

}  // namespace pmindex::bench
