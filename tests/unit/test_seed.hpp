// Seeds for randomized tests. CI must be reproducible, so by default the
// seed is fixed per test (a hash of its full name); PMINDEX_SEED overrides
// it, and long runs (PMINDEX_LONG=1) draw a fresh one each time to explore.
// The seed is printed and recorded with the test, so a failure names it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace pmindex::test {

// The `--long` run (PMINDEX_LONG=1): bigger tests, fresh seeds.
inline bool long_run() {
  const char* v = std::getenv("PMINDEX_LONG");
  return v && *v && std::string(v) != "0";
}

inline uint64_t test_seed() {
  uint64_t s;
  if (const char* v = std::getenv("PMINDEX_SEED")) {
    s = std::strtoull(v, nullptr, 10);
  } else if (long_run()) {
    s = std::random_device{}();
  } else {
    auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
    s = std::hash<std::string>{}(name) & 0xffffffffu;
  }
  ::testing::Test::RecordProperty("seed", std::to_string(s));
  std::fprintf(stderr, "[ seed ] %llu (rerun with PMINDEX_SEED=%llu)\n", static_cast<unsigned long long>(s),
               static_cast<unsigned long long>(s));
  return s;
}

}  // namespace pmindex::test
