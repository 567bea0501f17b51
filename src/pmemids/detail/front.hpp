// What the pmemids structures share: keys of up to 8 bytes as one ordered
// word, the record's meta word, and the two fronts (keys=u64, keys=bytes)
// that turn the Index interface into calls on a structure's core.
//
// Keys: a u64 key (keys=u64) is itself, length 8 (one word in a record); a
// byte key of 0..16 bytes (keys=bytes) is its bytes as two big-endian words,
// zero padded, plus its length (two words in a record): (words, length) in
// that order sorts exactly as the byte strings do ("a" < "a\0" < "ab"). Values: 8 bytes (keys=u64) or 0..`value` bytes (keys=bytes;
// the parameter `value`, default 100, sizes the value slot at creation).
//
// Meta word of a record (one 8-byte store publishes or retires a record):
//   bit 63 live | bits 32..39 key length | bits 0..31 value length
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/pm/tx.hpp"

namespace pmindex::pmemids {

inline constexpr uint32_t k_max_key = 16;

struct key {
  uint64_t w;
  uint64_t w1;  // bytes 8..15 of a byte key; 0 for a u64 key
  uint32_t len;
  friend bool operator==(const key&, const key&) = default;
  friend bool operator<(const key& a, const key& b) {
    if (a.w != b.w) return a.w < b.w;
    if (a.w1 != b.w1) return a.w1 < b.w1;
    return a.len < b.len;
  }
};

inline key key_of(std::string_view s) {  // s.size() <= 16
  char b[16] = {};
  if (!s.empty()) std::memcpy(b, s.data(), s.size());
  return {key_u64({b, 8}), key_u64({b + 8, 8}), static_cast<uint32_t>(s.size())};
}
struct key_buf {
  char b[16];
};
inline std::string_view key_view(const key& k, key_buf& buf) {
  u64_bytes a = key_bytes(k.w), c = key_bytes(k.w1);
  std::memcpy(buf.b, a.b, 8);
  std::memcpy(buf.b + 8, c.b, 8);
  return {buf.b, k.len};
}
// A byte key's padding (the bytes past its length) is zero.
inline bool key_canonical(const key& k) {
  key_buf b;
  key_view(k, b);
  for (uint32_t i = k.len; i < 16; ++i)
    if (b.b[i]) return false;
  return k.len <= 16;
}

inline constexpr uint64_t k_live = uint64_t{1} << 63;
inline uint64_t make_meta(uint32_t klen, uint32_t vlen) { return k_live | uint64_t{klen} << 32 | vlen; }
inline bool meta_live(uint64_t m) { return m & k_live; }
inline uint32_t meta_klen(uint64_t m) { return static_cast<uint32_t>(m >> 32) & 0xff; }
inline uint32_t meta_vlen(uint64_t m) { return static_cast<uint32_t>(m); }

// An update in place of a record whose value slot follows its meta word:
// keys=u64, one 8-byte store of the value (failure-atomic as it is); tx,
// the meta word and the value saved in the undo log and rewritten. Returns
// false when neither applies (persist, keys=bytes: the caller updates out
// of place).
inline bool update_in_place(pm::pool& p, uint64_t* meta, uint32_t klen, const char* v, uint32_t n, bool u64) {
  char* value = reinterpret_cast<char*>(meta + 1);
  if (u64) {
    uint64_t w;
    std::memcpy(&w, v, 8);
    p.store_persist(reinterpret_cast<uint64_t*>(value), w);
    return true;
  }
  if (p.pm_mode() != pm::mode::tx) return false;
  pm::transaction tx(p);
  tx.snapshot(meta, 8 + std::max(n, meta_vlen(*meta)));
  *meta = make_meta(klen, n);
  if (n) std::memcpy(value, v, n);
  tx.commit();
  return true;
}

// The value slot of keys=bytes from the `value` parameter.
inline uint32_t value_slot(const index_config& c) {
  return c.keys() == key_kind::u64 ? 8 : static_cast<uint32_t>((c.u64("value") + 7) / 8 * 8);
}

// A core without scan() is unordered (index_entry::ordered = false): its
// fronts answer scan and range with one typed error.
template <class Core>
concept ordered_core = requires(const Core& c) { c.scan(key{}, [](const key&, const char*, uint32_t) { return false; }); };
[[noreturn]] inline void unordered_scan(const std::string& name) {
  throw error(errc::unsupported, name + " is unordered: scan and range are not supported");
}
template <class Core, class F>
void scan_core(const Core& c, const std::string& name, key from, F&& f) {
  if constexpr (ordered_core<Core>) c.scan(from, f);
  else unordered_scan(name);
}

// keys=u64: Core is the structure (insert/update/remove/find/scan on key).
template <class Core>
class u64_front final : public u64_index {
 public:
  template <class... A>
  explicit u64_front(pm::pool& p, A&&... a) : u64_index(p), core_(p, std::forward<A>(a)...) {}
  using u64_index::insert, u64_index::update, u64_index::remove, u64_index::lookup, u64_index::scan;
  bool insert(uint64_t k, uint64_t v) override { return core_.insert({k, 0, 8}, reinterpret_cast<char*>(&v), 8); }
  bool update(uint64_t k, uint64_t v) override { return core_.update({k, 0, 8}, reinterpret_cast<char*>(&v), 8); }
  bool remove(uint64_t k) override { return core_.remove({k, 0, 8}); }
  std::optional<uint64_t> lookup(uint64_t k) override {
    uint32_t n;
    const char* v = core_.find({k, 0, 8}, &n);
    if (!v) return std::nullopt;
    uint64_t r;
    std::memcpy(&r, v, 8);
    return r;
  }
  size_t scan(uint64_t from, size_t count, record* out) override {
    if constexpr (!ordered_core<Core>) unordered_scan(name());
    size_t got = 0;
    if (!count) return 0;
    scan_core(core_, name(), {from, 0, 8}, [&](const key& k, const char* v, uint32_t) {
      out[got].key = k.w;
      std::memcpy(&out[got].value, v, 8);
      return ++got < count;
    });
    return got;
  }
  check_result check() override { return core_.check(); }
  void trace(pm::pool::trace_sink& s) override { core_.trace(s); }
  index_stats stats() override { return core_.stats(); }

 private:
  Core core_;
};

// keys=bytes: keys of 0..8 bytes, values of 0..slot bytes.
template <class Core>
class bytes_front final : public bytes_index {
 public:
  template <class... A>
  explicit bytes_front(pm::pool& p, A&&... a) : bytes_index(p), core_(p, std::forward<A>(a)...) {}
  using bytes_index::insert, bytes_index::update, bytes_index::remove, bytes_index::lookup, bytes_index::scan;
  bool insert(std::string_view k, std::string_view v) override {
    checked(k, v);
    return core_.insert(key_of(k), v.data(), static_cast<uint32_t>(v.size()));
  }
  bool update(std::string_view k, std::string_view v) override {
    checked(k, v);
    return core_.update(key_of(k), v.data(), static_cast<uint32_t>(v.size()));
  }
  bool remove(std::string_view k) override {
    check_key(k);
    return core_.remove(key_of(k));
  }
  bool lookup(std::string_view k, std::string* value) override {
    check_key(k);
    uint32_t n;
    const char* v = core_.find(key_of(k), &n);
    if (v && value) value->assign(v, n);
    return v != nullptr;
  }
  size_t scan(std::string_view from, size_t count, record_buffer& out) override {
    if constexpr (!ordered_core<Core>) unordered_scan(name());
    if (!count) return 0;
    // Keys >= from: from itself, or (longer than any key) the keys after
    // its 16-byte prefix.
    key f = key_of(from.substr(0, k_max_key));
    if (from.size() > k_max_key) f.len = k_max_key + 1;
    size_t got = 0;
    key_buf buf;
    scan_core(core_, name(), f, [&](const key& k, const char* v, uint32_t n) {
      out.push_back(key_view(k, buf), {v, n});
      return ++got < count;
    });
    return got;
  }
  check_result check() override { return core_.check(); }
  void trace(pm::pool::trace_sink& s) override { core_.trace(s); }
  index_stats stats() override { return core_.stats(); }

 private:
  void checked(std::string_view k, std::string_view v) {
    check_key(k);
    check_value(v);
    if (v.size() > core_.max_value())
      throw error(errc::value_too_long, name() + ": value of " + std::to_string(v.size()) + " bytes; created with value=" +
                                            std::to_string(core_.max_value()) + " (--params value=N at creation)");
  }
  Core core_;
};

}  // namespace pmindex::pmemids
