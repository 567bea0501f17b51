// The meta commands (mg, ms, md, ma, mn, me) as memcached 1.6 defines them,
// the ordered range read `mr` that only an ordered index can answer, and
// the key listings memcdump and friends use (`lru_crawler metadump`,
// `stats cachedump`). docs/server.md has the reference.
//
// Meta flags: one letter, a token of its own after it where the flag takes
// one ("T30", "Oabc"). A flag this server does not implement is refused
// like one memcached does not know (CLIENT_ERROR invalid flag), never
// ignored: a client asking for stale-while-revalidate (N, R, I) or a cas id
// of its own (E) must learn it did not get it.
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "pmindex/error.hpp"
#include "protocol.hpp"

namespace pmindex::server {

namespace {

constexpr size_t k_max_opaque = 32;
// A base64 token of up to 250 bytes of key.
constexpr size_t k_max_key_token = (k_max_key + 2) / 3 * 4;

constexpr char k_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// The flags of one meta command, by letter; `order` keeps the request order
// (memcached returns flags in the order they were asked for).
struct meta_flags {
  bool seen[128] = {};
  std::string_view arg[128];
  std::string order;
  bool has(char c) const { return seen[static_cast<unsigned char>(c)]; }
  std::string_view operator[](char c) const { return arg[static_cast<unsigned char>(c)]; }
};

struct flag_errors {
  std::string_view invalid, duplicate, token;
};
constexpr flag_errors k_mg_errors{"CLIENT_ERROR invalid flag\r\n", "CLIENT_ERROR duplicate flag\r\n",
                                  "CLIENT_ERROR bad token in command line format\r\n"};
constexpr flag_errors k_ms_errors{"CLIENT_ERROR invalid flag\r\n", "CLIENT_ERROR duplicate flag\r\n",
                                  "CLIENT_ERROR bad command line format\r\n"};
constexpr flag_errors k_md_errors{"CLIENT_ERROR invalid or duplicate flag\r\n",
                                  "CLIENT_ERROR invalid or duplicate flag\r\n",
                                  "CLIENT_ERROR invalid or duplicate flag\r\n"};

// Parses tok[first, ntok) against `simple` (flags without a token) and
// `with_token`; empty on success, else the error line.
std::string_view parse_flags(const std::string_view* tok, size_t ntok, size_t first, std::string_view simple,
                             std::string_view with_token, const flag_errors& err, meta_flags& f) {
  for (size_t i = first; i < ntok; ++i) {
    unsigned char c = static_cast<unsigned char>(tok[i][0]);
    bool takes = with_token.find(static_cast<char>(c)) != std::string_view::npos;
    if (c >= 128 || (!takes && simple.find(static_cast<char>(c)) == std::string_view::npos)) return err.invalid;
    if (f.seen[c]) return err.duplicate;
    if (!takes && tok[i].size() > 1) return err.invalid;
    f.seen[c] = true;
    f.arg[c] = tok[i].substr(1);
    f.order.push_back(static_cast<char>(c));
  }
  if (f.has('O') && f['O'].size() > k_max_opaque) return "CLIENT_ERROR opaque token too long\r\n";
  return {};
}

void num(std::string& out, char flag, int64_t v) {
  out.push_back(' ');
  out.push_back(flag);
  out.append(std::to_string(v));
}

// A listed key as a reply gives it: base64 with `b` under `b`, and also for
// a key a text line cannot carry (one stored through `b` with a space or a
// control character in it).
void key_flag(std::string& out, std::string_view key, bool b) {
  out.append(" k");
  if (b || !valid_key(key, true))
    out.append(base64_encode(key)).append(" b");
  else
    out.append(key);
}

// The flags a hit returns, in request order.
void item_flags(std::string& out, const meta_flags& f, std::string_view key_tok, const item& it, uint32_t now) {
  for (char c : f.order) switch (c) {
      case 'c':
        out.append(" c").append(std::to_string(it.cas));
        break;
      case 'f':
        num(out, 'f', it.flags);
        break;
      case 'h':
        out.append(" h0");  // no access tracking: a read writes nothing
        break;
      case 'k':
        out.append(" k").append(key_tok);
        if (f.has('b')) out.append(" b");
        break;
      case 'l':
        out.append(" l0");
        break;
      case 'O':
        out.append(" O").append(f['O']);
        break;
      case 's':
        num(out, 's', static_cast<int64_t>(it.data.size()));
        break;
      case 't':
        num(out, 't', ttl_left(it.exptime, now));
        break;
      default:
        break;
    }
}

// The flags a reply without an item returns (k, O, b), in request order.
void echo_flags(std::string& out, const meta_flags& f, std::string_view key_tok) {
  for (char c : f.order)
    if (c == 'k') {
      out.append(" k").append(key_tok);
      if (f.has('b')) out.append(" b");
    } else if (c == 'O') {
      out.append(" O").append(f['O']);
    }
}

// memcached's metadump spelling of a key: URI-encoded.
void uri_key(std::string& out, std::string_view key) {
  static const char hex[] = "0123456789ABCDEF";
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
}

}  // namespace

std::string base64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(k_b64[(v >> s) & 63]);
  }
  if (size_t rest = in.size() - i) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(in[i + 1])) << 8;
    out.push_back(k_b64[(v >> 18) & 63]);
    out.push_back(k_b64[(v >> 12) & 63]);
    out.push_back(rest == 2 ? k_b64[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  if (in.empty() || in.size() % 4) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    bool last = i + 4 == in.size();
    int pad = last ? (in[i + 3] == '=') + (in[i + 2] == '=' && in[i + 3] == '=') : 0;
    uint32_t v = 0;
    for (int j = 0; j < 4; ++j) {
      int d = j >= 4 - pad ? 0 : b64_value(in[i + j]);
      if (d < 0) return false;
      v = (v << 6) | static_cast<uint32_t>(d);
    }
    out.push_back(static_cast<char>(v >> 16));
    if (pad < 2) out.push_back(static_cast<char>(v >> 8));
    if (pad < 1) out.push_back(static_cast<char>(v));
  }
  return true;
}

bool session::meta_key(std::string_view tok, bool b, std::string& key, std::string& out) {
  if (!b) {
    if (!check_key(tok)) {
      out.append(k_bad_format);
      return false;
    }
    key.assign(tok);
    return true;
  }
  if (tok.size() > k_max_key_token) {
    out.append(k_bad_format);
    return false;
  }
  if (!base64_decode(tok, key) || !valid_binary_key(key)) {
    out.append("CLIENT_ERROR error decoding key\r\n");
    return false;
  }
  return true;
}

// mg <key> <flags>*: b c f h k l O q s t u v, T<ttl> (touch).
void session::meta_get(std::string_view* tok, size_t ntok, std::string& out) {
  meta_flags f;
  if (auto e = parse_flags(tok, ntok, 2, "bcfhklqstuv", "OT", k_mg_errors, f); !e.empty()) {
    out.append(e);
    return;
  }
  int64_t ttl = 0;
  if (f.has('T') && !parse_i64(f['T'], ttl)) {
    out.append(k_mg_errors.token);
    return;
  }
  if (!meta_key(tok[1], f.has('b'), key_, out)) return;
  ctr_.cmd_get.fetch_add(1, std::memory_order_relaxed);
  item it;
  bool hit;
  if (f.has('T')) {
    ctr_.cmd_touch.fetch_add(1, std::memory_order_relaxed);
    hit = store_.touch_get(key_, ttl, buf_, it);
    (hit ? ctr_.touch_hits : ctr_.touch_misses).fetch_add(1, std::memory_order_relaxed);
  } else {
    hit = store_.get(key_, buf_, it);
  }
  (hit ? ctr_.get_hits : ctr_.get_misses).fetch_add(1, std::memory_order_relaxed);
  if (!hit) {
    if (!f.has('q')) out.append("EN\r\n");
    return;
  }
  if (f.has('v'))
    out.append("VA ").append(std::to_string(it.data.size()));
  else
    out.append("HD");
  item_flags(out, f, tok[1], it, store::now());
  out.append("\r\n");
  if (f.has('v')) out.append(it.data).append("\r\n");
  if (buf_.capacity() > (size_t{1} << 20)) std::string().swap(buf_);
}

// ms <key> <datalen> <flags>*: b c C<cas> F<flags> k O q s T<ttl> M<mode>.
size_t session::meta_set(std::string_view* tok, size_t ntok, size_t line_len, const char* p, size_t n,
                         std::string& out) {
  uint64_t len = 0;
  if (ntok < 3 || !parse_u64(tok[2], INT32_MAX, len)) {
    out.append(k_bad_format);  // without a length the data block cannot be skipped
    return line_len;
  }
  meta_flags f;
  auto refuse = [&](std::string_view e) {
    out.append(e);
    swallow_ = len + 2;
    return line_len;
  };
  if (auto e = parse_flags(tok, ntok, 3, "bckqs", "CFOTM", k_ms_errors, f); !e.empty()) return refuse(e);
  uint64_t cas = 0, flags = 0;
  int64_t ttl = 0;
  if ((f.has('C') && !parse_u64(f['C'], UINT64_MAX, cas)) || (f.has('F') && !parse_u64(f['F'], UINT32_MAX, flags)) ||
      (f.has('T') && !parse_i64(f['T'], ttl)))
    return refuse(k_ms_errors.token);
  store_mode m = store_mode::set;
  if (f.has('M')) {
    std::string_view t = f['M'];
    char c = t.size() == 1 ? static_cast<char>(std::toupper(static_cast<unsigned char>(t[0]))) : '?';
    switch (c) {
      case 'S':
        break;
      case 'E':
        m = store_mode::add;
        break;
      case 'A':
        m = store_mode::append;
        break;
      case 'P':
        m = store_mode::prepend;
        break;
      case 'R':
        m = store_mode::replace;
        break;
      default:
        return refuse("CLIENT_ERROR invalid mode for ms M token\r\n");
    }
  }
  if (m == store_mode::set && f.has('C')) m = store_mode::cas;
  if (!meta_key(tok[1], f.has('b'), key_, out)) {
    swallow_ = len + 2;
    return line_len;
  }
  if (len > store_.max_item()) return refuse("SERVER_ERROR object too large for cache\r\n");
  size_t total = line_len + len + 2;
  if (n < total) {
    need_ = total;
    return 0;
  }
  const char* end = p + line_len + len;
  if (end[0] != '\r' || end[1] != '\n') {
    out.append("CLIENT_ERROR bad data chunk\r\n");
    skip_line_ = end[1] != '\n';
    return total;
  }
  ctr_.cmd_set.fetch_add(1, std::memory_order_relaxed);
  uint64_t new_cas = 0;
  result r;
  try {
    r = store_.put(m, key_, static_cast<uint32_t>(flags), ttl, std::string_view(p + line_len, len),
                   m == store_mode::add ? 0 : cas, &new_cas);
  } catch (const error& e) {  // e.g. a key over the index's max_key
    std::string msg = e.what();
    for (char& c : msg)
      if (c == '\r' || c == '\n') c = ' ';
    out.append("SERVER_ERROR ").append(msg).append("\r\n");
    return total;
  }
  if (m == store_mode::cas) {
    auto& c = r == result::stored ? ctr_.cas_hits : r == result::exists ? ctr_.cas_badval : ctr_.cas_misses;
    c.fetch_add(1, std::memory_order_relaxed);
  }
  std::string_view code;
  switch (r) {
    case result::stored:
      if (f.has('q')) return total;
      code = "HD";
      break;
    case result::not_stored:
      code = "NS";
      break;
    case result::exists:
      code = "EX";
      break;
    case result::not_found:
      code = "NF";
      break;
    case result::too_large:
      out.append("SERVER_ERROR object too large for cache\r\n");
      return total;
    default:
      ctr_.out_of_memory.fetch_add(1, std::memory_order_relaxed);
      out.append("SERVER_ERROR out of memory storing object\r\n");
      return total;
  }
  out.append(code);
  for (char c : f.order) {
    if (c == 'c' && r == result::stored) out.append(" c").append(std::to_string(new_cas));
    if (c == 's' && r == result::stored) num(out, 's', static_cast<int64_t>(len));
  }
  echo_flags(out, f, tok[1]);
  out.append("\r\n");
  return total;
}

// md <key> <flags>*: b C<cas> k O q.
void session::meta_delete(std::string_view* tok, size_t ntok, std::string& out) {
  meta_flags f;
  if (auto e = parse_flags(tok, ntok, 2, "bkq", "CO", k_md_errors, f); !e.empty()) {
    out.append(e);
    return;
  }
  uint64_t cas = 0;
  if (f.has('C') && !parse_u64(f['C'], UINT64_MAX, cas)) {
    out.append(k_md_errors.token);
    return;
  }
  if (!meta_key(tok[1], f.has('b'), key_, out)) return;
  result r = store_.remove(key_, cas);
  (r == result::deleted ? ctr_.delete_hits : ctr_.delete_misses).fetch_add(1, std::memory_order_relaxed);
  if (r == result::deleted && f.has('q')) return;
  out.append(r == result::deleted ? "HD" : r == result::exists ? "EX" : "NF");
  echo_flags(out, f, tok[1]);
  out.append("\r\n");
}

// ma <key> <flags>*: b c k O q t v, C<cas> D<delta> J<initial> M<mode>
// N<ttl> (create on a miss) T<ttl>.
void session::meta_arith(std::string_view* tok, size_t ntok, std::string& out) {
  meta_flags f;
  if (auto e = parse_flags(tok, ntok, 2, "bckqtv", "CDJMNOT", k_md_errors, f); !e.empty()) {
    out.append(e);
    return;
  }
  arith_op op;
  if ((f.has('C') && !parse_u64(f['C'], UINT64_MAX, op.cas_unique)) ||
      (f.has('D') && !parse_u64(f['D'], UINT64_MAX, op.delta)) ||
      (f.has('J') && !parse_u64(f['J'], UINT64_MAX, op.initial)) ||
      (f.has('N') && !parse_i64(f['N'], op.vivify_exptime)) || (f.has('T') && !parse_i64(f['T'], op.exptime))) {
    out.append(k_md_errors.token);
    return;
  }
  op.vivify = f.has('N');
  op.set_exptime = f.has('T');
  if (f.has('M')) {
    std::string_view t = f['M'];
    char c = t.size() == 1 ? t[0] : '?';
    if (c == 'I' || c == 'i' || c == '+')
      op.incr = true;
    else if (c == 'D' || c == 'd' || c == '-')
      op.incr = false;
    else {
      out.append("CLIENT_ERROR invalid mode for ma M token\r\n");
      return;
    }
  }
  if (!meta_key(tok[1], f.has('b'), key_, out)) return;
  item it;
  result r = store_.arith(key_, op, buf_, it);
  auto& hit = op.incr ? ctr_.incr_hits : ctr_.decr_hits;
  auto& miss = op.incr ? ctr_.incr_misses : ctr_.decr_misses;
  (r == result::not_found ? miss : hit).fetch_add(1, std::memory_order_relaxed);
  switch (r) {
    case result::stored:
      break;
    case result::not_found:
      out.append("NF");
      echo_flags(out, f, tok[1]);
      out.append("\r\n");
      return;
    case result::exists:
      out.append("EX");
      echo_flags(out, f, tok[1]);
      out.append("\r\n");
      return;
    case result::non_numeric:
      out.append("CLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
      return;
    default:
      ctr_.out_of_memory.fetch_add(1, std::memory_order_relaxed);
      out.append("SERVER_ERROR out of memory storing object\r\n");
      return;
  }
  if (!f.has('v') && f.has('q')) return;
  if (f.has('v'))
    out.append("VA ").append(std::to_string(it.data.size()));
  else
    out.append("HD");
  item_flags(out, f, tok[1], it, store::now());
  out.append("\r\n");
  if (f.has('v')) out.append(it.data).append("\r\n");
}

// me <key> [b]: what the server knows of one item.
void session::meta_debug(std::string_view* tok, size_t ntok, std::string& out) {
  if (ntok < 2 || ntok > 3 || (ntok == 3 && tok[2] != "b")) {
    out.append(k_bad_format);
    return;
  }
  if (!meta_key(tok[1], ntok == 3, key_, out)) return;
  item it;
  if (!store_.get(key_, buf_, it)) {
    out.append("EN\r\n");
    return;
  }
  out.append("ME ").append(tok[1]);
  out.append(" exp=").append(std::to_string(ttl_left(it.exptime, store::now())));
  out.append(" cas=").append(std::to_string(it.cas));
  out.append(" flags=").append(std::to_string(it.flags));
  out.append(" size=").append(std::to_string(it.data.size()));
  out.append("\r\n");
}

// mr <start-key> <flags>*: b f c s t v k, L<count> H<last-key> O<opaque>.
void session::range_begin(std::string_view* tok, size_t ntok, std::string& out) {
  meta_flags f;
  if (auto e = parse_flags(tok, ntok, 2, "bcfkstv", "HLO", k_mg_errors, f); !e.empty()) {
    out.append(e);
    return;
  }
  uint64_t limit = UINT64_MAX;
  if (f.has('L') && !parse_u64(f['L'], UINT64_MAX, limit)) {
    out.append(k_mg_errors.token);
    return;
  }
  if (!info_.ordered) {
    out.append("SERVER_ERROR mr needs an ordered index; ").append(info_.index_name).append(" is not\r\n");
    return;
  }
  bool b = f.has('b');
  // The bounds are positions, not keys to store: with b any bytes will do
  // (AA== is the least start there is).
  cursor& c = cur_;
  if (b) {
    if (!base64_decode(tok[1], c.next) ||
        (f.has('H') && (!base64_decode(f['H'], c.hi) || c.hi.empty()))) {
      out.append("CLIENT_ERROR error decoding key\r\n");
      return;
    }
  } else {
    if (!check_key(tok[1]) || (f.has('H') && !check_key(f['H']))) {
      out.append(k_bad_format);
      return;
    }
    c.next.assign(tok[1]);
    if (f.has('H')) c.hi.assign(f['H']);
  }
  c.kind = listing::range;
  c.has_hi = f.has('H');
  c.left = limit;
  c.b = b;
  c.v = f.has('v');
  c.ret.clear();
  for (char x : f.order)
    if (std::strchr("cfst", x)) c.ret.push_back(x);
  c.opaque = f.has('O') ? std::string(f['O']) : std::string();
}

// lru_crawler metadump all|hash|<class ids>: one line per key, then END.
void session::lru_crawler(std::string_view* tok, size_t ntok, std::string& out) {
  if (ntok != 3 || tok[1] != "metadump") {
    out.append("CLIENT_ERROR lru_crawler: only metadump is served (there is no LRU to crawl)\r\n");
    return;
  }
  // Every item is in class 1 (there are no slab classes).
  bool all = tok[2] == "all" || tok[2] == "hash";
  if (!all) {
    std::string_view ids = tok[2];
    size_t i = 0;
    while (i <= ids.size()) {
      size_t j = ids.find(',', i);
      if (j == std::string_view::npos) j = ids.size();
      uint64_t id = 0;
      if (!parse_u64(ids.substr(i, j - i), 63, id)) {
        out.append("CLIENT_ERROR bad class id\r\n");
        return;
      }
      all = all || id == 1;
      i = j + 1;
    }
  }
  if (!all) {
    out.append("END\r\n");
    return;
  }
  cur_.kind = listing::metadump;
  cur_.next.clear();
  cur_.has_hi = false;
  cur_.left = UINT64_MAX;
}

// stats cachedump <class> <limit>: "ITEM key [size b; exptime s]" lines
// (0 = no limit), everything in class 1; libmemcached's memcdump reads it.
void session::cachedump(std::string_view* tok, size_t ntok, std::string& out) {
  uint64_t id = 0, limit = 0;
  if (ntok != 4 || !parse_u64(tok[2], UINT32_MAX, id) || !parse_u64(tok[3], UINT64_MAX, limit)) {
    out.append(k_bad_format);
    return;
  }
  if (id != 1) {
    out.append("END\r\n");
    return;
  }
  cur_.kind = listing::cachedump;
  cur_.next.clear();
  cur_.has_hi = false;
  cur_.left = limit == 0 ? UINT64_MAX : limit;
}

// Streams the open listing until it ends or `out` passes `out_limit`.
void session::listing_step(std::string& out, size_t out_limit) {
  cursor& c = cur_;
  auto finish = [&](std::string_view line) {
    out.append(line);
    if (c.kind == listing::range && !c.opaque.empty()) {
      out.resize(out.size() - 2);
      out.append(" O").append(c.opaque).append("\r\n");
    }
    c.kind = listing::none;
    c.buf.clear();
    if (c.next.capacity() > 4096) std::string().swap(c.next);
  };
  try {
    while (out.size() <= out_limit) {
      size_t want = info_.scan_batch;
      if (c.left < want) want = static_cast<size_t>(c.left) + 1;  // one more: the continuation key
      c.buf.clear();
      size_t got = store_.scan(c.next, want, c.buf);
      uint32_t now = store::now();
      for (size_t i = 0; i < got; ++i) {
        std::string_view k = c.buf.key(i);
        item it;
        if (c.has_hi && k > c.hi) return finish(c.kind == listing::range ? "EN\r\n" : "END\r\n");
        if (!store::visible(k, c.buf.value(i), now, it)) continue;
        if (c.left == 0) {
          if (c.kind != listing::range) return finish("END\r\n");
          std::string line = "CN";
          key_flag(line, k, c.b);
          return finish(line + "\r\n");
        }
        --c.left;
        if (c.kind == listing::metadump) {
          out.append("key=");
          uri_key(out, k);
          out.append(" exp=").append(it.exptime ? std::to_string(it.exptime) : "-1");
          out.append(" la=0 cas=").append(std::to_string(it.cas));
          out.append(" fetch=no cls=1 size=").append(std::to_string(k.size() + it.data.size() + k_item_header));
          out.append(" flags=").append(std::to_string(it.flags)).append("\r\n");
          continue;
        }
        if (c.kind == listing::cachedump) {
          out.append("ITEM ");
          if (valid_key(k, true))
            out.append(k);
          else
            uri_key(out, k);
          out.append(" [").append(std::to_string(it.data.size())).append(" b; ");
          out.append(std::to_string(it.exptime)).append(" s]\r\n");
          continue;
        }
        if (c.v)
          out.append("VA ").append(std::to_string(it.data.size()));
        else
          out.append("HD");
        key_flag(out, k, c.b);
        for (char x : c.ret) switch (x) {
            case 'c':
              out.append(" c").append(std::to_string(it.cas));
              break;
            case 'f':
              num(out, 'f', it.flags);
              break;
            case 's':
              num(out, 's', static_cast<int64_t>(it.data.size()));
              break;
            default:
              num(out, 't', ttl_left(it.exptime, now));
              break;
          }
        out.append("\r\n");
        if (c.v) out.append(it.data).append("\r\n");
      }
      if (got < want) return finish(c.kind == listing::range ? "EN\r\n" : "END\r\n");
      c.next.assign(c.buf.key(got - 1));
      c.next.push_back('\0');  // the least key after the last one seen
    }
  } catch (const error& e) {
    std::string m = e.what();
    for (char& ch : m)
      if (ch == '\r' || ch == '\n') ch = ' ';
    c.kind = listing::none;
    out.append("SERVER_ERROR ").append(m).append("\r\n");
  }
}

}  // namespace pmindex::server
