#include "args.hpp"

#include <cstdint>

namespace pmindex::py {

void raise_type(const char* what, const char* expected, nb::handle h) {
  PyErr_Format(PyExc_TypeError, "%s must be %s, not %.100s", what, expected, Py_TYPE(h.ptr())->tp_name);
  throw nb::python_error();
}

namespace {

// An int (or an object with __index__) as 0 .. 2^64-1.
uint64_t to_u64(PyObject* o, const char* what) {
  nb::object owned;
  if (!PyLong_Check(o)) {
    owned = nb::steal(PyNumber_Index(o));
    if (!owned.is_valid()) throw nb::python_error();
    o = owned.ptr();
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_OverflowError, "%s must be in 0..2**64-1, not %R", what, o);
    throw nb::python_error();
  }
  return v;
}

}  // namespace

arg to_arg(nb::handle h, arg_kind kind, bool bytes_index) {
  PyObject* o = h.ptr();
  const char* what = kind == arg_kind::key ? "key" : "value";
  arg a;
  if (PyBytes_Check(o)) {
    a.s = {PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o))};
  } else if (PyLong_Check(o) || (PyIndex_Check(o) && !PyFloat_Check(o))) {
    a.is_int = true;
    a.u = to_u64(o, what);
  } else if (bytes_index && PyUnicode_Check(o)) {
    Py_ssize_t n;
    const char* p = PyUnicode_AsUTF8AndSize(o, &n);
    if (!p) throw nb::python_error();  // e.g. a lone surrogate
    a.s = {p, static_cast<size_t>(n)};
  } else if (bytes_index) {
    raise_type(what, "bytes (or str, or int)", h);
  } else {
    raise_type(what, "int (or 8 bytes)", h);
  }
  return a;
}

size_t to_count(nb::handle h, const char* name, bool none_allowed, size_t none_means) {
  PyObject* o = h.ptr();
  if (none_allowed && o == Py_None) return none_means;
  if (PyBool_Check(o) || !(PyLong_Check(o) || PyIndex_Check(o)) || PyFloat_Check(o))
    raise_type(name, none_allowed ? "an int or None" : "an int", h);
  nb::object i = nb::steal(PyNumber_Index(o));
  if (!i.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow < 0 || (overflow == 0 && v < 0)) {
    PyErr_Format(PyExc_ValueError, "%s must be >= 0, not %R", name, i.ptr());
    throw nb::python_error();
  }
  if (overflow > 0) return SIZE_MAX;  // more than any index holds
  return static_cast<size_t>(v);
}

nb::object bytes_object(std::string_view s) {
  return nb::steal(PyBytes_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size())));
}

}  // namespace pmindex::py
