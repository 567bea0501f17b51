// pmindex list [--detail] [--json]: the registry as people and scripts read
// it. The JSON form is what the generated tests are made from
// (tests/registry_tests.cmake), so every registered index is tested.
#include <cstdio>

#include "commands.hpp"
#include "json.hpp"
#include "index_tests.hpp"
#include "pmindex/error.hpp"

namespace pmindex::cli {

namespace {

std::string join_modes(const index_entry& e) {
  std::string s;
  for (auto m : e.modes) s += (s.empty() ? "" : ",") + std::string(pm::to_string(m));
  return s;
}
std::string join_kinds(const index_entry& e) {
  std::string s;
  for (auto k : e.key_kinds) s += (s.empty() ? "" : ",") + std::string(to_string(k));
  return s;
}
std::string limits(const index_entry& e) {
  if (!e.supports(key_kind::bytes)) return "8 B keys, 8 B values";
  auto sz = [](size_t n) {
    return n >= (1u << 20) && n % (1u << 20) == 0 ? std::to_string(n >> 20) + " MiB"
                                                  : std::to_string(n) + " B";
  };
  return "keys <= " + sz(e.max_key) + ", values <= " + sz(e.max_value);
}

bench::json::value to_json(const index_entry& e) {
  using bench::json::value;
  auto j = value::object();
  j["name"] = e.name;
  j["family"] = e.family;
  j["description"] = e.description;
  j["paper"] = e.paper;
  j["concurrent"] = e.concurrent;
  j["ordered"] = e.ordered;
  j["persistent"] = e.persistent();
  auto modes = value::array();
  for (auto m : e.modes) modes.push_back(std::string(pm::to_string(m)));
  j["modes"] = modes;
  auto kinds = value::array();
  for (auto k : e.key_kinds) kinds.push_back(std::string(to_string(k)));
  j["key_kinds"] = kinds;
  j["max_key"] = uint64_t(e.max_key);
  j["max_value"] = uint64_t(e.max_value);
  j["key_limit"] = key_limit(e, "");
  j["scan_guarantee"] = e.scan_guarantee;
  auto params = value::array();
  for (auto& p : e.params) {
    auto o = value::object();
    o["name"] = p.name;
    o["help"] = p.help;
    o["default"] = p.def;
    if (p.choices.empty()) {
      o["min"] = p.min;
      o["max"] = p.max;
    } else {
      auto c = value::array();
      for (auto& x : p.choices) c.push_back(x);
      o["choices"] = c;
    }
    params.push_back(o);
  }
  j["params"] = params;
  const index_tests tests = find_index_tests(e.name);
  auto mutants = value::array();
  for (auto& m : tests.mutants) {
    auto o = value::object();
    o["name"] = m.name;
    o["help"] = m.help;
    o["checker"] = m.checker;
    o["args"] = m.args;
    o["message"] = m.message;
    mutants.push_back(o);
  }
  j["mutants"] = mutants;
  if (tests.tests) {
    auto t = value::object();
    t["crash_args"] = tests.tests->crash_args;
    t["crash_bytes_args"] = tests.tests->crash_bytes_args;
    t["bytes_long_dataset"] = tests.tests->bytes_long_dataset;
    t["bytes_short_dataset"] = tests.tests->bytes_short_dataset;
    t["stress_args"] = tests.tests->stress_args;
    t["crash_images"] = uint64_t(tests.tests->crash_images);
    t["kill_verify"] = tests.tests->kill_verify;
    t["params"] = tests.tests->params;
    t["kill_keys"] = tests.tests->kill_keys;
    auto extra = value::array();
    for (auto& x : tests.tests->extra) {
      auto o = value::object();
      o["name"] = x.name;
      o["args"] = x.args;
      o["pass"] = x.pass;
      o["fail"] = x.fail;
      o["long"] = x.long_run;
      o["test_build_only"] = x.test_build_only;
      extra.push_back(o);
    }
    t["extra"] = extra;
    j["tests"] = t;
  } else {
    j["tests"] = value();
  }
  return j;
}

}  // namespace

int cmd_list(args& a) {
  bool json = a.flag("json");
  bool detail = a.flag("detail");
  a.finish();
  auto all = registered_indexes();
  if (json) {
    auto arr = bench::json::value::array();
    for (auto& e : all) arr.push_back(to_json(*e));
    auto doc = bench::json::value::object();
#ifdef PMINDEX_MUTANTS
    doc["test_build"] = true;
#else
    doc["test_build"] = false;
#endif
    doc["indexes"] = arr;
    std::printf("%s\n", bench::json::dump(doc).c_str());
    return 0;
  }
  std::printf("%-14s %-4s %-4s %-10s %-30s %s\n", "index", "mt", "ord", "keys", "modes", "description");
  for (auto& e : all) {
    std::printf("%-14s %-4s %-4s %-10s %-30s %s\n", e->name.c_str(), e->concurrent ? "yes" : "no",
                e->ordered ? "yes" : "no", join_kinds(*e).c_str(), join_modes(*e).c_str(), e->description.c_str());
    if (!detail) continue;
    if (!e->paper.empty()) std::printf("    paper:  %s\n", e->paper.c_str());
    std::printf("    limits: %s\n", limits(*e).c_str());
    if (uint64_t kl = key_limit(*e, ""))
      std::printf("    key limit: keys below %llu (with the default params)\n", static_cast<unsigned long long>(kl));
    if (e->ordered) std::printf("    scans beside writers: %s\n", e->scan_guarantee.c_str());
    else std::printf("    ordered: no (scan and range: not supported)\n");
    std::string ps = "keys=" + join_kinds(*e).substr(0, join_kinds(*e).find(',')) + " (" + join_kinds(*e) + ")";
    for (auto& p : e->params)
      ps += ", " + p.name + "=" + p.def +
            (p.choices.empty() ? " [" + std::to_string(p.min) + ".." + std::to_string(p.max) + "]" : "");
    std::printf("    params: %s\n", ps.c_str());
    if (auto mutants = find_index_tests(e->name).mutants; !mutants.empty()) {
      std::string ms;
      for (auto& m : mutants) ms += (ms.empty() ? "" : ", ") + m.name;
      std::printf("    mutants (test builds): %s\n", ms.c_str());
    }
  }
  std::printf("\nmodes: dram (anonymous memory), volatile (pool file, no flushes), persist (flush+fence,\n"
              "default), eadr (fence only), tx (undo-logged transactions)\n"
              "keys: u64 (8-byte integer keys, 8-byte values: the fast path), bytes (byte strings);\n"
              "      chosen at creation with --params keys=... (`pmindex list --detail` for limits)\n"
              "flush instruction on this CPU: %s\n",
              std::string(pm::to_string(pm::best_flush())).c_str());
  return 0;
}

}  // namespace pmindex::cli
