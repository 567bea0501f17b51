// Datasets read from a file (dataset_file.cpp): file:PATH and words.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dataset.hpp"

namespace pmindex::bench {

// What loading a key file found.
struct load_report {
  uint64_t keys = 0;         // distinct keys kept
  uint64_t duplicates = 0;   // lines dropped as repeats of another
  uint64_t empty_lines = 0;  // skipped
  uint64_t total_bytes = 0;  // of the distinct keys
  size_t min_len = 0, p50_len = 0, p99_len = 0, max_len = 0;
};

// Reads `path` (plain or gzip): one key a line, '\n' ends a line, a '\r'
// before it is dropped, empty lines are skipped, duplicates dropped; ids are
// a random order of the distinct keys (from `seed`). Throws
// error(missing_file) (with `missing_hint` appended) when the file is not
// there, error(usage) when it holds no key, a NUL byte, a line over 65535
// bytes or corrupt gzip data, error(io) when reading fails.
std::unique_ptr<dataset> make_file_dataset(const std::string& name, const std::string& path, uint64_t seed,
                                           const std::string& missing_hint = "", load_report* rep = nullptr);
// "N keys (D duplicates and E empty lines dropped), length min ..., max ... bytes".
std::string describe(const load_report& r);

}  // namespace pmindex::bench
