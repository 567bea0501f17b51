#include "index_tests.hpp"

#include <map>
#include <mutex>

namespace pmindex {

namespace {

struct tests_state {
  std::mutex mu;
  std::map<std::string, index_tests, std::less<>> by_index;
};

// The table, with the built-in indexes' tests added once, on first use.
tests_state& state() {
  static tests_state s;
  static std::once_flag builtins;
  std::call_once(builtins, [] {
    const std::pair<const char*, index_tests (*)()> all[] = {
        {"arraylist", builtin::arraylist_tests},
        {"artcow", builtin::artcow_tests},
        {"bplustree", builtin::bplustree_tests},
        {"btree", builtin::btree_tests},
        {"btree-ref", builtin::btree_ref_tests},
        {"canary", builtin::canary_tests},
        {"dptree", builtin::dptree_tests},
        {"fptree", builtin::fptree_tests},
        {"hashtable", builtin::hashtable_tests},
        {"lbtree", builtin::lbtree_tests},
        {"linkedlist", builtin::linkedlist_tests},
        {"pactree", builtin::pactree_tests},
        {"permart", builtin::permart_tests},
        {"permart-2log", builtin::permart_2log_tests},
        {"pmasstree", builtin::pmasstree_tests},
        {"rbtree", builtin::rbtree_tests},
        {"roart", builtin::roart_tests},
        {"skiplist", builtin::skiplist_tests},
        {"utree", builtin::utree_tests},
        {"woart", builtin::woart_tests},
        {"wort", builtin::wort_tests},
    };
    std::lock_guard lk(s.mu);
    for (auto& [name, make] : all) s.by_index[name] = make();
  });
  return s;
}

std::vector<std::string> mutant_names(std::string_view index_name) {
  std::vector<std::string> v;
  for (auto& m : find_index_tests(index_name).mutants) v.push_back(m.name);
  return v;
}

// The registry checks "mutant=NAME" against these lists from the start of
// every program that links them (the command line, the tests).
[[maybe_unused]] const bool k_names_given = (detail::set_variant_names(mutant_names), true);

}  // namespace

index_tests find_index_tests(std::string_view index_name) {
  auto& s = state();
  std::lock_guard lk(s.mu);
  auto it = s.by_index.find(index_name);
  return it == s.by_index.end() ? index_tests{} : it->second;
}

void register_index_tests(std::string index_name, index_tests t) {
  auto& s = state();
  std::lock_guard lk(s.mu);
  s.by_index[std::move(index_name)] = std::move(t);
}

}  // namespace pmindex
