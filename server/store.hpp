// The item store of `pmindex serve`: memcached items (flags, expiry, cas id,
// data) kept in any pmindex index opened keys=bytes.
//
// Each item is one record of the index: the memcached key is the index key
// and the index value is a 16-byte header followed by the data:
//
//   offset 0   uint64  cas     the item's cas id (host order)
//   offset 8   uint32  flags   the client's opaque flags
//   offset 12  uint32  exptime absolute unix time in seconds; 0 = never
//   offset 16  ...     data    the client's bytes
//
// One index write (insert, update, upsert or remove) commits each change, so
// an item's data, flags, expiry and cas id change together, and a reply is
// sent only after that write returned: in persist mode the index makes a
// write durable before it returns (durable linearizability, checked by the
// crash checker), so every acknowledged change survives a crash.
//
// Commands that read then write (add, replace, append, prepend, cas,
// incr/decr, touch, delete of a live item) hold a lock stripe picked by the
// key's hash around the pair, so they are atomic with respect to each
// other; `get` takes no lock (one index lookup returns header and data).
//
// cas ids are unique across restarts: (boot << 40) | sequence, where boot
// is a counter kept durably in the index under a key no client can send
// (it starts with a NUL byte; client keys have no control characters).
// Expired items read as absent; the sweeper removes them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <string>
#include <string_view>

#include "pmindex/index.hpp"

namespace pmindex::server {

inline constexpr size_t k_item_header = 16;
inline constexpr size_t k_max_key = 250;  // the memcached protocol's limit
// Relative expiry times are at most 30 days; larger ones are unix times.
inline constexpr int64_t k_relative_expiry_max = 60 * 60 * 24 * 30;

enum class result {
  stored,
  not_stored,
  exists,
  not_found,
  deleted,
  touched,
  too_large,      // SERVER_ERROR object too large for cache
  out_of_memory,  // SERVER_ERROR out of memory storing object (pool full)
  non_numeric,    // incr/decr on data that is not a decimal number
};

enum class store_mode { set, add, replace, append, prepend, cas };

// What incr/decr (text `incr`, meta `ma`) do; the meta fields are off by
// default, which is the text command.
struct arith_op {
  bool incr = true;
  uint64_t delta = 1;
  uint64_t cas_unique = 0;  // nonzero: only if the item's cas id is this (else exists)
  bool vivify = false;      // a miss creates the item holding `initial`, expiring at vivify_exptime
  int64_t vivify_exptime = 0;
  uint64_t initial = 0;
  bool set_exptime = false;  // a hit also sets the expiry to `exptime`
  int64_t exptime = 0;
};

// An item as read: views into the caller's buffer.
struct item {
  uint64_t cas = 0;
  uint32_t flags = 0;
  uint32_t exptime = 0;
  std::string_view data;
};

class store {
 public:
  // `max_item`: the longest data accepted (at most idx.max_value() - 16).
  store(index& idx, size_t max_item);

  size_t max_item() const noexcept { return max_item_; }
  // Seconds since the epoch (the store's clock).
  static uint32_t now() noexcept { return static_cast<uint32_t>(std::time(nullptr)); }
  // memcached expiry argument -> absolute time (0 = never; 1 = already expired).
  static uint32_t absolute_expiry(int64_t exptime) noexcept;

  // True if the key holds a live item; its data is copied into `buf`.
  bool get(std::string_view key, std::string& buf, item& out);
  // `cas_unique`: the cas id a cas write compares; nonzero with replace,
  // append or prepend it is compared too (meta `ms ... C<cas>`). The new
  // item's cas id goes to *new_cas when stored.
  result put(store_mode m, std::string_view key, uint32_t flags, int64_t exptime, std::string_view data,
             uint64_t cas_unique = 0, uint64_t* new_cas = nullptr);
  // `cas_unique` nonzero: removed only if the item's cas id is that (else exists).
  result remove(std::string_view key, uint64_t cas_unique = 0);
  // incr/decr: `value` receives the new number on result::stored.
  result arith(std::string_view key, bool incr, uint64_t delta, uint64_t& value);
  // The same with the meta options; on result::stored `out` holds the item
  // as written (its data is the number's text, in `buf`).
  result arith(std::string_view key, const arith_op& op, std::string& buf, item& out);
  result touch(std::string_view key, int64_t exptime);
  // get and touch in one (meta `mg ... T<ttl>`): true if live; the item
  // with its new expiry is copied into `buf`/`out`.
  bool touch_get(std::string_view key, int64_t exptime, std::string& buf, item& out);
  // Up to `count` records with key >= from, in key order (the index's scan,
  // with its guarantee beside writers), raw: decode() them.
  size_t scan(std::string_view from, size_t count, record_buffer& out) { return idx_.scan(from, count, out); }
  // A record of scan() as an item; false for the server's own records and
  // for values it did not write. `now`: expired items are false too.
  static bool visible(std::string_view key, std::string_view value, uint32_t now, item& out);
  // Removes every item (flush_all) or only the expired ones (the sweeper);
  // returns how many were removed.
  uint64_t flush_all();
  uint64_t sweep_expired();
  // `flush_all N`: a flush at unix time `at` (replacing any pending one),
  // run by the sweeper (run_due_flush). Not durable: a restart forgets it.
  void schedule_flush(uint32_t at) noexcept { flush_at_.store(at, std::memory_order_relaxed); }
  bool run_due_flush();

  // Items in the store (`curr_items`): the writes since start plus the
  // records found by count_items(), which the sweeper runs once at start
  // (until it is done, and for writes racing with it, the figure is off).
  uint64_t items() const noexcept { return items_.load(std::memory_order_relaxed); }
  void count_items();
  index& idx() noexcept { return idx_; }

 private:
  struct alignas(64) stripe {
    std::mutex mu;
  };
  static constexpr size_t k_stripes = 1024;
  static constexpr uint64_t k_seq_bits = 40;

  std::mutex& lock_for(std::string_view key);
  uint64_t next_cas();
  void new_boot();
  // Index writes that map a full pool to result::out_of_memory.
  result write(std::string_view key, const std::string& value, bool fresh);
  uint64_t remove_if(bool only_expired);
  static void encode(std::string& out, uint64_t cas, uint32_t flags, uint32_t exptime, std::string_view a,
                     std::string_view b = {});
  static bool decode(std::string_view v, item& out);

  index& idx_;
  size_t max_item_;
  std::string_view boot_key_;
  std::array<stripe, k_stripes> stripes_;
  std::mutex boot_mu_;
  std::atomic<uint64_t> cas_{0};
  std::atomic<uint64_t> items_{0};
  std::atomic<uint32_t> flush_at_{0};
};

// The seconds an item has left: -1 if it never expires (meta `t`).
int64_t ttl_left(uint32_t exptime, uint32_t now) noexcept;

// True for a key the protocol accepts: 1..250 bytes, no control characters
// and no space (memcached keys are separated by spaces). With
// `control_chars`, control characters other than NUL are accepted, as stock
// memcached does (memaslap's keys start with 8 bytes of 0x10); NUL never is
// (the server's own records start with it).
bool valid_key(std::string_view key, bool control_chars = false) noexcept;
// A key given base64-encoded (meta `b` flag): 1..250 bytes of any value but a
// leading NUL (the server's own records start with one).
bool valid_binary_key(std::string_view key) noexcept;

}  // namespace pmindex::server
