// Index parameters of the verbs that make small scratch pools of their own
// (crashtest: 8 MiB, damagetest: 2-4 MiB). An index with a key limit takes a
// fixed array at creation, sized by a parameter whose default does not fit
// such a pool (arraylist: 1.2M items of 128 bytes, 154 MB); these verbs
// create it with its test profile's params (test_profile::params, an array
// sized for them) beneath the ones the user gives, so that their defaults
// work for every registered index.
#pragma once

#include <set>
#include <string>

#include "index_tests.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::cli {

inline std::string scratch_params(const index_entry& e, const std::string& given) {
  const auto tests = find_index_tests(e.name).tests;
  if (!e.key_limit || !tests || tests->params.empty()) return given;
  auto names = [](const std::string& params, auto&& each) {
    for (size_t i = 0, j; i < params.size(); i = j + 1) {
      j = params.find(',', i);
      if (j == std::string::npos) j = params.size();
      const std::string kv = params.substr(i, j - i);
      if (!kv.empty()) each(kv.substr(0, kv.find('=')), kv);
    }
  };
  std::set<std::string> have;
  names(given, [&](const std::string& name, const std::string&) { have.insert(name); });
  std::string out = given;
  names(tests->params, [&](const std::string& name, const std::string& kv) {
    if (!have.count(name)) out += (out.empty() ? "" : ",") + kv;
  });
  return out;
}

}  // namespace pmindex::cli
