// Arguments of the binding: keys, values and counts from Python objects,
// with one-line errors that name the expected type (nanobind's own
// conversion errors print every overload's signature, so the binding takes
// plain handles and converts them here).
//
// Accepted:
//   keys=u64 index  key: int (0 .. 2^64-1, or any object with __index__,
//                   e.g. numpy.uint64) or 8-byte bytes; value: the same.
//   keys=bytes      key and value: bytes, str (its UTF-8 bytes, as the
//                   standard dbm module does) or int (a key's 8 big-endian
//                   bytes, a value's 8 host-order bytes).
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string_view>

#include "pmindex/index.hpp"

namespace pmindex::py {

namespace nb = nanobind;

// A key or value argument: an int, or a view of a bytes or str object. The
// caller holds the object for the whole call, so the view outlives a GIL
// release (bytes are immutable; a str keeps its UTF-8 form while it lives).
struct arg {
  bool is_int = false;
  uint64_t u = 0;
  std::string_view s;
  u64_bytes buf;  // an int's bytes, when a byte call needs them
  std::string_view key_view() {
    if (!is_int) return s;
    buf = key_bytes(u);
    return buf;
  }
  std::string_view value_view() {
    if (!is_int) return s;
    buf = value_bytes(u);
    return buf;
  }
};

enum class arg_kind : uint8_t { key, value };

// Raises TypeError (wrong type) or OverflowError (an int outside 0..2^64-1).
arg to_arg(nb::handle h, arg_kind what, bool bytes_index);

// A count: an int >= 0 (TypeError otherwise, ValueError if negative); None
// is `none_means` (e.g. SIZE_MAX: no limit) when allowed.
size_t to_count(nb::handle h, const char* name, bool none_allowed = false, size_t none_means = SIZE_MAX);

// Raises TypeError "<what> must be <expected>, not <type of h>".
[[noreturn]] void raise_type(const char* what, const char* expected, nb::handle h);

nb::object bytes_object(std::string_view s);

}  // namespace pmindex::py
