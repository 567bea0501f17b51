// Command-line parsing shared by every `pmindex` verb. Options are
// `--name value`, `--name=value` or bare `--flag`; each can also come from
// the environment as PMINDEX_NAME (dashes become underscores). An option the
// verb does not read is an error (exit code 2), never silently ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pmindex/index.hpp"

namespace pmindex::cli {

class args {
 public:
  args(std::string verb, std::vector<std::string> tokens);

  bool has(const std::string& name);
  std::string str(const std::string& name, const std::string& def);
  uint64_t u64(const std::string& name, uint64_t def);  // accepts K/M/G/T suffixes; overflow is an error
  uint64_t u64(const std::string& name, uint64_t def, uint64_t lo, uint64_t hi);  // and in [lo, hi]
  double real(const std::string& name, double def);     // finite (no NaN, no infinity)
  double real(const std::string& name, double def, double lo, double hi);
  bool flag(const std::string& name);  // bare --name
  // Every occurrence of a repeatable option, joined with `sep` (e.g. a test's
  // `--params mutant=x` and an index profile's `--params keys=bytes`).
  std::string joined(const std::string& name, char sep);
  // Throws error(usage) for any option nobody read.
  void finish();
  const std::string& verb() const { return verb_; }

 private:
  const std::string* find(const std::string& name, bool want_value);
  std::string verb_;
  std::vector<std::string> tokens_;
  std::vector<bool> used_;
  std::vector<std::string> env_values_;  // storage for values read from env
};

uint64_t parse_size(const std::string& option, const std::string& text);

// --index --pool --pool-size --mode --flush --pm-write-ns (and --params).
options index_options(args& a, pm::open_mode open);

// Deterministic key sequence of `pmindex load/verify`: the i-th key and its
// value for seed s. Distinct keys for distinct i (a bijection of i).
uint64_t seq_key(uint64_t seed, uint64_t i);
uint64_t seq_value(uint64_t key);

}  // namespace pmindex::cli
