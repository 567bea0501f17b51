#include "json.hpp"

#include "pmindex/error.hpp"

namespace pmindex::bench::json {

std::string dump(const value& v, int indent) {
  std::string s = v.dump(indent > 0 ? indent : -1, ' ', false, nlohmann::json::error_handler_t::replace);
  s += '\n';
  return s;
}

value parse(const std::string& text) {
  try {
    return value::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // what(): "[json.exception.parse_error.101] parse error at line 1,
    // column 7: syntax error while parsing ..."; the part after the id.
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what.erase(0, p + 2);
    throw error(errc::usage, "malformed JSON at byte " + std::to_string(e.byte) + ": " + what);
  }
}

}  // namespace pmindex::bench::json
