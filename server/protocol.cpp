// The memcached text protocol: see protocol.hpp for what each bad input gets.
#include "protocol.hpp"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "pmindex/error.hpp"

namespace pmindex::server {

namespace {

// Splits a line at runs of spaces.
void tokenize(std::string_view line, std::vector<std::string_view>& tok) {
  tok.clear();
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) tok.push_back(line.substr(i, j - i));
    i = j;
  }
}

void stat(std::string& out, std::string_view name, uint64_t v) {
  out.append("STAT ").append(name).append(" ").append(std::to_string(v)).append("\r\n");
}
void stat(std::string& out, std::string_view name, std::string_view v) {
  out.append("STAT ").append(name).append(" ").append(v).append("\r\n");
}

uint64_t get(const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); }

thread_local std::vector<std::string_view> t_tokens;

std::string_view storage_reply(result r) {
  switch (r) {
    case result::stored:
      return "STORED\r\n";
    case result::not_stored:
      return "NOT_STORED\r\n";
    case result::exists:
      return "EXISTS\r\n";
    case result::not_found:
      return "NOT_FOUND\r\n";
    case result::too_large:
      return "SERVER_ERROR object too large for cache\r\n";
    default:
      return "SERVER_ERROR out of memory storing object\r\n";
  }
}

}  // namespace

void counters::reset() {
  for (auto* a : {&cmd_get,       &get_hits,   &get_misses,    &get_expired,       &cmd_set,
                  &cmd_touch,     &touch_hits, &touch_misses,  &cmd_flush,         &delete_hits,
                  &delete_misses, &incr_hits,  &incr_misses,   &decr_hits,         &decr_misses,
                  &cas_hits,      &cas_misses, &cas_badval,    &total_connections, &rejected_connections,
                  &expired_swept, &bytes_read, &bytes_written, &out_of_memory})
    a->store(0, std::memory_order_relaxed);
}

size_t session::feed(const char* data, size_t n, std::string& out, size_t out_limit) {
  size_t pos = 0;
  need_ = 1;
  for (;;) {
    if (busy()) {
      listing_step(out, out_limit);
      if (busy()) return pos;  // the commands after it wait
    }
    if (pos >= n || closing_ || out.size() > out_limit) break;
    if (swallow_) {
      uint64_t k = std::min<uint64_t>(swallow_, n - pos);
      pos += k;
      swallow_ -= k;
      continue;
    }
    if (skip_line_) {
      const void* nl = std::memchr(data + pos, '\n', n - pos);
      if (!nl) return n;
      pos = static_cast<const char*>(nl) - data + 1;
      skip_line_ = false;
      continue;
    }
    size_t used = command(data + pos, n - pos, out);
    if (used == 0) return pos;  // need_ says how much more
    pos += used;
  }
  need_ = 1;
  return pos;
}

// Warns (stderr) of a key refused for a control character: once per
// connection, and at most once a second over all connections.
bool session::check_key(std::string_view key) {
  if (valid_key(key, info_.control_keys)) return true;
  if (!warned_control_ && !info_.control_keys && valid_key(key, true)) {
    warned_control_ = true;
    static std::atomic<int64_t> last{0};
    int64_t now = store::now(), prev = last.load(std::memory_order_relaxed);
    if (prev != now && last.compare_exchange_strong(prev, now))
      std::fprintf(stderr,
                   "pmindex serve: refused a key with control characters (CLIENT_ERROR bad command line format); "
                   "--allow-control-keys accepts them as memcached does (noted once per connection)\n");
  }
  return false;
}

// A binary-protocol request header (24 bytes, magic 0x80): one binary reply,
// status 0x81 (unknown command) with the request's opcode and opaque, then
// the connection closes (what follows cannot be parsed as text).
size_t session::binary_request(const char* p, size_t n, std::string& out) {
  if (n < 24) {
    need_ = 24;
    return 0;
  }
  static constexpr std::string_view msg = "binary protocol not supported: use the text or meta protocol";
  char h[24] = {};
  h[0] = static_cast<char>(0x81);
  h[1] = p[1];                   // opcode
  h[7] = static_cast<char>(0x81);  // status (big-endian 16 bits at offset 6)
  uint32_t body = static_cast<uint32_t>(msg.size());
  for (int i = 0; i < 4; ++i) h[8 + i] = static_cast<char>(body >> (24 - 8 * i));
  std::memcpy(h + 12, p + 12, 4);  // opaque
  out.append(h, sizeof h).append(msg);
  closing_ = true;
  static std::atomic<int64_t> last{0};
  int64_t now = store::now(), prev = last.load(std::memory_order_relaxed);
  if (prev != now && last.compare_exchange_strong(prev, now))
    std::fprintf(stderr, "pmindex serve: a client sent a binary-protocol request: answered unknown command, closed\n");
  return n;
}

size_t session::command(const char* p, size_t n, std::string& out) {
  if (static_cast<unsigned char>(p[0]) == 0x80) return binary_request(p, n, out);
  const char* nl = static_cast<const char*>(std::memchr(p, '\n', std::min(n, k_max_line + 2)));
  if (!nl) {
    if (n > k_max_line) {
      out.append("CLIENT_ERROR line too long\r\n");
      closing_ = true;
      return n;
    }
    need_ = n + 1;
    return 0;
  }
  size_t line_len = nl - p + 1;
  std::string_view line(p, line_len - 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto& tok = t_tokens;
  tokenize(line, tok);
  if (tok.empty()) {
    out.append("ERROR\r\n");
    return line_len;
  }
  std::string_view cmd = tok[0];
  size_t ntok = tok.size();
  // noreply applies only to the commands that take it (memcached answers
  // "version noreply", and "get k noreply" asks for a key named noreply).
  bool takes_noreply = cmd == "delete" || cmd == "incr" || cmd == "decr" || cmd == "touch" ||
                       cmd == "flush_all" || cmd == "verbosity";
  bool noreply = takes_noreply && ntok > 1 && tok[ntok - 1] == "noreply";
  size_t mark = out.size();  // replies of a noreply command are cut back to here
  try {
    if (cmd == "get" || cmd == "gets") {
      if (ntok < 2) {
        out.append("ERROR\r\n");
      } else {
        retrieval(tok.data(), ntok, cmd == "gets", out);
      }
      return line_len;
    }
    if (cmd == "set" || cmd == "add" || cmd == "replace" || cmd == "append" || cmd == "prepend" ||
        cmd == "cas") {
      return storage(tok.data(), ntok, line_len, p, n, out);
    }
    if (cmd.size() == 2 && cmd[0] == 'm') {
      // The meta commands take a key, except mn (whose arguments are ignored).
      if (cmd == "mn") {
        out.append("MN\r\n");
        return line_len;
      }
      if (cmd == "ms") return meta_set(tok.data(), ntok, line_len, p, n, out);
      bool known = cmd == "mg" || cmd == "md" || cmd == "ma" || cmd == "me" || cmd == "mr";
      if (!known || ntok < 2) {
        out.append(known && cmd != "mg" ? k_bad_format : "ERROR\r\n");
      } else if (cmd == "mg") {
        meta_get(tok.data(), ntok, out);
      } else if (cmd == "md") {
        meta_delete(tok.data(), ntok, out);
      } else if (cmd == "ma") {
        meta_arith(tok.data(), ntok, out);
      } else if (cmd == "me") {
        meta_debug(tok.data(), ntok, out);
      } else {
        range_begin(tok.data(), ntok, out);
      }
      return line_len;
    }
    if (cmd == "delete") {
      // delete <key> [0] [noreply]: the 0 is a legacy time argument.
      size_t args = ntok - (noreply ? 1 : 0);
      if (ntok < 2 || ntok > 4) {
        out.append("ERROR\r\n");
      } else if (args > 3 || (args == 3 && tok[2] != "0") || !check_key(tok[1])) {
        out.append("CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n");
      } else {
        result r = store_.remove(tok[1]);
        (r == result::deleted ? ctr_.delete_hits : ctr_.delete_misses)
            .fetch_add(1, std::memory_order_relaxed);
        out.append(r == result::deleted ? "DELETED\r\n" : "NOT_FOUND\r\n");
      }
    } else if (cmd == "incr" || cmd == "decr") {
      uint64_t delta = 0, v = 0;
      bool incr = cmd == "incr";
      if (ntok != 3 && !(ntok == 4 && noreply)) {
        out.append("ERROR\r\n");
      } else if (!check_key(tok[1])) {
        out.append(k_bad_format);
      } else if (!parse_u64(tok[2], UINT64_MAX, delta)) {
        out.append("CLIENT_ERROR invalid numeric delta argument\r\n");
      } else {
        result r = store_.arith(tok[1], incr, delta, v);
        auto& hit = incr ? ctr_.incr_hits : ctr_.decr_hits;
        auto& miss = incr ? ctr_.incr_misses : ctr_.decr_misses;
        (r == result::not_found ? miss : hit).fetch_add(1, std::memory_order_relaxed);
        if (r == result::stored)
          out.append(std::to_string(v)).append("\r\n");
        else if (r == result::not_found)
          out.append("NOT_FOUND\r\n");
        else if (r == result::non_numeric)
          out.append("CLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
        else {
          ctr_.out_of_memory.fetch_add(1, std::memory_order_relaxed);
          out.append("SERVER_ERROR out of memory storing object\r\n");
        }
      }
    } else if (cmd == "touch") {
      int64_t exp = 0;
      if (ntok != 3 && !(ntok == 4 && noreply)) {
        out.append("ERROR\r\n");
      } else if (!check_key(tok[1])) {
        out.append(k_bad_format);
      } else if (!parse_i64(tok[2], exp)) {
        out.append("CLIENT_ERROR invalid exptime argument\r\n");
      } else {
        ctr_.cmd_touch.fetch_add(1, std::memory_order_relaxed);
        result r = store_.touch(tok[1], exp);
        (r == result::touched ? ctr_.touch_hits : ctr_.touch_misses).fetch_add(1, std::memory_order_relaxed);
        if (r == result::touched)
          out.append("TOUCHED\r\n");
        else if (r == result::not_found)
          out.append("NOT_FOUND\r\n");
        else
          out.append("SERVER_ERROR out of memory storing object\r\n");
      }
    } else if (cmd == "flush_all") {
      size_t args = ntok - 1 - (noreply ? 1 : 0);
      int64_t delay = 0;
      if (args > 1 || (args == 1 && (!parse_i64(tok[1], delay) || delay < 0))) {
        out.append(k_bad_format);
      } else {
        ctr_.cmd_flush.fetch_add(1, std::memory_order_relaxed);
        if (delay == 0)
          store_.flush_all();
        else
          store_.schedule_flush(store::absolute_expiry(delay));
        out.append("OK\r\n");
      }
    } else if (cmd == "stats" && ntok >= 2 && tok[1] == "cachedump") {
      cachedump(tok.data(), ntok, out);
    } else if (cmd == "lru_crawler") {
      lru_crawler(tok.data(), ntok, out);
    } else if (cmd == "stats") {
      stats(tok.data(), ntok, out);
    } else if (cmd == "version") {
      out.append("VERSION ").append(k_version).append("\r\n");
    } else if (cmd == "verbosity") {
      if (ntok < 2 || ntok > 3)
        out.append("ERROR\r\n");
      else
        out.append("OK\r\n");
    } else if (cmd == "quit") {
      closing_ = true;
      noreply = false;
    } else {
      out.append("ERROR\r\n");
      noreply = false;
    }
  } catch (const error& e) {
    std::string m = e.what();
    for (char& c : m)
      if (c == '\r' || c == '\n') c = ' ';
    out.append("SERVER_ERROR ").append(m).append("\r\n");
  } catch (const std::bad_alloc&) {
    out.append("SERVER_ERROR out of memory\r\n");
  }
  if (noreply) out.resize(mark);
  return line_len;
}

// set|add|replace|append|prepend <key> <flags> <exptime> <bytes> [noreply]
// cas <key> <flags> <exptime> <bytes> <cas unique> [noreply]
size_t session::storage(std::string_view* tok, size_t ntok, size_t line_len, const char* p, size_t n,
                        std::string& out) {
  bool is_cas = tok[0] == "cas";
  size_t want = is_cas ? 6 : 5;
  bool noreply = ntok == want + 1 && tok[want] == "noreply";
  if (ntok != want && !noreply) {
    out.append("ERROR\r\n");
    return line_len;
  }
  uint64_t len = 0, flags = 0, cas_unique = 0;
  int64_t exptime = 0;
  if (!parse_u64(tok[4], INT32_MAX, len)) {
    out.append(k_bad_format);  // without a length the data block cannot be skipped
    return line_len;
  }
  auto reply = [&](std::string_view s) {
    if (!noreply) out.append(s);
  };
  if (!check_key(tok[1]) || !parse_u64(tok[2], UINT32_MAX, flags) ||
      !parse_i64(tok[3], exptime) || (is_cas && !parse_u64(tok[5], UINT64_MAX, cas_unique))) {
    reply(k_bad_format);
    swallow_ = len + 2;
    return line_len;
  }
  if (len > store_.max_item()) {
    reply("SERVER_ERROR object too large for cache\r\n");
    swallow_ = len + 2;
    return line_len;
  }
  size_t total = line_len + len + 2;
  if (n < total) {
    need_ = total;
    return 0;
  }
  const char* end = p + line_len + len;
  if (end[0] != '\r' || end[1] != '\n') {
    reply("CLIENT_ERROR bad data chunk\r\n");
    skip_line_ = end[1] != '\n';
    return total;
  }
  std::string_view data(p + line_len, len);
  ctr_.cmd_set.fetch_add(1, std::memory_order_relaxed);
  store_mode m = tok[0] == "set"       ? store_mode::set
                 : tok[0] == "add"     ? store_mode::add
                 : tok[0] == "replace" ? store_mode::replace
                 : tok[0] == "append"  ? store_mode::append
                 : tok[0] == "prepend" ? store_mode::prepend
                                       : store_mode::cas;
  result r;
  try {
    r = store_.put(m, tok[1], static_cast<uint32_t>(flags), exptime, data, cas_unique);
  } catch (const error& e) {
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\r' || c == '\n') c = ' ';
    reply("SERVER_ERROR " + msg + "\r\n");
    return total;
  }
  if (is_cas) {
    auto& c = r == result::stored ? ctr_.cas_hits : r == result::exists ? ctr_.cas_badval : ctr_.cas_misses;
    c.fetch_add(1, std::memory_order_relaxed);
  }
  if (r == result::out_of_memory) ctr_.out_of_memory.fetch_add(1, std::memory_order_relaxed);
  reply(storage_reply(r));
  return total;
}

void session::retrieval(std::string_view* tok, size_t ntok, bool with_cas, std::string& out) {
  for (size_t i = 1; i < ntok; ++i)
    if (!check_key(tok[i])) {
      out.append(k_bad_format);
      return;
    }
  item it;
  char num[64];
  for (size_t i = 1; i < ntok; ++i) {
    ctr_.cmd_get.fetch_add(1, std::memory_order_relaxed);
    if (!store_.get(tok[i], buf_, it)) {
      ctr_.get_misses.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    ctr_.get_hits.fetch_add(1, std::memory_order_relaxed);
    out.append("VALUE ").append(tok[i]);
    int k = with_cas ? std::snprintf(num, sizeof num, " %u %zu %llu\r\n", it.flags, it.data.size(),
                                     static_cast<unsigned long long>(it.cas))
                     : std::snprintf(num, sizeof num, " %u %zu\r\n", it.flags, it.data.size());
    out.append(num, k).append(it.data).append("\r\n");
  }
  out.append("END\r\n");
  if (buf_.capacity() > (size_t{1} << 20)) std::string().swap(buf_);  // no large buffer kept per client
}

void session::stats(std::string_view* tok, size_t ntok, std::string& out) {
  if (ntok == 2 && tok[1] == "reset") {
    ctr_.reset();
    out.append("RESET\r\n");
    return;
  }
  if (ntok == 2 && tok[1] == "settings") {
    stat(out, "maxconns", info_.max_connections);
    stat(out, "num_threads", info_.threads);
    stat(out, "item_size_max", store_.max_item() + k_item_header);  // -I: the data plus the item header
    stat(out, "idle_timeout", info_.idle_timeout);
    stat(out, "index", info_.index_name);
    stat(out, "pool", info_.pool_path);
    stat(out, "mode", info_.mode);
    out.append("END\r\n");
    return;
  }
  if (ntok == 2 && (tok[1] == "items" || tok[1] == "slabs" || tok[1] == "sizes" || tok[1] == "conns")) {
    out.append("END\r\n");  // no slab allocator, no per-slab figures
    return;
  }
  if (ntok != 1) {
    out.append("ERROR\r\n");
    return;
  }
  uint64_t now = store::now();
  stat(out, "pid", static_cast<uint64_t>(getpid()));
  stat(out, "uptime", now - info_.start_time);
  stat(out, "time", now);
  stat(out, "version", k_version);
  stat(out, "pointer_size", 64);
  stat(out, "curr_connections", get(ctr_.curr_connections));
  stat(out, "total_connections", get(ctr_.total_connections));
  stat(out, "rejected_connections", get(ctr_.rejected_connections));
  stat(out, "max_connections", info_.max_connections);
  stat(out, "cmd_get", get(ctr_.cmd_get));
  stat(out, "cmd_set", get(ctr_.cmd_set));
  stat(out, "cmd_flush", get(ctr_.cmd_flush));
  stat(out, "cmd_touch", get(ctr_.cmd_touch));
  stat(out, "get_hits", get(ctr_.get_hits));
  stat(out, "get_misses", get(ctr_.get_misses));
  stat(out, "delete_misses", get(ctr_.delete_misses));
  stat(out, "delete_hits", get(ctr_.delete_hits));
  stat(out, "incr_misses", get(ctr_.incr_misses));
  stat(out, "incr_hits", get(ctr_.incr_hits));
  stat(out, "decr_misses", get(ctr_.decr_misses));
  stat(out, "decr_hits", get(ctr_.decr_hits));
  stat(out, "cas_misses", get(ctr_.cas_misses));
  stat(out, "cas_hits", get(ctr_.cas_hits));
  stat(out, "cas_badval", get(ctr_.cas_badval));
  stat(out, "touch_hits", get(ctr_.touch_hits));
  stat(out, "touch_misses", get(ctr_.touch_misses));
  stat(out, "bytes_read", get(ctr_.bytes_read));
  stat(out, "bytes_written", get(ctr_.bytes_written));
  stat(out, "threads", info_.threads);
  stat(out, "item_size_max", store_.max_item() + k_item_header);
  stat(out, "curr_items", store_.items());
  stat(out, "expired_swept", get(ctr_.expired_swept));
  stat(out, "out_of_memory_errors", get(ctr_.out_of_memory));
  auto u = store_.idx().pool().usage();
  stat(out, "bytes", u.used_bytes);
  stat(out, "limit_maxbytes", u.capacity_bytes);
  stat(out, "evictions", uint64_t{0});
  stat(out, "index", info_.index_name);
  // 1: the pool needed no recovery (new, or closed cleanly); 0: recovered after a crash.
  stat(out, "pool_was_clean", info_.was_clean || info_.created ? 1 : 0);
  stat(out, "pool_created", info_.created ? 1 : 0);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.6f", info_.open_seconds + info_.recover_seconds);
  stat(out, "restart_seconds", secs);
  out.append("END\r\n");
}

}  // namespace pmindex::server
