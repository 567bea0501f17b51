// The registry of indexes. A built-in index is one folder under
// src/<family>/<name>/ whose entry.cpp fills one index_entry, listed in
// src/builtin_indexes.hpp; a program adds its own with register_index().
// Everything else (the `pmindex` verbs, the harness,
// the crash, kill/verify and stress test lists, the conformance suite,
// `pmindex list`) reads the registry. See docs/adding-an-index.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmindex/pm/pool.hpp"

namespace pmindex {

class index;
struct index_entry;

// The key kind an index instance is created for (see index.hpp).
enum class key_kind : uint8_t { u64, bytes };
std::string_view to_string(key_kind k) noexcept;

// One index parameter ("name=value" in --params, stored in the pool header
// at creation). Integers are checked against [min, max]; choices against the
// list. Unknown names are rejected (errc::usage).
struct param_spec {
  std::string name;
  std::string help;
  std::string def;                   // default, as text
  std::vector<std::string> choices;  // empty: an integer in [min, max]
  uint64_t min = 0, max = UINT64_MAX;
};

namespace detail {
struct config_access;  // src/common/mutant.hpp
}

// Parsed and checked parameters of one index instance, handed to its
// factory. Values are the canonical text ("leaf=4" -> get("leaf") == "4").
class index_config {
 public:
  key_kind keys() const noexcept { return keys_; }
  const std::string& get(const std::string& name) const;  // declared params only
  uint64_t u64(const std::string& name) const;
  // The canonical "k=v,..." string (every parameter, defaults included).
  const std::string& canonical() const noexcept { return canonical_; }

  // Parses `params` for `e`; throws error(usage) for an unknown name or a
  // bad value.
  static index_config parse(const index_entry& e, const std::string& params);

 private:
  // The test builds' deliberately broken variant ("mutant=NAME"; "" and 0:
  // none), for the index's own code.
  friend struct detail::config_access;
  key_kind keys_{};
  std::string mutant_;
  unsigned mutant_id_ = 0;
  std::map<std::string, std::string> values_;
  std::string canonical_;
};

// How an index is constructed on a pool. The factory must: on a created pool,
// build an empty index and set the pool root; on a clean pool, attach; on a
// dirty pool, repair the structure (without allocating) so that trace() sees
// exactly the reachable blocks. open() then rebuilds the allocator by tracing.
enum class open_kind { created, clean, dirty };
using index_factory = std::function<std::unique_ptr<index>(pm::pool&, open_kind, const index_config&)>;

struct index_entry {
  std::string name;
  std::string family;       // "art", "btree", "hybrid", "basic", "pmemids", "baseline", "test"
  std::string description;  // one line
  std::string paper;        // where it comes from ("" for baselines)
  bool concurrent = true;   // safe for concurrent callers
  // Keeps its records in key order. An unordered index (a hash table)
  // answers scan() and range() with error(errc::unsupported); the crash
  // checker, stress, damage and conformance tests then read it back by
  // lookups of the keys they wrote and stats().records.
  bool ordered = true;
  std::vector<pm::mode> modes;
  std::vector<key_kind> key_kinds = {key_kind::u64};  // the first is the default of `keys=`
  size_t max_key = 8;               // longest byte key (keys=bytes)
  size_t max_value = 8;             // longest value (keys=bytes)
  // Pool bytes one record may take at the index's worst scale (u64 keys).
  // `pmindex bench` sizes its default pool from it; an index whose layout
  // wastes space at some scale (ROART's near-empty leaf arrays at 10M)
  // says so here rather than failing a default run with a full pool.
  static constexpr uint32_t k_pool_bytes_per_record = 512;  // the default
  uint32_t pool_bytes_per_record = k_pool_bytes_per_record;
  // What a scan (and range) running beside writers returns, one sentence:
  // "atomic snapshot", or what it does promise.
  std::string scan_guarantee;
  std::vector<param_spec> params;
  // The keys an instance takes: every key below key_limit(config) (arraylist:
  // the slot numbers, below `capacity`); empty, or 0, for any 64-bit key.
  // The generated testers (crash checker, stress, load/verify, damage, the
  // conformance suites) and bench draw their keys below it.
  std::function<uint64_t(const index_config&)> key_limit;
  index_factory factory;

  bool persistent() const;  // supports persist mode
  bool supports(pm::mode m) const;
  bool supports(key_kind k) const;
};

// The key limit of `e` created with `params` (0: any key); throws like
// index_config::parse for bad params.
uint64_t key_limit(const index_entry& e, const std::string& params);

// A snapshot of the registry (safe while another thread registers), in the
// order `pmindex list` shows: by family, then by name.
std::vector<std::shared_ptr<const index_entry>> registered_indexes();
std::shared_ptr<const index_entry> find_index(std::string_view name);
// Adds (or replaces, by name) an entry. The built-in indexes are added on
// the registry's first use (by any of these three functions), so an entry
// registered under a built-in index's name replaces it.
void register_index(index_entry e);

}  // namespace pmindex
