// pmindex errors: failures a user can cause (bad pool, full pool, bad option)
// are typed, carry a one-line message, and map to a distinct exit code.
// Invariant violations are bugs and use PMINDEX_ASSERT instead.
#pragma once

#include <stdexcept>
#include <string>

namespace pmindex {

// Exit codes of the `pmindex` command line; scripts rely on them, so values
// never change (add new ones at the end).
enum class errc : int {
  ok = 0,
  failure = 1,         // a check, verify or crash test found a violation
  usage = 2,           // unknown verb or option, bad option value
  missing_file = 3,    // the pool file does not exist (and creation not asked)
  not_a_pool = 4,      // wrong magic: the file is not a pmindex pool
  bad_version = 5,     // pool made by another format version
  wrong_index = 6,     // pool made for another index
  too_small = 7,       // pool file too small for its header or requested size
  pool_full = 8,       // no space left in the pool; nothing stored was lost
  key_too_long = 9,    // key longer than the index supports
  io = 10,             // open/mmap/ftruncate failed, or the pool already exists
  corrupt = 11,        // recovery found an inconsistent pool
  unsupported = 12,    // mode or feature the index does not support
  value_too_long = 13, // value longer than the index supports
  wrong_mode = 14,     // pool made in a mode this open cannot use (tx vs the others)
  out_of_memory = 15,  // a DRAM allocation failed (std::bad_alloc): the operation that met it
                       // had no effect or all of it; the pool stays consistent
};

class error : public std::runtime_error {
 public:
  error(errc code, const std::string& msg) : std::runtime_error(msg), code_(code) {}
  errc code() const noexcept { return code_; }
  int exit_code() const noexcept { return static_cast<int>(code_); }

 private:
  errc code_;
};

[[noreturn]] void assert_fail(const char* expr, const char* file, int line);

}  // namespace pmindex

#if defined(PMINDEX_ASSERTS)
#define PMINDEX_ASSERT(e) \
  ((e) ? (void)0 : ::pmindex::assert_fail(#e, __FILE__, __LINE__))
#else
#define PMINDEX_ASSERT(e) ((void)0)
#endif
