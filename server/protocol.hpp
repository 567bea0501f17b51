// The memcached text protocol of `pmindex serve`, independent of any event
// loop: a session turns the bytes a client sent into replies, so the fuzz
// and conformance tests drive it directly and the network layer only moves
// bytes.
//
// Commands: get, gets, set, add, replace, append, prepend, cas, delete,
// incr, decr, touch, flush_all, stats, version, verbosity, quit; `noreply`
// on every command that takes it; the meta commands mg, ms, md, ma, mn, me
// and the ordered range read mr (meta.cpp); key listings for memcdump and
// friends (`lru_crawler metadump`, `stats cachedump`). Lines end in "\r\n"
// (a bare "\n" is accepted, as memcached does).
//
// A range read or a key listing can be far longer than what one feed()
// should buffer: it is streamed. The session keeps a cursor and feed()
// continues it (before reading further commands, which wait their turn)
// while `out` is below its limit; busy() says a cursor is still open, so
// the caller calls feed() again once the replies drained, with or without
// new input.
//
// Bad input gets memcached's reply and the session goes on:
//   - unknown command or empty line: ERROR
//   - malformed arguments, a key over 250 bytes or with a control
//     character: CLIENT_ERROR bad command line format (a storage command
//     whose length parsed still has its data block skipped);
//   - a data block not followed by "\r\n" (longer or shorter than
//     announced): CLIENT_ERROR bad data chunk, and the rest of that line is
//     skipped so the next command is read from a line start;
//   - data over the item limit: SERVER_ERROR object too large for cache
//     (the block is skipped without being buffered);
//   - a full pool: SERVER_ERROR out of memory storing object (nothing
//     stored before is lost);
//   - a line longer than k_max_line with no end: CLIENT_ERROR line too
//     long, then the connection is closed (it cannot be resynchronised);
//   - a binary-protocol request (first byte 0x80): a binary "unknown
//     command" reply, then the connection is closed (a binary client would
//     otherwise wait for a reply until its timeout).
// A key refused for its control characters is also noted on stderr, once
// per connection and at most once a second in all, so that a benchmark
// whose every request is refused does not go unnoticed.
// With noreply every reply of that command is dropped, errors included
// (memcached does the same), except errors found before noreply was parsed.
#pragma once

#include <atomic>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "pmindex/index.hpp"
#include "store.hpp"

namespace pmindex::server {

inline constexpr size_t k_max_line = 64 * 1024;

// Counters of the `stats` command, shared by all sessions (relaxed atomics).
struct counters {
  std::atomic<uint64_t> cmd_get{0}, get_hits{0}, get_misses{0}, get_expired{0}, cmd_set{0}, cmd_touch{0},
      touch_hits{0}, touch_misses{0}, cmd_flush{0}, delete_hits{0}, delete_misses{0}, incr_hits{0},
      incr_misses{0}, decr_hits{0}, decr_misses{0}, cas_hits{0}, cas_misses{0}, cas_badval{0},
      curr_connections{0}, total_connections{0}, rejected_connections{0}, expired_swept{0}, bytes_read{0},
      bytes_written{0}, out_of_memory{0};
  void reset();
};

// What `stats` reports besides the counters.
struct server_info {
  uint64_t start_time = 0;  // unix seconds
  uint32_t threads = 1;
  uint32_t max_connections = 0;
  uint32_t idle_timeout = 0;
  std::string index_name, pool_path, mode;
  double open_seconds = 0, recover_seconds = 0;
  double startup_seconds = 0;  // opening the index and the item store, until ready to listen
  bool was_clean = false, created = false;
  bool ordered = true;      // the index keeps key order (mr needs it)
  size_t scan_batch = 256;  // records per index scan of mr and the key listings
  bool control_keys = false;  // --allow-control-keys (see valid_key)
};

inline constexpr std::string_view k_version = "1.6.18-pmindex-0.1";

class session {
 public:
  session(store& s, counters& c, const server_info& info) : store_(s), ctr_(c), info_(info) {}

  // Handles every complete command at the front of data[0, n), appending
  // the replies to `out`, and stops early once `out` holds more than
  // `out_limit` bytes. Returns how many bytes were used; the caller keeps
  // the rest and calls again with more (at least need() bytes in all).
  size_t feed(const char* data, size_t n, std::string& out, size_t out_limit = SIZE_MAX);
  // Bytes the unused input must reach before feed() can progress.
  size_t need() const noexcept { return need_; }
  // The client sent quit, or the input cannot be resynchronised: close
  // once `out` is sent.
  bool closing() const noexcept { return closing_; }
  // A range read or key listing is still being streamed: call feed() again
  // (even with no new input) once `out` was sent.
  bool busy() const noexcept { return cur_.kind != listing::none; }

 private:
  // Returns the bytes of one command used from p[0, n), 0 if incomplete.
  size_t command(const char* p, size_t n, std::string& out);
  size_t storage(std::string_view* tok, size_t ntok, size_t line_len, const char* p, size_t n,
                 std::string& out);
  void retrieval(std::string_view* tok, size_t ntok, bool with_cas, std::string& out);
  void stats(std::string_view* tok, size_t ntok, std::string& out);
  // A client key: valid_key(), noting a refused control character (see above).
  bool check_key(std::string_view key);
  size_t binary_request(const char* p, size_t n, std::string& out);

  // meta.cpp: the meta commands and the streamed listings.
  void meta_get(std::string_view* tok, size_t ntok, std::string& out);
  size_t meta_set(std::string_view* tok, size_t ntok, size_t line_len, const char* p, size_t n, std::string& out);
  void meta_delete(std::string_view* tok, size_t ntok, std::string& out);
  void meta_arith(std::string_view* tok, size_t ntok, std::string& out);
  void meta_debug(std::string_view* tok, size_t ntok, std::string& out);
  void range_begin(std::string_view* tok, size_t ntok, std::string& out);
  void lru_crawler(std::string_view* tok, size_t ntok, std::string& out);
  void cachedump(std::string_view* tok, size_t ntok, std::string& out);
  void listing_step(std::string& out, size_t out_limit);
  // The key of a meta command: base64-decoded with `b`; false (and the
  // error line in `out`) for a key the protocol refuses.
  bool meta_key(std::string_view tok, bool b, std::string& key, std::string& out);

  enum class listing { none, range, metadump, cachedump };
  struct cursor {
    listing kind = listing::none;
    std::string next;  // the least key not yet looked at
    std::string hi;    // with has_hi: the last key in range
    bool has_hi = false;
    uint64_t left = UINT64_MAX;  // records still to send (mr L, cachedump limit)
    bool b = false, v = false;
    std::string ret;  // mr: the flags to return per record, in request order
    std::string opaque;
    record_buffer buf;
  };

  store& store_;
  counters& ctr_;
  const server_info& info_;
  uint64_t swallow_ = 0;    // bytes of a refused data block still to skip
  bool skip_line_ = false;  // skip to the next '\n' (after a bad data chunk)
  size_t need_ = 1;
  bool closing_ = false;
  std::string buf_;  // lookup buffer, reused
  std::string key_;  // a decoded meta key, reused
  cursor cur_;
  bool warned_control_ = false;
};

// base64 (RFC 4648, padded) of the meta `b` flag.
std::string base64_encode(std::string_view in);
bool base64_decode(std::string_view in, std::string& out);

// Shared by the classic and the meta commands.
inline constexpr std::string_view k_bad_format = "CLIENT_ERROR bad command line format\r\n";

// Unsigned decimal, digits only (no sign), at most `max`.
inline bool parse_u64(std::string_view t, uint64_t max, uint64_t& v) {
  if (t.empty() || t.size() > 20 || t[0] == '+') return false;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  return ec == std::errc() && p == t.data() + t.size() && v <= max;
}

// Signed decimal.
inline bool parse_i64(std::string_view t, int64_t& v) {
  if (t.empty() || t.size() > 20) return false;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  return ec == std::errc() && p == t.data() + t.size();
}

}  // namespace pmindex::server
