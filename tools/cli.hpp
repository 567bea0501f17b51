// Command-line parsing shared by every `pmindex` verb, through CLI11. Options
// are `--name value`, `--name=value` or bare `--flag`; each can also come
// from the environment as PMINDEX_NAME (dashes become underscores). A verb
// declares an option by reading it (u64, str, flag, ...: the option is added
// to the verb's CLI11 app and the tokens parsed again), so the options a verb
// accepts are exactly those it reads; finish() then refuses every token no
// read took (exit code 2), never silently ignoring one.
#pragma once

#include <cctype>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmindex/index.hpp"

namespace pmindex::cli {

class args {
 public:
  args(std::string verb, std::vector<std::string> tokens);
  ~args();

  bool has(const std::string& name);
  std::string str(const std::string& name, const std::string& def);
  // Numbers: every numeric option states its range, so a value out of it
  // (or an overflow, NaN, infinity, a sign, a stray suffix) is a usage error
  // (exit code 2) and no verb can forget it (there is no unranged overload).
  // u64: whole number with K/M/G/T suffixes, in [lo, hi].
  uint64_t u64(const std::string& name, uint64_t def, uint64_t lo, uint64_t hi);
  // count: as u64, or 2^k.
  uint64_t count(const std::string& name, uint64_t def, uint64_t lo, uint64_t hi);
  // real: finite, in [lo, hi].
  double real(const std::string& name, double def, double lo, double hi);
  // The same, empty when the option is not given (no default to range-check).
  std::optional<uint64_t> opt_u64(const std::string& name, uint64_t lo, uint64_t hi);
  std::optional<uint64_t> opt_count(const std::string& name, uint64_t lo, uint64_t hi);
  std::optional<double> opt_real(const std::string& name, double lo, double hi);
  bool flag(const std::string& name);  // bare --name
  // Every occurrence of a repeatable option, joined with `sep` (e.g. a test's
  // `--params mutant=x` and an index profile's `--params keys=bytes`).
  std::string joined(const std::string& name, char sep);
  // Throws error(usage) for any option nobody read. With --help (or -h) it
  // prints the verb's usage and the options it read, and throws error(ok).
  // With the hidden token
  // --describe-options it instead prints the numeric options the verb read
  // ("name kind lo hi" lines; the option table test uses them) and throws
  // error(ok) so that the verb does nothing.
  void finish();
  const std::string& verb() const { return verb_; }

 private:
  // The option's value (for a flag: the token or the environment's text),
  // nullptr when not given. `all` receives every command-line occurrence.
  const std::string* find(const std::string& name, bool want_value, std::vector<std::string>* all = nullptr);
  void describe(const std::string& name, const char* kind, double lo, double hi);
  uint64_t parse_u64(const std::string& name, const std::string& text, bool counts, uint64_t lo, uint64_t hi);
  double parse_real(const std::string& name, const std::string& text, double lo, double hi);
  // `pmindex VERB --help`: the verb runs up to finish() with every option at
  // its default, each option it reads is noted, and finish() prints them.
  struct help_opt {
    std::string name, kind, def;
  };
  void help_note(const std::string& name, const std::string& kind, const std::string& def);
  bool help_ = false;
  std::vector<help_opt> help_opts_;
  bool describe_ = false;
  std::vector<std::string> described_;
  std::string verb_;
  std::vector<std::string> tokens_;
  struct parser;  // the verb's CLI11 app (cli.cpp: CLI11 stays out of the verbs' units)
  std::unique_ptr<parser> p_;
  std::deque<std::string> values_;  // the values handed out (stable addresses)
};

uint64_t parse_size(const std::string& option, const std::string& text);

// A PiBench wrapper's label (bench --plugin NAME=PATH, a study's [[plugin]]
// name): letters, digits, '-', '_' and '.', so that it names result rows
// and files and fits in a comma list.
inline bool plugin_label_ok(std::string_view n) {
  if (n.empty()) return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// What a verb names its scratch pools after (stress, damagetest): its pid
// and its pid namespace, "PID-nsINODE" ("PID" where /proc cannot tell the
// namespace). /dev/shm is often shared by containers whose pids are not
// each other's: a pid alone would let one judge another's live pool stale.
std::string scratch_tag();

// Removes the files in `dir` named `prefix` + scratch_tag() + anything whose
// process no longer exists: pools a run killed before its cleanup left
// behind (a 256 MB pool in /dev/shm is memory until someone deletes it).
// Left alone: a file of another pid namespace, of a live pid or one this
// process may not signal, and a pool some process holds open (its flock).
// Each removal is noted on stderr as "VERB: removed PATH (...)".
void remove_stale_pools(const std::string& verb, const std::string& dir, const std::string& prefix);

// --index --pool --pool-size --mode --flush --pm-write-ns (and --params).
options index_options(args& a, pm::open_mode open);

}  // namespace pmindex::cli
