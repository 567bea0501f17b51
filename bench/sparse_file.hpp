// Writing memory to a file as a sparse file: pages that hold only zeros are
// left as holes (they read back as zeros). A pool image is mostly zeros,
// and a file on a RAM disk takes memory, and time to write and to free,
// only for the pages written.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace pmindex::bench {

// Writes the 4 KiB pages of p[0, n) that hold a non-zero byte to `fd`, p[i]
// at file offset `at` + i, in runs of such pages; skips the others. False
// on a write error (errno says which).
bool write_nonzero_pages(int fd, const char* p, size_t n, off_t at);

}  // namespace pmindex::bench
