#include "errors.hpp"

#include <string>

#include "pmindex/error.hpp"

namespace nb = nanobind;

namespace pmindex::py {

namespace {

// Indexed by the errc value; the last slot is IndexClosed.
struct error_class {
  errc code;
  const char* name;
  PyObject* std_base;  // a built-in base besides pmindex.Error (or null)
  const char* doc;
};

const error_class k_classes[] = {
    {errc::failure, "CheckFailed", nullptr, "check() found a violated invariant (exit code 1)."},
    {errc::usage, "UsageError", PyExc_ValueError,
     "Bad argument: unknown index, mode or parameter (exit code 2)."},
    {errc::missing_file, "PoolNotFound", PyExc_FileNotFoundError,
     "The pool file does not exist (exit code 3)."},
    {errc::not_a_pool, "NotAPool", nullptr, "The file is not a pmindex pool (exit code 4)."},
    {errc::bad_version, "BadVersion", nullptr, "The pool was made by another format version (exit code 5)."},
    {errc::wrong_index, "WrongIndex", nullptr, "The pool holds another index (exit code 6)."},
    {errc::too_small, "PoolTooSmall", nullptr, "Pool file too small or truncated (exit code 7)."},
    {errc::pool_full, "PoolFull", nullptr,
     "No space left in the pool; nothing stored was lost (exit code 8)."},
    {errc::key_too_long, "KeyTooLong", PyExc_ValueError, "Key longer than the index takes (exit code 9)."},
    {errc::io, "PoolIOError", PyExc_OSError,
     "open/mmap failed, the pool exists already, or another process holds it (exit code 10)."},
    {errc::corrupt, "CorruptPool", nullptr, "Recovery found an inconsistent pool (exit code 11)."},
    {errc::unsupported, "Unsupported", PyExc_ValueError,
     "Mode, key kind or size the index does not support (exit code 12)."},
    {errc::value_too_long, "ValueTooLong", PyExc_ValueError,
     "Value longer than the index takes (exit code 13)."},
    {errc::wrong_mode, "WrongMode", nullptr,
     "The pool was made in a mode this open cannot use: tx pools open only in tx mode (exit code 14)."},
};
constexpr size_t k_nclasses = sizeof k_classes / sizeof k_classes[0];

PyObject* g_base = nullptr;
PyObject* g_by_code[16] = {};  // errc value -> class
PyObject* g_closed = nullptr;

PyObject* make_class(nb::module_& m, const char* name, PyObject* base, PyObject* std_base, const char* doc,
                     int code) {
  std::string qual = std::string("pmindex.") + name;
  PyObject* bases = std_base ? PyTuple_Pack(2, base, std_base) : PyTuple_Pack(1, base);
  if (!bases) throw nb::python_error();
  PyObject* cls = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (!cls) throw nb::python_error();
  PyObject* c = PyLong_FromLong(code);
  PyObject_SetAttrString(cls, "code", c);
  Py_DECREF(c);
  m.attr(name) = nb::borrow(cls);  // the module keeps a reference; so do we (never freed)
  return cls;
}

}  // namespace

void define_errors(nb::module_& m) {
  g_base = make_class(m, "Error", PyExc_Exception, nullptr,
                      "Base of every pmindex error; `code` is the command line's exit code.", 1);
  for (size_t i = 0; i < k_nclasses; ++i) {
    const auto& c = k_classes[i];
    g_by_code[static_cast<int>(c.code)] =
        make_class(m, c.name, g_base, c.std_base, c.doc, static_cast<int>(c.code));
  }
  g_closed = make_class(m, "IndexClosed", g_base, PyExc_ValueError,
                        "A call on an index after close() (or after its `with` block).",
                        static_cast<int>(errc::usage));
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const error& e) {
      int code = e.exit_code();
      PyObject* cls = code > 0 && code < 16 && g_by_code[code] ? g_by_code[code] : g_base;
      PyErr_SetString(cls, e.what());
    }
  });
}

void raise_closed() {
  PyErr_SetString(g_closed, "the index is closed");
  throw nb::python_error();
}

void raise_check_failed(const std::string& message) {
  PyErr_SetString(g_by_code[static_cast<int>(errc::failure)], message.c_str());
  throw nb::python_error();
}

}  // namespace pmindex::py
