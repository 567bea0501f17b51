// JSON of the harness (result files, `pmindex list --json`, studies) is
// nlohmann/json's ordered_json: objects keep the order their members were
// written in, so a result file reads in the order of the table. The helpers
// read documents a user may have edited or cut short: a member that is
// missing, or of another type, reads as absent, 0, "" or empty, never as
// an exception out of a verb.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pmindex::bench::json {

using value = nlohmann::ordered_json;

// The member `key` of an object; nullptr when `v` is no object or has none.
inline const value* find(const value& v, const std::string& key) {
  if (!v.is_object()) return nullptr;
  auto it = v.find(key);
  return it == v.end() ? nullptr : &*it;
}

// A number as a double; 0 when `v` is no number.
inline double num(const value& v) { return v.is_number() ? v.get<double>() : 0.0; }

// A string; empty when `v` is no string.
inline const std::string& str(const value& v) {
  static const std::string empty;
  return v.is_string() ? v.get_ref<const std::string&>() : empty;
}

inline bool boolean(const value& v) { return v.is_boolean() && v.get<bool>(); }

// An array to iterate or index; empty when `v` is no array.
inline const value& items(const value& v) {
  static const value empty = value::array();
  return v.is_array() ? v : empty;
}

// An object whose .items() are its members; empty when `v` is no object.
inline const value& members(const value& v) {
  static const value empty = value::object();
  return v.is_object() ? v : empty;
}

// Indented by `indent` spaces (0: one line), with a final newline. Bytes
// that are not UTF-8 (a binary dataset's keys) are written as U+FFFD.
std::string dump(const value& v, int indent = 2);

// Throws pmindex::error(usage), one line with the byte offset, on
// malformed input.
value parse(const std::string& text);

}  // namespace pmindex::bench::json
