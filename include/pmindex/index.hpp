// The runtime Index interface: what the harness, the tools, the crash checker,
// the server and users see. One virtual call per operation; templates live
// inside each index.
//
// Keys and values are byte strings (std::string_view): keys of 0..max_key
// bytes ordered as unsigned bytes, a proper prefix first ("a" < "ab" < "b");
// values of 0..max_value bytes. A key or value over the index's limit is a
// typed error (errc::key_too_long, errc::value_too_long) that changes
// nothing; nothing is ever truncated.
//
// The fast path: 64-bit integer keys and 8-byte values. An integer key is its
// 8 big-endian bytes (so both orders agree) and a u64 value is its 8 bytes in
// host order (key_bytes(), value_bytes()). An index is created for one key
// kind (params `keys=u64` or `keys=bytes`, see index_entry):
//   - keys=u64 (the default where an index offers it): the layout of a
//     u64-only index; the u64 calls are the native ones; the byte calls take
//     exactly 8-byte keys and 8-byte values;
//   - keys=bytes: any keys and values within the limits; the u64 calls are
//     the byte calls on 8-byte strings.
// Either way both sets of calls work on every index and see the same records.
//
// Threads: any number of threads may call operations concurrently on an
// index whose entry says `concurrent`; each thread's per-pool state (epoch
// slot, allocator cache, counters) is created on its first call and reused.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pmindex/pm/pool.hpp"
#include "pmindex/registry.hpp"

namespace pmindex {

// ------------------------------------------------------------------ records

struct record {
  uint64_t key;
  uint64_t value;
  friend bool operator==(const record&, const record&) = default;
};

// The 8 big-endian bytes of an integer key, and back. The result converts
// to a string_view of itself: pass it straight to a call, or keep the
// u64_bytes alive while the view is used.
struct u64_bytes {
  char b[8];
  operator std::string_view() const noexcept { return {b, 8}; }
};
inline u64_bytes key_bytes(uint64_t k) noexcept {
  u64_bytes r;
  uint64_t be = __builtin_bswap64(k);
  std::memcpy(r.b, &be, 8);
  return r;
}
inline uint64_t key_u64(std::string_view s) noexcept {  // s.size() == 8
  uint64_t be;
  std::memcpy(&be, s.data(), 8);
  return __builtin_bswap64(be);
}
// The smallest 8-byte key >= s, as an integer (a scan's start for a bound
// of any length); false if there is none.
inline bool u64_at_or_after(std::string_view s, uint64_t& k) noexcept {
  char b[8] = {};
  if (!s.empty()) std::memcpy(b, s.data(), s.size() < 8 ? s.size() : 8);  // a default view's data() is null
  k = key_u64({b, 8});
  if (s.size() <= 8) return true;  // shorter: zero padding is the first extension
  return ++k != 0;                 // longer: its 8-byte prefix sorts before it
}
inline u64_bytes value_bytes(uint64_t v) noexcept {
  u64_bytes r;
  std::memcpy(r.b, &v, 8);
  return r;
}
inline uint64_t value_u64(std::string_view s) noexcept {  // s.size() == 8
  uint64_t v;
  std::memcpy(&v, s.data(), 8);
  return v;
}

// Scan results of the byte calls: keys and values copied back to back into
// one reusable buffer (no allocation per record once it has grown). Views
// returned by key()/value() stay valid until the next append or clear().
class record_buffer {
 public:
  size_t size() const noexcept { return ents_.size(); }
  bool empty() const noexcept { return ents_.empty(); }
  void clear() noexcept {
    data_.clear();
    ents_.clear();
  }
  std::string_view key(size_t i) const noexcept { return {data_.data() + ents_[i].off, ents_[i].klen}; }
  std::string_view value(size_t i) const noexcept {
    return {data_.data() + ents_[i].off + ents_[i].klen, ents_[i].vlen};
  }
  void push_back(std::string_view k, std::string_view v) {
    char* p = append(k.size(), v.size());
    if (!k.empty()) std::memcpy(p, k.data(), k.size());
    if (!v.empty()) std::memcpy(p + k.size(), v.data(), v.size());
  }
  // Room for one record of klen + vlen bytes (key first) to be written by
  // the caller, for indexes that assemble a key in pieces.
  char* append(size_t klen, size_t vlen) {
    size_t off = data_.size();
    data_.resize(off + klen + vlen);
    ents_.push_back({off, static_cast<uint32_t>(klen), static_cast<uint32_t>(vlen)});
    return data_.data() + off;
  }
  void pop_back() noexcept {
    data_.resize(ents_.back().off);
    ents_.pop_back();
  }

 private:
  struct ent {
    size_t off;
    uint32_t klen, vlen;
  };
  std::string data_;
  std::vector<ent> ents_;
};

// ------------------------------------------------------------------ options

struct options {
  std::string index = "canary";
  std::string pool_path = "/dev/shm/pmindex.pool";
  uint64_t pool_size = uint64_t{1} << 30;
  // Empty: an existing pool opens in the mode it was created in (stored in
  // its header); a new one in persist (dram for an index without it). Rules
  // for opening a pool in another mode: pm::pool_options::pm_mode.
  std::optional<pm::mode> mode;
  pm::flush_kind flush = pm::flush_kind::automatic;
  uint32_t pm_write_ns = 0;
  pm::open_mode open = pm::open_mode::create_if_missing;
  // Index parameters "key=value,..." (used at creation; checked against the
  // index's schema: an unknown key or a bad value is errc::usage). `keys=`
  // chooses the key kind (see above).
  std::string params;
  // Crash-checker hooks (see pm::pool_options).
  pm::persist_observer* observer = nullptr;
  char* image = nullptr;
  uint64_t image_size = 0;
  bool quiet = false;
};

struct check_result {
  bool ok = true;
  std::string message;  // the first violated invariant
  static check_result fail(std::string m) { return {false, std::move(m)}; }
};

struct index_stats {
  uint64_t records = 0;
  uint64_t pm_bytes_used = 0;      // bytes in the index's pool blocks
  uint64_t pm_bytes_reserved = 0;  // chunks taken from the pool
  uint64_t dram_bytes = 0;         // DRAM the index (and its allocator) holds
  std::vector<std::pair<std::string, double>> extra;  // index-specific
  // Of dram_bytes, the pool allocator's (its chunk maps and thread caches,
  // sized by the pool, not by the records). Last, so that an index's
  // stats() written as {records, used, reserved, dram, {extras}} still
  // compiles.
  uint64_t alloc_dram_bytes = 0;
};

// How the open went: what the pool was, and what recovery cost.
struct open_report {
  bool created = false;
  bool was_clean = false;      // reopened after a clean close
  double open_seconds = 0;     // mapping + allocator state read back
  double recover_seconds = 0;  // index repair + tracing (dirty opens only)
  uint64_t traced_blocks = 0;
  pm::mode mode = pm::mode::persist;       // of this open
  pm::mode pool_mode = pm::mode::persist;  // the pool's own (chosen at creation)
  std::string note;  // one line when they differ ("pool created in eadr mode, opened in persist mode")
};

// ------------------------------------------------------------------ index

class index {
 public:
  virtual ~index() = default;

  // --- 64-bit integer keys, 8-byte values
  virtual bool insert(uint64_t key, uint64_t value) = 0;  // false if present (value unchanged)
  virtual bool update(uint64_t key, uint64_t value) = 0;  // false if absent
  virtual bool upsert(uint64_t key, uint64_t value);      // true if inserted
  virtual bool remove(uint64_t key) = 0;                  // false if absent
  virtual std::optional<uint64_t> lookup(uint64_t key) = 0;
  // Up to `count` records with key >= from, in key order, into out[0..).
  virtual size_t scan(uint64_t from, size_t count, record* out) = 0;
  // Every record with lo <= key <= hi, in key order, appended to out.
  virtual size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out);

  // --- byte strings
  virtual bool insert(std::string_view key, std::string_view value) = 0;
  virtual bool update(std::string_view key, std::string_view value) = 0;
  virtual bool upsert(std::string_view key, std::string_view value);
  virtual bool remove(std::string_view key) = 0;
  // True if present; the value is copied into *value unless it is null.
  virtual bool lookup(std::string_view key, std::string* value) = 0;
  // Up to `count` records with key >= from, in key order, appended to out;
  // returns how many were appended.
  virtual size_t scan(std::string_view from, size_t count, record_buffer& out) = 0;
  // Every record with lo <= key <= hi, in key order, appended to out, with
  // the same guarantee beside writers as scan() (index_entry::scan_guarantee).
  virtual size_t range(std::string_view lo, std::string_view hi, record_buffer& out);

  virtual check_result check() = 0;
  // Every persistent block the index owns, for tracing recovery and leak
  // checks: sink.add(offset, size) with the size it was allocated with.
  virtual void trace(pm::pool::trace_sink& sink) = 0;
  virtual index_stats stats() = 0;

  const std::string& name() const noexcept { return name_; }
  pm::pool& pool() noexcept { return *pool_; }
  const open_report& report() const noexcept { return report_; }
  // The key kind this index was created with, and its limits (bytes).
  key_kind keys() const noexcept { return keys_; }
  size_t max_key() const noexcept { return max_key_; }
  size_t max_value() const noexcept { return max_value_; }
  // Clean shutdown (also done by the destructor of the owning handle). An
  // index with background threads stops them first (override, then call
  // index::close()).
  virtual void close();
  // Drop without a clean shutdown (tests: what a crash leaves).
  virtual void abandon();

 protected:
  explicit index(pm::pool& p) : pool_(&p) {}
  // Throws errc::key_too_long / value_too_long (or errc::unsupported for a
  // key or value a u64 index cannot take) when a byte call is out of limits.
  void check_key(std::string_view key) const;
  void check_value(std::string_view value) const;
  // A dirty open, after the pool rebuilt its free space from trace(): the
  // first point where recovery may allocate (PACTree redoes its logged
  // SMOs here). Single-threaded, before open() returns. True when it
  // allocated or freed blocks (open() then counts the reachable blocks
  // again for its report).
  virtual bool after_recovery() { return false; }

 private:
  friend std::unique_ptr<index> open(const options&);
  std::string name_;
  pm::pool* pool_;
  std::unique_ptr<pm::pool> owned_pool_;
  open_report report_;
  key_kind keys_ = key_kind::u64;
  size_t max_key_ = 8, max_value_ = 8;
};

// An index whose layout holds 64-bit keys and 8-byte values (keys=u64): it
// implements the u64 calls; the byte calls take 8-byte keys and values.
class u64_index : public index {
 public:
  using index::insert, index::update, index::upsert, index::remove, index::lookup, index::scan, index::range;
  bool insert(std::string_view key, std::string_view value) final;
  bool update(std::string_view key, std::string_view value) final;
  bool upsert(std::string_view key, std::string_view value) final;
  bool remove(std::string_view key) final;
  bool lookup(std::string_view key, std::string* value) final;
  size_t scan(std::string_view from, size_t count, record_buffer& out) final;
  size_t range(std::string_view lo, std::string_view hi, record_buffer& out) final;

 protected:
  using index::index;
};

// An index whose layout holds byte keys and values (keys=bytes): it
// implements the byte calls; the u64 calls go through them (a record whose
// key or value is not 8 bytes is errc::unsupported for a u64 call).
class bytes_index : public index {
 public:
  using index::insert, index::update, index::upsert, index::remove, index::lookup, index::scan, index::range;
  bool insert(uint64_t key, uint64_t value) override;
  bool update(uint64_t key, uint64_t value) override;
  bool upsert(uint64_t key, uint64_t value) override;
  bool remove(uint64_t key) override;
  std::optional<uint64_t> lookup(uint64_t key) override;
  size_t scan(uint64_t from, size_t count, record* out) override;
  size_t range(uint64_t lo, uint64_t hi, std::vector<record>& out) override;

 protected:
  using index::index;
};

// Opens (creating or recovering) an index; throws pmindex::error.
std::unique_ptr<index> open(const options& o);

}  // namespace pmindex
