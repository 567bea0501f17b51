// The key space and the values of a crash history, and the index calls on
// them: u64 calls for integer keys and 8-byte values (the checker's own keys,
// or an integer dataset), byte calls otherwise.
#include <cstdio>
#include <functional>
#include <set>

#include "checker.hpp"
#include "image.hpp"
#include "keys.hpp"
#include "pmindex/error.hpp"

namespace pmindex::crash {

// Keys: half dense small integers (full radix nodes, node growth), half
// sparse 64-bit keys around four random prefixes diverging at random depths
// (prefix splits). None is 0 or in the probe range used after recovery.
// With a dataset: distinct random ids of it (see key_source). An index
// with a key limit: draw_limited_keys.
void checker::make_keys() {
  bench::rng rng(bench::key_salt(c_.seed));
  const bench::key_map dense(bench::key_universe::dense);
  if (limit_) {
    draw_limited_keys(rng);
  } else if (c_.dataset) {
    draw_dataset_keys(rng);
  } else {
    uint64_t prefix[4];
    for (auto& p : prefix) p = rng() & 0x0FFFFFFFFFFFFFFFull;
    std::set<uint64_t> seen;
    while (keys_u64_.size() < c_.keys) {
      uint64_t k;
      if (keys_u64_.size() % 2 == 0) {
        k = dense(keys_u64_.size() / 2);
      } else {
        unsigned depth = 1 + rng() % 7;  // low bytes that vary
        uint64_t mask = (uint64_t{1} << (8 * depth)) - 1;
        k = (prefix[rng() % 4] & ~mask) | (rng() & mask);
        k = (k & 0x0FFFFFFFFFFFFFFFull) | 0x0100000000000000ull;
      }
      if (!seen.insert(k).second) continue;
      keys_u64_.push_back(k);
    }
    for (uint64_t k : keys_u64_) keys_.emplace_back(std::string_view(key_bytes(k)));
  }
  for (uint32_t i = 0; i < keys_.size(); ++i) key_index_[keys_[i]] = i;
  // Probe keys for after recovery: outside the key space.
  for (uint64_t i = 0; probes_.size() < k_probes; ++i) {
    std::string p = limit_   ? std::string(std::string_view(key_bytes(limit_ - 1 - i)))  // the top slots
                    : bytes_ ? "\xF0probe-" + std::to_string(i)
                             : std::string(std::string_view(key_bytes(0xF000000000000000ull + i * 0x10001ull)));
    if (!key_index_.count(p)) probes_.push_back(p);
  }
  // Ownership: one thread owns everything; with threads, `disjoint` splits
  // the keys, `shared` shares them all, `mixed` shares one key in four.
  owner_.assign(keys_.size(), 0);
  // Owned keys go round-robin over the threads by their own count: with
  // `mixed`, i % threads would leave a thread no key when threads = 4 (the
  // keys i % 4 == 3 are the shared ones), and a thread without keys skips
  // operations, which leaves gaps in its log that the oracle stops at.
  if (c_.threads > 1)
    for (uint32_t i = 0, owned = 0; i < keys_.size(); ++i) {
      bool shared = c_.keyset == "shared" || (c_.keyset == "mixed" && i % 4 == 3);
      owner_[i] = shared ? k_shared : owned++ % c_.threads;
    }
}

// An index that takes keys below limit_ (index_entry::key_limit): half
// dense from 0, half random below the top k_probes slots (the probes'),
// as integers (byte runs: their 8 bytes; the integer datasets only).
void checker::draw_limited_keys(bench::rng& rng) {
  if (c_.dataset && c_.dataset->name != "u64" && c_.dataset->name != "u64-bytes")
    throw error(errc::usage, c_.index + " takes integer keys below " + std::to_string(limit_) +
                                 ": --dataset must be u64 or u64-bytes, not " + c_.dataset->name);
  if (limit_ < c_.keys + k_probes)
    throw error(errc::usage, c_.index + " takes keys below " + std::to_string(limit_) + ": --keys " +
                                 std::to_string(c_.keys) + " needs a limit of at least --keys + " +
                                 std::to_string(k_probes) + " (see its params)");
  std::set<uint64_t> seen;
  uint64_t dense = 0;
  while (keys_u64_.size() < c_.keys) {
    uint64_t k = rng() % (limit_ - k_probes);
    if (keys_u64_.size() % 2 == 0)
      while (seen.count(k = dense++)) {
      }
    if (seen.insert(k).second) keys_u64_.push_back(k);
  }
  for (uint64_t k : keys_u64_) keys_.emplace_back(std::string_view(key_bytes(k)));
}

// Distinct random ids of the dataset; with byte keys, every eighth key is
// a proper prefix (possibly empty) of a key drawn before it.
void checker::draw_dataset_keys(bench::rng& rng) {
  const key_source& ds = *c_.dataset;
  if (ds.size < c_.keys)
    throw error(errc::usage, "dataset " + ds.name + " has " + std::to_string(ds.size) +
                                 " keys; --keys must be at most that");
  const uint64_t span = ds.size < (uint64_t{1} << 32) ? ds.size : uint64_t{1} << 32;
  std::set<uint64_t> ids;
  std::set<std::string> seen;
  // A small dataset may hold fewer distinct prefixes than asked: bounded tries.
  for (uint64_t tries = 0; keys_.size() < c_.keys; ++tries) {
    if (tries > 64 * c_.keys + 1000000) throw error(errc::usage, "dataset " + ds.name + " has too few distinct keys");
    std::string k;
    if (bytes_ && keys_.size() % 8 == 7) {
      const std::string& of = keys_[rng() % keys_.size()];
      if (of.empty()) continue;
      k = of.substr(0, rng() % of.size());
    } else {
      uint64_t id = rng() % span;
      if (!ids.insert(id).second) continue;
      k = ds.key(id);
    }
    if (!seen.insert(k).second) continue;
    if (!bytes_ && k.size() != 8)
      throw error(errc::usage, "dataset " + ds.name + " gave a key of " + std::to_string(k.size()) + " bytes");
    keys_.push_back(std::move(k));
  }
  if (!bytes_)
    for (auto& k : keys_) keys_u64_.push_back(key_u64(k));
}

std::string checker::show_key(uint32_t ki) const { return show_key(keys_[ki]); }

// u64 keys as integers; byte keys quoted, escaped, cut after 40 bytes.
std::string checker::show_key(std::string_view k) const {
  if (!bytes_ && k.size() == 8) return std::to_string(key_u64(k));
  std::string s = "\"";
  for (size_t i = 0; i < k.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(k[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      s += static_cast<char>(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      s += b;
    }
  }
  s += k.size() > 40 ? "...\"" : "\"";
  if (k.size() != 8 || bytes_) s += " (" + std::to_string(k.size()) + " bytes)";
  return s;
}

std::string checker::show(const key_state& s) const {
  if (!s.present) return "absent";
  if (s.value == k_foreign && bytes_) return "a value that was never written for it";
  return "value " + hex(s.value);
}

std::string checker::value_of(uint64_t id) const {
  if (!bytes_) return std::string(std::string_view(value_bytes(id)));
  std::string v;
  c_.values.make(id, c_.value_size, v);
  return v;
}

bool checker::value_is(uint64_t id, std::string_view v) const {
  if (!bytes_) return v.size() == 8 && value_u64(v) == id;
  return v.size() == c_.value_size && c_.values.matches(id, v);
}

uint64_t checker::read_tag(std::string_view v) const {
  if (!bytes_ && v.size() == 8) return value_u64(v);
  return std::hash<std::string_view>{}(v);
}

bool checker::call_insert(index& idx, std::string_view k, uint64_t id, std::string& buf) {
  if (!bytes_) return idx.insert(key_u64(k), id);
  c_.values.make(id, c_.value_size, buf);
  return idx.insert(k, buf);
}

bool checker::call_update(index& idx, std::string_view k, uint64_t id, std::string& buf) {
  if (!bytes_) return idx.update(key_u64(k), id);
  c_.values.make(id, c_.value_size, buf);
  return idx.update(k, buf);
}

bool checker::call_remove(index& idx, std::string_view k) {
  return bytes_ ? idx.remove(k) : idx.remove(key_u64(k));
}

bool checker::call_lookup(index& idx, std::string_view k, std::string* v) {
  if (bytes_) return idx.lookup(k, v);
  auto got = idx.lookup(key_u64(k));
  if (got) v->assign(std::string_view(value_bytes(*got)));
  return got.has_value();
}

// From a key of the space (u64: 8 bytes) or "" (the smallest key).
size_t checker::call_scan(index& idx, std::string_view from, size_t count, record_buffer& out) {
  if (bytes_) return idx.scan(from, count, out);
  record buf[64];
  size_t total = 0;
  uint64_t k = from.empty() ? 0 : key_u64(from);
  while (total < count) {
    size_t want = count - total < 64 ? count - total : 64;
    size_t n = idx.scan(k, want, buf);
    if (n > want) return count + 1;  // the caller reports "more than asked"
    for (size_t i = 0; i < n; ++i) out.push_back(key_bytes(buf[i].key), value_bytes(buf[i].value));
    total += n;
    if (n < want || buf[n - 1].key == UINT64_MAX) break;
    k = buf[n - 1].key + 1;
  }
  return total;
}

}  // namespace pmindex::crash
