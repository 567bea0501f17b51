#include "cli.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "pmindex/error.hpp"

namespace pmindex::cli {

// The verb's CLI11 app. Every option takes any number of occurrences and
// at most one value each: CLI11 collects them, and find() says what is wrong
// with an option given twice or without its value, naming the option.
struct args::parser {
  CLI::App app;
  std::map<std::string, CLI::Option*> opts;  // by name, without the dashes

  parser() {
    app.set_help_flag();  // --help is ours (the options a verb reads)
    app.allow_extras();   // finish() judges the tokens no option took
  }
  CLI::Option* declare(const std::string& name, bool want_value) {
    auto [it, fresh] = opts.try_emplace(name, nullptr);
    if (fresh) {
      std::string env = "PMINDEX_";
      for (char c : name) env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      it->second = want_value ? app.add_option("--" + name)->expected(0, 1) : app.add_flag("--" + name);
      it->second->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)->envname(env);
    }
    return it->second;
  }
  // Parses `tokens` again with the options declared so far.
  void parse(const std::vector<std::string>& tokens) {
    app.clear();
    std::vector<std::string> rev(tokens.rbegin(), tokens.rend());  // CLI11 takes them last first
    try {
      app.parse(rev);
    } catch (const CLI::ParseError& e) {
      throw error(errc::usage, e.what());
    }
  }
};

args::args(std::string verb, std::vector<std::string> tokens)
    : verb_(std::move(verb)), tokens_(std::move(tokens)), p_(std::make_unique<parser>()) {
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (tokens_[i] == "--describe-options") {
      describe_ = true;
      tokens_.erase(tokens_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  for (size_t i = 0; i < tokens_.size(); ++i)
    if (tokens_[i] == "--help" || tokens_[i] == "-h") {
      help_ = true;
      tokens_.clear();  // every option at its default: the verb only reads them
      break;
    }
}

args::~args() = default;

void args::help_note(const std::string& name, const std::string& kind, const std::string& def) {
  for (auto& o : help_opts_)
    if (o.name == name) {
      if (!kind.empty() && (o.kind.empty() || kind != "VALUE")) o.kind = kind;
      if (!def.empty()) o.def = def;
      return;
    }
  help_opts_.push_back({name, kind, def});
}

const std::string* args::find(const std::string& name, bool want_value, std::vector<std::string>* all) {
  if (help_) {
    help_note(name, want_value ? "VALUE" : "", "");
    return nullptr;
  }
  CLI::Option* o = p_->declare(name, want_value);
  p_->parse(tokens_);
  std::vector<std::string> got = o->results();
  if (got.empty()) return nullptr;
  // A value option given without its value: CLI11 records an empty result.
  // The tokens tell that from an empty value: `--name` is last, or followed
  // by what CLI11 reads as an option (a dash and no digit: -5 is a value).
  auto option_like = [](const std::string& t) {
    return t.size() > 1 && t[0] == '-' && !std::isdigit(static_cast<unsigned char>(t[1]));
  };
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (want_value && tokens_[i] == "--" + name && (i + 1 == tokens_.size() || option_like(tokens_[i + 1])))
      throw error(errc::usage, "option --" + name + " needs a value");
    // CLI11 would take --flag=TEXT as the flag set to TEXT; a flag here is
    // only ever given bare (the environment's PMINDEX_NAME may say 0 or no).
    if (!want_value && tokens_[i].rfind("--" + name + "=", 0) == 0)
      throw error(errc::usage, "option --" + name + " takes no value, not " + tokens_[i]);
  }
  if (all) {
    *all = got;
    return nullptr;
  }
  if (got.size() > 1) throw error(errc::usage, "option --" + name + " is given more than once");
  values_.push_back(got.front());
  return &values_.back();
}

bool args::has(const std::string& name) {
  const std::string opt = "--" + name;
  for (auto& t : tokens_)
    if (t == opt || t.rfind(opt + "=", 0) == 0) return true;
  return false;
}

std::string args::joined(const std::string& name, char sep) {
  std::vector<std::string> all;
  find(name, true, &all);
  std::string out;
  for (auto& v : all)
    if (!v.empty()) out += (out.empty() ? "" : std::string(1, sep)) + v;
  return out;
}

std::string args::str(const std::string& name, const std::string& def) {
  auto v = find(name, true);
  if (help_) help_note(name, "", def);
  return v ? *v : def;
}

void args::describe(const std::string& name, const char* kind, double lo, double hi) {
  if (help_) {
    char r[120];
    std::snprintf(r, sizeof r, "%s in [%.17g, %.17g]", std::strcmp(kind, "real") ? "N" : "X", lo, hi);
    help_note(name, r, "");
  }
  if (!describe_) return;
  char b[200];
  std::snprintf(b, sizeof b, "%s %s %.17g %.17g", name.c_str(), kind, lo, hi);
  described_.push_back(b);
}

uint64_t args::parse_u64(const std::string& name, const std::string& text, bool counts, uint64_t lo, uint64_t hi) {
  uint64_t v;
  if (counts && text.rfind("2^", 0) == 0) {
    uint64_t k = parse_size("--" + name, text.substr(2));
    if (k > 63) throw error(errc::usage, "--" + name + ": 2^" + std::to_string(k) + " is above 2^63");
    v = uint64_t{1} << k;
  } else {
    v = parse_size("--" + name, text);
  }
  if (v < lo || v > hi)
    throw error(errc::usage, "--" + name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                 "], got " + std::to_string(v));
  return v;
}

double args::parse_real(const std::string& name, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(text.c_str(), &end);
  // Decimal only: strtod would also take hex ("0x10"), "nan" and "inf".
  const bool decimal = text.find_first_not_of("0123456789.eE+-") == std::string::npos;
  if (text.empty() || !decimal || *end || !std::isfinite(d) || errno == ERANGE)
    throw error(errc::usage, "--" + name + " expects a finite number, not '" + text + "'");
  if (!(d >= lo && d <= hi)) {
    char b[160];
    std::snprintf(b, sizeof b, "--%s must be in [%g, %g], got %g", name.c_str(), lo, hi, d);
    throw error(errc::usage, b);
  }
  return d;
}

uint64_t args::u64(const std::string& name, uint64_t def, uint64_t lo, uint64_t hi) {
  describe(name, "u64", static_cast<double>(lo), static_cast<double>(hi));
  auto v = find(name, true);
  if (help_) help_note(name, "", std::to_string(def));
  return v ? parse_u64(name, *v, false, lo, hi) : def;
}

uint64_t args::count(const std::string& name, uint64_t def, uint64_t lo, uint64_t hi) {
  describe(name, "count", static_cast<double>(lo), static_cast<double>(hi));
  auto v = find(name, true);
  return v ? parse_u64(name, *v, true, lo, hi) : def;
}

double args::real(const std::string& name, double def, double lo, double hi) {
  describe(name, "real", lo, hi);
  auto v = find(name, true);
  return v ? parse_real(name, *v, lo, hi) : def;
}

std::optional<uint64_t> args::opt_u64(const std::string& name, uint64_t lo, uint64_t hi) {
  describe(name, "u64", static_cast<double>(lo), static_cast<double>(hi));
  auto v = find(name, true);
  if (!v) return std::nullopt;
  return parse_u64(name, *v, false, lo, hi);
}

std::optional<uint64_t> args::opt_count(const std::string& name, uint64_t lo, uint64_t hi) {
  describe(name, "count", static_cast<double>(lo), static_cast<double>(hi));
  auto v = find(name, true);
  if (!v) return std::nullopt;
  return parse_u64(name, *v, true, lo, hi);
}

std::optional<double> args::opt_real(const std::string& name, double lo, double hi) {
  describe(name, "real", lo, hi);
  auto v = find(name, true);
  if (!v) return std::nullopt;
  return parse_real(name, *v, lo, hi);
}

bool args::flag(const std::string& name) {
  auto v = find(name, false);
  // CLI11 records "true" for a bare --name, the text of --name=TEXT or of the
  // environment's PMINDEX_NAME.
  return v && *v != "0" && *v != "false" && *v != "no";
}

void args::finish() {
  if (help_) {
    const char* summary = "";
    for (size_t i = 0; i < k_nverbs; ++i)
      if (verb_ == k_verbs[i].name) summary = k_verbs[i].summary;
    std::printf("usage: pmindex %s [--option value ...]\n  %s\n\noptions:\n", verb_.c_str(), summary);
    for (auto& o : help_opts_) {
      std::string left = "--" + o.name + (o.kind.empty() ? "" : " " + o.kind);
      // A long left column (a wide range) keeps one space before its default.
      std::printf("  %-36s%s%s%s\n", left.c_str(), left.size() >= 36 && !o.def.empty() ? " " : "",
                  o.def.empty() ? "" : "default ", o.def.c_str());
    }
    std::printf("\nevery option can also be set as PMINDEX_<NAME> in the environment (see `pmindex help`)\n");
    std::fflush(stdout);
    throw error(errc::ok, "");
  }
  if (describe_) {
    for (auto& d : described_) std::printf("%s\n", d.c_str());
    std::fflush(stdout);
    throw error(errc::ok, "");
  }
  p_->parse(tokens_);  // (a verb that reads nothing has not parsed yet)
  for (const std::string& t : p_->app.remaining())
    throw error(errc::usage, (t.rfind("--", 0) == 0 ? "unknown option " : "unexpected argument ") + t +
                                 " for `pmindex " + verb_ + "` (see `pmindex help`)");
}

uint64_t parse_size(const std::string& option, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || end == text.c_str() || text[0] == '-' || errno)
    throw error(errc::usage, option + " expects a whole number, not '" + text + "'");
  uint64_t mul = 1;
  std::string suf(end);
  // Binary units; lower case too (memcached's `-I 4m`).
  if (suf == "K" || suf == "k" || suf == "KiB") mul = 1ull << 10;
  else if (suf == "M" || suf == "m" || suf == "MiB") mul = 1ull << 20;
  else if (suf == "G" || suf == "g" || suf == "GiB") mul = 1ull << 30;
  else if (suf == "T" || suf == "t" || suf == "TiB") mul = 1ull << 40;
  else if (!suf.empty()) throw error(errc::usage, option + ": unknown suffix '" + suf + "'");
  if (v > UINT64_MAX / mul) throw error(errc::usage, option + ": '" + text + "' is too large");
  return v * mul;
}

options index_options(args& a, pm::open_mode open) {
  options o;
  o.index = a.str("index", o.index);
  o.pool_path = a.str("pool", o.pool_path);
  o.pool_size = a.u64("pool-size", o.pool_size, 1, uint64_t{1} << 50);
  // No --mode: an existing pool's own (stored in it), persist for a new one.
  auto m = a.str("mode", "");
  if (!m.empty()) {
    auto pm_mode = pm::parse_mode(m);
    if (!pm_mode) throw error(errc::usage, "unknown --mode '" + m + "' (dram, volatile, persist, eadr, tx)");
    o.mode = *pm_mode;
  }
  auto f = a.str("flush", "auto");
  auto fk = pm::parse_flush(f);
  if (!fk) throw error(errc::usage, "unknown --flush '" + f + "' (auto, clwb, clflushopt, clflush)");
  o.flush = *fk;
  o.pm_write_ns = static_cast<uint32_t>(a.u64("pm-write-ns", 0, 0, 1000000));
  o.params = a.joined("params", ',');
  o.open = open;
  return o;
}

namespace {
// The inode of this process's pid namespace, 0 if /proc does not say.
uint64_t pid_namespace() {
  struct stat st;
  return ::stat("/proc/self/ns/pid", &st) == 0 ? uint64_t(st.st_ino) : 0;
}

// Digits at name[i...] (at most 10): their end, or i if none or too many.
size_t digits_end(const std::string& name, size_t i) {
  size_t end = i;
  while (end < name.size() && end - i < 10 && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) return i;
  return end;
}
}  // namespace

std::string scratch_tag() {
  const uint64_t ns = pid_namespace();
  return std::to_string(::getpid()) + (ns ? "-ns" + std::to_string(ns) : "");
}

void remove_stale_pools(const std::string& verb, const std::string& dir, const std::string& prefix) {
  const uint64_t own_ns = pid_namespace();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t i = prefix.size(), end = digits_end(name, i);
    if (end == i) continue;
    long pid = std::strtol(name.substr(i, end - i).c_str(), nullptr, 10);
    if (pid <= 0 || pid == ::getpid()) continue;
    // A tagged name of another namespace: its pid means nothing here.
    if (name.compare(end, 3, "-ns") == 0) {
      const size_t ns_end = digits_end(name, end + 3);
      if (ns_end == end + 3 || !own_ns ||
          std::strtoull(name.substr(end + 3, ns_end - end - 3).c_str(), nullptr, 10) != own_ns)
        continue;
    }
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    // An open pool holds its flock (pm::pool), whoever's it is (an untagged
    // name of an older binary in another namespace, say).
    const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const bool in_use = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
    if (!in_use && ::unlink(e.path().c_str()) == 0)
      std::fprintf(stderr, "%s: removed %s (left by a run that did not finish)\n", verb.c_str(), e.path().c_str());
    ::close(fd);  // (drops the flock)
  }
}

}  // namespace pmindex::cli
