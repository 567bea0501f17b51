// Parameters the PermART suites share (permart_test.cpp, permart_bytes_test.cpp):
// both indexes in dram, persist and eadr, and a stats() figure by name.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "pmindex/index.hpp"
#include "test_seed.hpp"

namespace pmindex::test::permart {

inline size_t scaled(size_t n) { return long_run() ? n * 20 : n; }

struct param {
  std::string index;
  pm::mode mode;
};

inline std::string pname(const testing::TestParamInfo<param>& p) {
  std::string s = p.param.index + "_" + std::string(pm::to_string(p.param.mode));
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Both indexes in dram, persist and eadr, filtered for the suites whose
// tests only apply to some of them (instead of skipping at run time).
inline std::vector<param> params(bool (*keep)(const param&) = nullptr) {
  std::vector<param> v;
  for (const char* n : {"permart", "permart-2log"})
    if (find_index(n))
      for (auto m : {pm::mode::dram, pm::mode::persist, pm::mode::eadr})
        if (!keep || keep({n, m})) v.push_back({n, m});
  return v;
}

inline double stat(index& idx, const std::string& name) {
  for (auto& [k, v] : idx.stats().extra)
    if (k == name) return v;
  return -1;
}

}  // namespace pmindex::test::permart
