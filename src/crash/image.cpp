#include "image.hpp"

#include <algorithm>
#include <cstring>

#include "pmindex/util/hash.hpp"

namespace pmindex::crash {

uint64_t combinations(const std::vector<candidate>& c) {
  uint64_t n = 1;
  for (auto& x : c) {
    n *= x.n + 1;  // + the current value
    if (n > k_enumerate_limit) return k_enumerate_limit + 1;
  }
  return n;
}

void apply_variant(const std::vector<candidate>& c, uint64_t seed, uint64_t point, uint64_t v, char* base) {
  const uint64_t combos = combinations(c);
  uint64_t digits = v;
  uint64_t r = util::splitmix_mix(seed ^ util::splitmix_mix(point ^ util::splitmix_mix(v)));
  for (auto& x : c) {
    uint32_t choice;  // 0..n-1: a recorded state; n: leave the current value
    if (combos <= k_enumerate_limit) {
      choice = static_cast<uint32_t>(digits % (x.n + 1));
      digits /= x.n + 1;
    } else if (v == 0) {
      choice = 0;
    } else if (v == 1) {
      choice = x.n;
    } else {
      r = util::splitmix_mix(r);
      choice = static_cast<uint32_t>(r % (x.n + 1));
    }
    if (choice < x.n) std::memcpy(base + x.line * k_line, x.state[choice], k_line);
  }
}

std::vector<uint64_t> pick_variants(uint64_t combos, uint64_t m, bench::rng& rng) {
  std::vector<uint64_t> v;
  if (combos <= k_enumerate_limit) {
    for (uint64_t i = 0; i < combos; ++i) v.push_back(i);
    std::shuffle(v.begin(), v.end(), rng);
    if (v.size() > m) v.resize(m);
    return v;
  }
  // Many lines: all-lost finds missing flushes, random mixes find ordering
  // bugs between lines, all-written-back is the normal case.
  uint64_t r = rng() % 8;
  v.push_back(r < 2 ? 0 : r == 2 ? 1 : 2 + rng() % (uint64_t{1} << 40));
  while (v.size() < m) {
    uint64_t x = 2 + rng() % (uint64_t{1} << 40);
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  }
  return v;
}

std::vector<uint64_t> all_variants(uint64_t combos, uint64_t random_extra) {
  std::vector<uint64_t> v;
  if (combos <= k_enumerate_limit) {
    for (uint64_t i = 0; i < combos; ++i) v.push_back(i);
    return v;
  }
  v = {0, 1};
  for (uint64_t i = 0; i < random_extra; ++i) v.push_back(2 + i);
  return v;
}

}  // namespace pmindex::crash
