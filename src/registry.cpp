#include "pmindex/registry.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "builtin_indexes.hpp"
#include "index_tests.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"

namespace pmindex {

// ------------------------------------------------------------------ entries

bool index_entry::supports(pm::mode m) const { return std::find(modes.begin(), modes.end(), m) != modes.end(); }
bool index_entry::supports(key_kind k) const {
  return std::find(key_kinds.begin(), key_kinds.end(), k) != key_kinds.end();
}
bool index_entry::persistent() const { return supports(pm::mode::persist); }

uint64_t key_limit(const index_entry& e, const std::string& params) {
  return e.key_limit ? e.key_limit(index_config::parse(e, params)) : 0;
}

// ------------------------------------------------------------------ registry

namespace {
int family_rank(const std::string& f) {
  static const char* order[] = {"art", "btree", "hybrid", "masstree", "basic", "pmemids", "baseline", "test"};
  for (int i = 0; i < int(std::size(order)); ++i)
    if (f == order[i]) return i;
  return int(std::size(order));
}

struct registry_state {
  std::mutex mu;
  std::vector<std::shared_ptr<const index_entry>> entries;  // in list order

  // Adds (or replaces, by name) `e`, keeping the list order; mu held.
  void add(index_entry e) {
    auto p = std::make_shared<const index_entry>(std::move(e));
    auto& v = entries;
    v.erase(std::remove_if(v.begin(), v.end(), [&](auto& x) { return x->name == p->name; }), v.end());
    auto pos = std::find_if(v.begin(), v.end(), [&](auto& x) {
      int a = family_rank(p->family), b = family_rank(x->family);
      return a < b || (a == b && p->name < x->name);
    });
    v.insert(pos, std::move(p));
  }
};

// The registry, with the built-in indexes added once, on first use (an
// index registered by the user is added after them, so it replaces a
// built-in index of its name).
registry_state& state() {
  static registry_state s;
  static std::once_flag builtins;
  std::call_once(builtins, [] {
    std::lock_guard lk(s.mu);
    for (auto& e : builtin::all_entries()) s.add(std::move(e));
  });
  return s;
}
}  // namespace

std::vector<std::shared_ptr<const index_entry>> registered_indexes() {
  auto& s = state();
  std::lock_guard lk(s.mu);
  return s.entries;
}

std::shared_ptr<const index_entry> find_index(std::string_view name) {
  auto& s = state();
  std::lock_guard lk(s.mu);
  for (auto& e : s.entries)
    if (e->name == name) return e;
  return nullptr;
}

void register_index(index_entry e) {
  auto& s = state();
  std::lock_guard lk(s.mu);
  s.add(std::move(e));
}

// ------------------------------------------------------------------ params

namespace {
std::atomic<detail::variant_names_fn> variant_names{nullptr};
}  // namespace

void detail::set_variant_names(variant_names_fn f) noexcept { variant_names.store(f, std::memory_order_release); }

const std::string& index_config::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw error(errc::usage, "no index parameter '" + name + "'");
  return it->second;
}

uint64_t index_config::u64(const std::string& name) const { return std::stoull(get(name)); }

index_config index_config::parse(const index_entry& e, const std::string& params) {
  auto bad = [&](const std::string& m) { return error(errc::usage, e.name + ": " + m); };
  std::map<std::string, std::string> given;
  size_t pos = 0;
  while (pos < params.size()) {
    size_t end = params.find(',', pos);
    if (end == std::string::npos) end = params.size();
    std::string kv = params.substr(pos, end - pos);
    pos = end + 1;
    if (kv.empty()) continue;
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw bad("parameter '" + kv + "' is not name=value");
    if (!given.emplace(kv.substr(0, eq), kv.substr(eq + 1)).second)
      throw bad("parameter " + kv.substr(0, eq) + " given twice");
  }

  index_config c;
  // keys=: the key kind; the entry's first kind by default.
  if (e.key_kinds.empty()) throw bad("declares no key kind");
  c.keys_ = e.key_kinds.front();
  if (auto it = given.find("keys"); it != given.end()) {
    key_kind k;
    if (it->second == "u64") k = key_kind::u64;
    else if (it->second == "bytes") k = key_kind::bytes;
    else throw bad("keys must be u64 or bytes, got '" + it->second + "'");
    if (!e.supports(k)) throw error(errc::unsupported, e.name + " does not take keys=" + it->second);
    c.keys_ = k;
    given.erase(it);
  }
  c.canonical_ = "keys=" + std::string(to_string(c.keys_));

  for (auto& p : e.params) {
    std::string v = p.def;
    if (auto it = given.find(p.name); it != given.end()) {
      v = it->second;
      given.erase(it);
    }
    if (!p.choices.empty()) {
      if (std::find(p.choices.begin(), p.choices.end(), v) == p.choices.end()) {
        std::string all;
        for (auto& ch : p.choices) all += (all.empty() ? "" : "|") + ch;
        throw bad("parameter " + p.name + " must be " + all + ", got '" + v + "'");
      }
    } else {
      char* end = nullptr;
      errno = 0;
      unsigned long long x = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || v[0] == '-' || *end || errno == ERANGE || x < p.min || x > p.max)
        throw bad("parameter " + p.name + " must be an integer in [" + std::to_string(p.min) + ", " +
                  std::to_string(p.max) + "], got '" + v + "'");
      v = std::to_string(x);
    }
    c.values_[p.name] = v;
    c.canonical_ += "," + p.name + "=" + v;
  }

  // mutant=NAME: a deliberately broken variant, selectable in test builds
  // only; its name is checked against the tests' list (index_tests.hpp).
  auto mutant_names = [&] {
    auto f = variant_names.load(std::memory_order_acquire);
    return f ? f(e.name) : std::vector<std::string>{};
  };
  if (auto it = given.find("mutant"); it != given.end()) {
    auto mutants = mutant_names();
    for (size_t i = 0; i < mutants.size(); ++i)
      if (mutants[i] == it->second) c.mutant_id_ = unsigned(i + 1);
    if (!c.mutant_id_) {
      std::string all;
      for (auto& m : mutants) all += (all.empty() ? "" : ", ") + m;
      throw bad("unknown mutant '" + it->second + "' (mutants: " + (all.empty() ? "none" : all) + ")");
    }
#ifndef PMINDEX_MUTANTS
    throw error(errc::unsupported, e.name + ": mutants exist in test builds only");
#endif
    c.mutant_ = it->second;
    c.canonical_ += ",mutant=" + it->second;
    given.erase(it);
  }

  if (!given.empty()) {
    std::string known = "keys";
    for (auto& p : e.params) known += ", " + p.name;
    if (!mutant_names().empty()) known += ", mutant";
    throw bad("unknown parameter '" + given.begin()->first + "' (parameters: " + known + ")");
  }
  if (c.canonical_.size() >= 256) throw bad("parameters longer than the pool header holds (255 bytes)");
  return c;
}

}  // namespace pmindex
