// The batch calls of py_index: get_many and put_many. A loop of db[k] in
// Python pays the interpreter, a key object and a binding call per record;
// a batch converts every argument up front (holding the objects, so the
// views stay valid), then makes every index call in one C++ loop with the
// GIL released, so other Python threads run meanwhile.
#include <cstdint>
#include <string>
#include <vector>

#include "args.hpp"
#include "pmindex/error.hpp"
#include "py_index.hpp"

namespace pmindex::py {

namespace {

// The items of put_many, converted; `hold` keeps their objects alive.
struct items_batch {
  std::vector<nb::object> hold;
  std::vector<arg> keys, values;
  void add(nb::handle k, nb::handle v, bool bytes) {
    keys.push_back(to_arg(k, arg_kind::key, bytes));
    values.push_back(to_arg(v, arg_kind::value, bytes));
    hold.push_back(nb::borrow(k));
    hold.push_back(nb::borrow(v));
  }
};

// A mapping (a dict, or anything with keys() and []) or an iterable of
// (key, value) pairs, as dict.update takes them.
void collect_items(nb::handle items, bool bytes, items_batch& b) {
  PyObject* o = items.ptr();
  if (PyDict_Check(o)) {
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    b.keys.reserve(PyDict_Size(o));
    b.values.reserve(PyDict_Size(o));
    while (PyDict_Next(o, &pos, &k, &v)) b.add(k, v, bytes);
    return;
  }
  if (PyObject_HasAttrString(o, "keys")) {
    nb::object keys = items.attr("keys")();
    for (nb::handle k : keys) {
      nb::object v = nb::steal(PyObject_GetItem(o, k.ptr()));
      if (!v.is_valid()) throw nb::python_error();
      b.add(k, v, bytes);
    }
    return;
  }
  nb::object it = nb::steal(PyObject_GetIter(o));
  if (!it.is_valid()) {
    PyErr_Clear();
    raise_type("items", "a mapping or an iterable of (key, value) pairs", items);
  }
  size_t n = 0;
  while (nb::object e = nb::steal(PyIter_Next(it.ptr()))) {
    nb::object pair = nb::steal(PySequence_Fast(e.ptr(), ""));
    if (!pair.is_valid() || PySequence_Fast_GET_SIZE(pair.ptr()) != 2) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "item #%zu must be a (key, value) pair, not %.100s", n,
                   Py_TYPE(e.ptr())->tp_name);
      throw nb::python_error();
    }
    b.add(PySequence_Fast_GET_ITEM(pair.ptr(), 0), PySequence_Fast_GET_ITEM(pair.ptr(), 1), bytes);
    ++n;
  }
  if (PyErr_Occurred()) throw nb::python_error();
}

}  // namespace

nb::list py_index::get_many(nb::handle keys, nb::handle def) {
  nb::object seq = nb::steal(PySequence_Fast(keys.ptr(), ""));
  if (!seq.is_valid()) {
    PyErr_Clear();
    raise_type("keys", "an iterable of keys", keys);
  }
  size_t n = static_cast<size_t>(PySequence_Fast_GET_SIZE(seq.ptr()));
  PyObject** objs = PySequence_Fast_ITEMS(seq.ptr());
  std::vector<arg> args(n);
  for (size_t i = 0; i < n; ++i) args[i] = to_arg(objs[i], arg_kind::key, bytes_);

  // Per key: absent, a u64 value in u[i], or bytes at vals[i].
  enum : uint8_t { absent, as_u64, as_bytes };
  std::vector<uint8_t> state(n, absent);
  std::vector<uint64_t> u(n);
  record_buffer vals;  // (empty key, value) per byte lookup that found one
  {
    call_guard g(*this, !concurrent_);
    nb::gil_scoped_release r;
    std::string v;
    for (size_t i = 0; i < n; ++i) {
      arg& a = args[i];
      if (!bytes_ && a.is_int) {
        if (auto x = g->lookup(a.u)) {
          u[i] = *x;
          state[i] = as_u64;
        }
      } else if (g->lookup(a.key_view(), &v)) {
        if (bytes_) {
          u[i] = vals.size();
          vals.push_back({}, v);
          state[i] = as_bytes;
        } else {
          u[i] = value_u64(v);  // a keys=u64 index: 8-byte values
          state[i] = as_u64;
        }
      }
    }
  }
  nb::list out = nb::steal<nb::list>(PyList_New(static_cast<Py_ssize_t>(n)));
  for (size_t i = 0; i < n; ++i) {
    nb::object o = state[i] == as_u64     ? value_object(u[i])
                   : state[i] == as_bytes ? value_object(vals.value(u[i]))
                                          : nb::borrow(def);
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), o.release().ptr());
  }
  return out;
}

size_t py_index::put_many(nb::handle items) {
  items_batch b;
  collect_items(items, bytes_, b);
  size_t added = 0;
  call_guard g(*this, !concurrent_);
  nb::gil_scoped_release r;
  for (size_t i = 0; i < b.keys.size(); ++i) {
    arg &k = b.keys[i], &v = b.values[i];
    if (!bytes_ && k.is_int && v.is_int)
      added += g->upsert(k.u, v.u);
    else
      added += g->upsert(k.key_view(), v.value_view());
  }
  return added;
}

}  // namespace pmindex::py
