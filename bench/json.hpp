// Minimal JSON for the harness: a value tree, a writer (pretty, stable key
// order as inserted) and a parser (for `pmindex compare`). Enough for the
// result files pmindex writes; not a general-purpose library.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pmindex::bench::json {

class value {
 public:
  enum class kind : uint8_t { null, boolean, number, string, array, object };

  value() = default;
  value(bool b) : k_(kind::boolean), b_(b) {}
  value(double d) : k_(kind::number), d_(d) {}
  value(int v) : k_(kind::number), d_(v) {}
  value(uint64_t v) : k_(kind::number), d_(static_cast<double>(v)) {}
  value(int64_t v) : k_(kind::number), d_(static_cast<double>(v)) {}
  value(unsigned v) : k_(kind::number), d_(v) {}
  value(const char* s) : k_(kind::string), s_(s) {}
  value(std::string s) : k_(kind::string), s_(std::move(s)) {}
  static value array() { value v; v.k_ = kind::array; return v; }
  static value object() { value v; v.k_ = kind::object; return v; }

  kind type() const noexcept { return k_; }
  bool is_number() const noexcept { return k_ == kind::number; }
  bool is_object() const noexcept { return k_ == kind::object; }
  bool is_array() const noexcept { return k_ == kind::array; }
  bool is_string() const noexcept { return k_ == kind::string; }
  double number() const noexcept { return d_; }
  bool boolean() const noexcept { return b_; }
  const std::string& str() const noexcept { return s_; }

  // Objects keep insertion order.
  value& set(const std::string& key, value v);
  const value* get(const std::string& key) const;
  const std::vector<std::pair<std::string, value>>& members() const noexcept { return obj_; }
  value& push(value v) { arr_.push_back(std::move(v)); return arr_.back(); }
  const std::vector<value>& items() const noexcept { return arr_; }

  std::string dump(int indent = 2) const;

 private:
  void dump_to(std::string& out, int indent, int depth) const;
  kind k_ = kind::null;
  bool b_ = false;
  double d_ = 0;
  std::string s_;
  std::vector<value> arr_;
  std::vector<std::pair<std::string, value>> obj_;
};

// Throws pmindex::error(usage) with the position on malformed input.
value parse(const std::string& text);

std::string escape(const std::string& s);

}  // namespace pmindex::bench::json
