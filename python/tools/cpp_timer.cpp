// The C++ side of python/tools/bench_batch.py: the same runs as tight C++
// loops over the Index interface, built with the module's own flags (the
// target pmindex_python_timer of the pip build directory):
//   cpp_timer INDEX N DIR  ->  Mops/s of lookups of the N present keys in
//   random order, and of N fresh inserts into an index of N records.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "pmindex/index.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double cpu_now() {  // this thread's CPU time (a shared machine inflates wall time)
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: cpp_timer INDEX N DIR\n");
    return 2;
  }
  std::string name = argv[1], dir = argv[3];
  size_t n = std::strtoull(argv[2], nullptr, 10);
  std::mt19937_64 rng(1);
  std::unordered_set<uint64_t> seen;
  std::vector<uint64_t> keys;
  while (keys.size() < 2 * n)
    if (uint64_t k = rng(); seen.insert(k).second) keys.push_back(k);
  std::vector<uint64_t> present(keys.begin(), keys.begin() + n), fresh(keys.begin() + n, keys.end());
  pmindex::options o;
  o.index = name;
  o.pool_size = std::max<uint64_t>(64 << 20, 400 * n);
  o.quiet = true;
  for (int run = 0; run < 2; ++run) {
    o.pool_path = dir + "/cpp-timer-" + std::to_string(getpid()) + ".pool";
    auto idx = pmindex::open(o);
    for (uint64_t k : present) idx->insert(k, k);
    if (run == 0) {
      std::vector<uint64_t> order = present;
      std::shuffle(order.begin(), order.end(), rng);
      uint64_t sum = 0;
      auto t = std::chrono::steady_clock::now();
      double c = cpu_now();
      for (uint64_t k : order) sum += idx->lookup(k).value_or(0);
      double s = seconds_since(t);
      c = cpu_now() - c;
      std::printf("lookup %.3f Mops/s  (%.3f per CPU second) [%llu]\n", n / s / 1e6, n / c / 1e6,
                  static_cast<unsigned long long>(sum & 1));
    } else {
      auto t = std::chrono::steady_clock::now();
      double c = cpu_now();
      for (uint64_t k : fresh) idx->upsert(k, k);
      double s = seconds_since(t);
      c = cpu_now() - c;
      std::printf("upsert %.3f Mops/s  (%.3f per CPU second)\n", n / s / 1e6, n / c / 1e6);
    }
    idx->close();
    idx.reset();
    std::remove(o.pool_path.c_str());
  }
  return 0;
}
