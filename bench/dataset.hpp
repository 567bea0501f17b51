// Datasets: which keys the verbs use (`--dataset` of bench, load/verify,
// crashtest, stress). A dataset maps a record id (0, 1, 2, ...) to a key,
// distinct ids to distinct keys, deterministically from its seed, without
// holding the keys in memory unless they come from a file:
//
//   u64          8-byte integer keys (the key universe: dense, sparse, ...),
//                used through the u64 fast path
//   u64-bytes    the same keys as 8-byte strings through the byte path
//   names        user names, <= 25 bytes, letters/digits/_/-
//   wiki         titles, words joined by '_', <= 256 bytes
//   urls         web-crawl URLs, <= 2029 bytes, long shared prefixes
//   words        Debian's wamerican-insane word list
//   file:PATH    newline-separated keys (.gz accepted), deduplicated
//
// names, wiki and urls are generated (dataset_gen.cpp, key_grammar.hpp):
// the key of an id is computed when asked, nothing is stored. words and
// file:PATH hold the file's bytes once (dataset_file.cpp); their ids are a
// random order of the distinct keys, from the seed.
//
// Values: value_bytes(id, size, out) gives the value of a record: `size`
// bytes derived from the id (checkable after a crash or a restart). The
// harness's updates write versions of it (value_bytes(id, version, ...)),
// and value_check() accepts any version of the id's value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "keys.hpp"

namespace pmindex::bench {

class dataset {
 public:
  virtual ~dataset() = default;
  // The name as given (`urls`, `file:/x/y.gz`, ...).
  virtual const std::string& name() const noexcept = 0;
  // True for the u64 dataset: keys are 8-byte integers (key_u64), used
  // through the u64 calls; every other dataset goes through the byte calls.
  virtual bool integer_keys() const noexcept { return false; }
  // How many distinct keys there are (ids 0..size()-1); UINT64_MAX when the
  // generator has no practical limit.
  virtual uint64_t size() const noexcept = 0;
  // The longest key it can produce.
  virtual size_t max_key() const noexcept = 0;
  // The key of `id` (< size()), written into `buf` (or into storage the
  // dataset owns); the view is valid until `buf` changes. Thread-safe.
  virtual std::string_view key(uint64_t id, std::string& buf) const = 0;
  // The integer key of `id` (integer_keys() and u64-bytes only).
  virtual uint64_t key_u64(uint64_t id) const noexcept { return id; }
};

// Makes a dataset by name (see above); throws error(usage) for an unknown
// name, error(missing_file) / error(usage) for a bad or empty file.
// `universe` applies to u64 and u64-bytes. Loading a file prints one line on
// stderr (how many keys, their lengths) unless `quiet`.
std::unique_ptr<dataset> make_dataset(const std::string& spec, uint64_t seed,
                                      key_universe universe = key_universe::sparse, bool quiet = false);
// The names make_dataset() takes (file:PATH aside), for help texts.
std::string dataset_names();
// The word list behind `words`.
inline constexpr const char* k_words_path = "/usr/share/dict/american-english-insane";

// The value of record `id`: `size` bytes (size 8: the u64 value
// value_of-style; other sizes: a pattern seeded by the id).
void value_bytes(uint64_t id, size_t size, std::string& out);
// True if `v` is the value value_bytes(id, v.size()) gives.
bool value_matches(uint64_t id, std::string_view v);
// Version `version` of the value of `id` (what the harness's updates write):
// version 0 is value_bytes(id, size); a later version of more than 8 bytes
// starts with the version number (8 bytes) followed by a pattern seeded by
// id and version; values of 8 bytes or less have only version 0.
void value_bytes(uint64_t id, uint64_t version, size_t size, std::string& out);
// True if `v` is some version of the value of `id`.
bool value_check(uint64_t id, std::string_view v);

}  // namespace pmindex::bench
