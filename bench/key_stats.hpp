// What a dataset's first n keys look like (`pmindex keys`): lengths, how
// far sorted neighbours share prefixes (what radix trees and prefix
// compression see), whether they are distinct, and a few samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataset.hpp"
#include "json.hpp"

namespace pmindex::bench {

struct key_stats {
  std::string dataset;
  uint64_t seed = 0;
  uint64_t keys = 0;        // ids 0..keys-1
  uint64_t size = 0;        // keys the dataset holds
  size_t limit = 0;         // its longest possible key (max_key())
  uint64_t duplicates = 0;  // keys equal to their sorted predecessor (0: all distinct)
  size_t min_len = 0, p50_len = 0, p99_len = 0, max_len = 0;
  double mean_len = 0;
  uint64_t total_bytes = 0;
  double mean_prefix = 0;   // mean bytes shared with the sorted predecessor
  std::vector<std::string> samples;  // ids 0, 1, ... (up to `samples`); printed with bytes outside ASCII as \xNN
};

// Materialises ids [0, n) (views for file datasets, copies otherwise), sorts
// them and measures; n is clamped to the dataset's size.
key_stats measure_keys(const dataset& d, uint64_t seed, uint64_t n, size_t samples = 5);
json::value to_json(const key_stats& s);
// The human-readable block `pmindex keys` prints.
std::string to_text(const key_stats& s);

}  // namespace pmindex::bench
