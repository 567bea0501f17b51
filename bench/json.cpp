#include "json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "pmindex/error.hpp"

namespace pmindex::bench::json {

value& value::set(const std::string& key, value v) {
  for (auto& [k, x] : obj_)
    if (k == key) return x = std::move(v);
  obj_.emplace_back(key, std::move(v));
  return obj_.back().second;
}

const value* value::get(const std::string& key) const {
  for (auto& [k, x] : obj_)
    if (k == key) return &x;
  return nullptr;
}

std::string escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

static void number_to(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char b[40];
  if (d == std::floor(d) && std::fabs(d) < 1e15) std::snprintf(b, sizeof b, "%.0f", d);
  else std::snprintf(b, sizeof b, "%.6g", d);
  out += b;
}

void value::dump_to(std::string& out, int indent, int depth) const {
  auto nl = [&](int d) {
    if (indent <= 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (k_) {
    case kind::null: out += "null"; break;
    case kind::boolean: out += b_ ? "true" : "false"; break;
    case kind::number: number_to(out, d_); break;
    case kind::string: out += '"' + escape(s_) + '"'; break;
    case kind::array: {
      // Arrays of numbers on one line (time series stay readable).
      bool flat = true;
      for (auto& v : arr_) flat &= v.k_ == kind::number;
      out += '[';
      for (size_t i = 0; i < arr_.size(); ++i) {
        if (i) out += flat ? ", " : ",";
        if (!flat) nl(depth + 1);
        arr_[i].dump_to(out, indent, depth + 1);
      }
      if (!flat && !arr_.empty()) nl(depth);
      out += ']';
      break;
    }
    case kind::object: {
      out += '{';
      for (size_t i = 0; i < obj_.size(); ++i) {
        if (i) out += ',';
        nl(depth + 1);
        out += '"' + escape(obj_[i].first) + "\":" + (indent > 0 ? " " : "");
        obj_[i].second.dump_to(out, indent, depth + 1);
      }
      if (!obj_.empty()) nl(depth);
      out += '}';
      break;
    }
  }
}

std::string value::dump(int indent) const {
  std::string s;
  dump_to(s, indent, 0);
  s += '\n';
  return s;
}

namespace {
struct parser {
  const std::string& t;
  size_t i = 0;
  [[noreturn]] void fail(const char* what) {
    throw error(errc::usage, std::string("malformed JSON: ") + what + " at byte " + std::to_string(i));
  }
  void ws() {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\t' || t[i] == '\r')) ++i;
  }
  bool lit(const char* s) {
    size_t n = std::char_traits<char>::length(s);
    if (t.compare(i, n, s) == 0) {
      i += n;
      return true;
    }
    return false;
  }
  std::string str() {
    if (t[i] != '"') fail("expected a string");
    ++i;
    std::string o;
    while (i < t.size() && t[i] != '"') {
      char c = t[i++];
      if (c != '\\') {
        o += c;
        continue;
      }
      if (i >= t.size()) fail("bad escape");
      char e = t[i++];
      switch (e) {
        case 'n': o += '\n'; break;
        case 't': o += '\t'; break;
        case 'r': o += '\r'; break;
        case 'b': o += '\b'; break;
        case 'f': o += '\f'; break;
        case 'u': {
          if (i + 4 > t.size()) fail("bad \\u escape");
          unsigned cp = static_cast<unsigned>(std::strtoul(t.substr(i, 4).c_str(), nullptr, 16));
          i += 4;
          o += cp < 0x80 ? static_cast<char>(cp) : '?';
          break;
        }
        default: o += e;
      }
    }
    if (i >= t.size()) fail("unterminated string");
    ++i;
    return o;
  }
  value val(int depth) {
    if (depth > 64) fail("nesting too deep");
    ws();
    if (i >= t.size()) fail("unexpected end");
    char c = t[i];
    if (c == '{') {
      ++i;
      value o = value::object();
      ws();
      if (i < t.size() && t[i] == '}') {
        ++i;
        return o;
      }
      for (;;) {
        ws();
        std::string k = str();
        ws();
        if (i >= t.size() || t[i] != ':') fail("expected ':'");
        ++i;
        o.set(k, val(depth + 1));
        ws();
        if (i < t.size() && t[i] == ',') {
          ++i;
          continue;
        }
        if (i < t.size() && t[i] == '}') {
          ++i;
          return o;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      ++i;
      value a = value::array();
      ws();
      if (i < t.size() && t[i] == ']') {
        ++i;
        return a;
      }
      for (;;) {
        a.push(val(depth + 1));
        ws();
        if (i < t.size() && t[i] == ',') {
          ++i;
          continue;
        }
        if (i < t.size() && t[i] == ']') {
          ++i;
          return a;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c == '"') return value(str());
    if (lit("true")) return value(true);
    if (lit("false")) return value(false);
    if (lit("null")) return value();
    char* end = nullptr;
    double d = std::strtod(t.c_str() + i, &end);
    if (end == t.c_str() + i) fail("unexpected character");
    i = static_cast<size_t>(end - t.c_str());
    return value(d);
  }
};
}  // namespace

value parse(const std::string& text) {
  parser p{text};
  value v = p.val(0);
  p.ws();
  if (p.i != text.size()) p.fail("trailing characters");
  return v;
}

}  // namespace pmindex::bench::json
