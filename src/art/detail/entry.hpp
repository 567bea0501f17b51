// What the three registry entries of the WORT family (wort, woart, artcow)
// share: one tree core (art/detail/tree.hpp for keys=u64,
// art/detail/bytes_tree.hpp for keys=bytes) instantiated with each index's
// policy, the same limits and scan promise (their tests:
// art/detail/tests.hpp). Each entry.cpp names its policy and description.
#pragma once

#include <string>

#include "art/detail/bytes_tree.hpp"
#include "art/detail/tree.hpp"
#include "common/mutant.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::art::detail {

template <class Policy>
index_entry family_entry(const char* description) {
  const std::string name = Policy::k_name;
  index_entry e;
  e.name = name;
  e.family = "art";
  e.description = description;
  e.paper = "WORT (FAST'17)";
  e.concurrent = true;  // per-node version locks (art/detail/node_locks.hpp)
  e.modes = {pm::mode::dram, pm::mode::volatile_, pm::mode::persist, pm::mode::eadr};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = art_bytes_index<Policy>::k_max_key;
  e.max_value = art_bytes_index<Policy>::k_max_value;
  e.scan_guarantee = "atomic snapshot (a scan or range excludes writers throughout: it closes the writer gate)";
  e.factory = [](pm::pool& p, open_kind k, const index_config& c) -> std::unique_ptr<index> {
    // A byte-path mutant (bytes_*) runs the byte layout whatever keys= says:
    // its generated test passes only mutant=NAME (8-byte keys through the
    // u64 calls then reach the byte layout).
    if (c.keys() == key_kind::bytes || pmindex::detail::config_access::mutant(c).rfind("bytes_", 0) == 0)
      return std::make_unique<art_bytes_index<Policy>>(p, k, c);
    return std::make_unique<art_index<Policy>>(p, k, c);
  };
  return e;
}

}  // namespace pmindex::art::detail
