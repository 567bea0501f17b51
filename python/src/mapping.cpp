// The MutableMapping methods an index has no single call for: pop,
// setdefault, popitem and clear, with dict's results. Each is built from the
// point calls; beside other writers each is as atomic as the call that
// decides it (see docs/python.md): pop and popitem return the value a
// successful remove() took away only if no writer replaced it in between.
#include <cstdint>
#include <string>
#include <vector>

#include "args.hpp"
#include "pmindex/error.hpp"
#include "py_index.hpp"

namespace pmindex::py {

namespace {

[[noreturn]] void raise_key_error(nb::handle key) {
  PyErr_SetObject(PyExc_KeyError, key.ptr());
  throw nb::python_error();
}

}  // namespace

nb::object py_index::pop(nb::handle key, nb::handle def) {
  for (;;) {
    nb::object v = lookup(key);
    if (!v.is_valid()) {
      if (def.is_valid()) return nb::borrow(def);
      raise_key_error(key);
    }
    if (remove(key)) return v;
    // Removed by another thread between the two calls: absent now.
  }
}

nb::object py_index::setdefault(nb::handle key, nb::handle def) {
  for (;;) {
    nb::object v = lookup(key);
    if (v.is_valid()) return v;
    // As dict: the default is stored (so it must be a value: None is a
    // TypeError here, raised before anything is written) and returned as given.
    if (write(write_op::insert, key, def)) return nb::borrow(def);
    // Inserted by another thread between the two calls: read it again.
  }
}

nb::tuple py_index::popitem() {
  for (;;) {
    nb::object k, v;
    {
      call_guard g(*this, !concurrent_);
      if (!bytes_) {
        record r;
        size_t n;
        bool gone = false;
        {
          nb::gil_scoped_release rel;
          n = g->scan(uint64_t{0}, 1, &r);
          if (n == 1) gone = g->remove(r.key);
        }
        if (n == 0) break;
        if (!gone) continue;  // removed meanwhile by another thread
        k = key_object(r.key);
        v = value_object(r.value);
      } else {
        record_buffer b;
        bool gone = false;
        {
          nb::gil_scoped_release rel;
          if (g->scan(std::string_view(), 1, b) == 1) gone = g->remove(b.key(0));
        }
        if (b.empty()) break;
        if (!gone) continue;
        k = key_object(b.key(0));
        v = value_object(b.value(0));
      }
    }
    return nb::make_tuple(k, v);
  }
  PyErr_SetString(PyExc_KeyError, "popitem(): the index is empty");
  throw nb::python_error();
}

void py_index::clear() {
  // One pass in key order, in batches: every record present when clear()
  // starts and not written again meanwhile is removed; records other
  // threads add behind the cursor meanwhile stay.
  constexpr size_t k_batch = 1024;
  call_guard g(*this, !concurrent_);
  nb::gil_scoped_release rel;
  if (!bytes_) {
    std::vector<record> recs(k_batch);
    uint64_t from = 0;
    for (;;) {
      size_t n = g->scan(from, k_batch, recs.data());
      for (size_t i = 0; i < n; ++i) g->remove(recs[i].key);
      if (n < k_batch || recs[n - 1].key == UINT64_MAX) break;
      from = recs[n - 1].key + 1;
    }
    return;
  }
  record_buffer b;
  std::string from;
  for (;;) {
    b.clear();
    size_t n = g->scan(from, k_batch, b);
    for (size_t i = 0; i < n; ++i) g->remove(b.key(i));
    if (n < k_batch) break;
    from.assign(b.key(n - 1));
    from.push_back('\0');  // the smallest key after the last one
  }
}

}  // namespace pmindex::py
