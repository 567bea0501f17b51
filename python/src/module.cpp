// pmindex._core: the compiled part of the `pmindex` Python package (the
// Index class, open(), indexes() and the exceptions). The Python layer
// (python/pmindex/__init__.py) adds argument parsing and the docs users see
// first; docstrings here describe each call.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "args.hpp"
#include "errors.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "py_index.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace pmindex::py {
namespace {

// An open error as the user should read it: an open that lost a race with
// another thread of this process is not "in use by another process".
std::string user_message(std::string msg, const std::string& path) {
  if (msg.find("in use by another process") != std::string::npos && pool_open_here(path))
    msg = "pool " + path + " is already open in this process (close that Index first)";
  return msg;
}

py_index* open_index(const std::string& path, const std::string& name, const std::string& mode, uint64_t size,
                     const std::string& open, const std::string& params, const std::string& flush,
                     bool quiet) {
  options o;
  o.pool_path = path;
  o.pool_size = size;
  o.params = params;
  o.quiet = quiet;
  if (open == "create")
    o.open = pm::open_mode::create_if_missing;
  else if (open == "new")
    o.open = pm::open_mode::must_create;
  else if (open == "existing")
    o.open = pm::open_mode::must_exist;
  else
    throw error(errc::usage, "open must be 'create', 'new' or 'existing', not '" + open + "'");
  auto f = pm::parse_flush(flush);
  if (!f)
    throw error(errc::usage, "unknown flush instruction '" + flush + "' (auto, clwb, clflushopt, clflush)");
  o.flush = *f;

  // The pool's lock cannot tell a second open in this process from one in
  // another process; the binding knows its own opens (a dram index maps no file).
  if (mode != "dram" && pool_open_here(path))
    throw error(errc::io, "pool " + path + " is already open in this process (close that Index first)");

  std::unique_ptr<index> idx;
  std::shared_ptr<const index_entry> entry;
  try {
    nb::gil_scoped_release r;  // opening may recover a large pool
    o.index = name;
    if (o.index.empty()) {
      // An existing pool names its index in its header.
      pm::pool_options po;
      po.path = path;
      po.open = pm::open_mode::must_exist;
      po.inspect = true;
      po.quiet = true;
      auto p = pm::pool::open(po);
      o.index = p->index_name();
      p->abandon();  // leave the header as it was
    }
    entry = find_index(o.index);
    if (!entry) throw error(errc::usage, "unknown index '" + o.index + "' (see pmindex.indexes())");
    // No mode: an existing pool's own (stored in its header), else persist
    // (dram for an index without it); pmindex::open decides.
    if (!mode.empty()) {
      auto m = pm::parse_mode(mode);
      if (!m) throw error(errc::usage, "unknown mode '" + mode + "' (dram, volatile, persist, eadr, tx)");
      o.mode = *m;
    }
    idx = pmindex::open(o);
  } catch (const error& e) {
    throw error(e.code(), user_message(e.what(), path));
  }
  std::string used(pm::to_string(idx->report().mode));
  return new py_index(std::move(idx), std::move(entry), path, used);
}

nb::list list_indexes() {
  nb::list out;
  for (auto& e : registered_indexes()) {
    nb::dict d;
    d["name"] = e->name;
    d["family"] = e->family;
    d["description"] = e->description;
    d["paper"] = e->paper;
    d["concurrent"] = e->concurrent;
    d["ordered"] = e->ordered;
    nb::list modes, kinds, params;
    for (auto m : e->modes) modes.append(std::string(pm::to_string(m)));
    for (auto k : e->key_kinds) kinds.append(std::string(to_string(k)));
    for (auto& p : e->params) {
      nb::dict pd;
      pd["name"] = p.name;
      pd["help"] = p.help;
      pd["default"] = p.def;
      nb::list choices;
      for (auto& c : p.choices) choices.append(c);
      pd["choices"] = choices;
      if (p.choices.empty()) {
        pd["min"] = p.min;
        pd["max"] = p.max;
      }
      params.append(pd);
    }
    d["modes"] = modes;
    d["key_kinds"] = kinds;
    d["max_key"] = e->max_key;
    d["max_value"] = e->max_value;
    d["key_limit"] = key_limit(*e, "");  // keys below it with the default params (0: any)
    d["scan_guarantee"] = e->scan_guarantee;
    d["params"] = params;
    out.append(d);
  }
  return out;
}

using what = py_iter::what;

// update(): dict.update, and the old update(key, value) (now
// update_existing) with a DeprecationWarning. Two positional arguments, or
// exactly the keywords key= and value=, are the old form: dict.update takes
// at most one positional argument, so neither call meant anything else.
nb::object update_dispatch(py_index& s, nb::args a, nb::kwargs kw) {
  bool old = (a.size() == 2 && kw.size() == 0) ||
             (a.size() == 0 && kw.size() == 2 && kw.contains("key") && kw.contains("value"));
  if (old) {
    if (PyErr_WarnEx(PyExc_DeprecationWarning,
                     "Index.update(key, value) is deprecated: use update_existing(key, value) (update() "
                     "now takes a mapping, as dict.update does)",
                     1) < 0)
      throw nb::python_error();
    nb::handle k = a.size() ? PyTuple_GET_ITEM(a.ptr(), 0) : PyDict_GetItemString(kw.ptr(), "key");
    nb::handle v = a.size() ? PyTuple_GET_ITEM(a.ptr(), 1) : PyDict_GetItemString(kw.ptr(), "value");
    return nb::bool_(s.write(py_index::write_op::update, k, v));
  }
  if (a.size() > 1) {
    PyErr_Format(PyExc_TypeError, "update expected at most 1 positional argument (a mapping or pairs), got %zu",
                 a.size());
    throw nb::python_error();
  }
  if (a.size() == 1) s.put_many(PyTuple_GET_ITEM(a.ptr(), 0));
  if (kw.size()) s.put_many(kw);
  return nb::none();
}

nb::tuple scan_arrays(nb::object self, nb::handle start, size_t count) {
  py_index& ix = *nb::inst_ptr<py_index>(self);
  if (ix.bytes_keys()) throw error(errc::unsupported, "scan_arrays needs a keys=u64 index (use scan_list)");
  using array = nb::ndarray<nb::numpy, uint64_t, nb::ndim<1>>;
  auto keys = std::make_unique<std::vector<uint64_t>>(), values = std::make_unique<std::vector<uint64_t>>();
  std::unique_ptr<py_iter> it(py_iter::scan(self, start, count, what::items));
  it->rest_u64(*keys, *values);
  auto to_array = [](std::unique_ptr<std::vector<uint64_t>> v) {
    size_t n = v->size();
    uint64_t* data = v->data();
    nb::capsule owner(v.get(), [](void* p) noexcept { delete static_cast<std::vector<uint64_t>*>(p); });
    v.release();
    return array(data, {n}, owner);
  };
  return nb::make_tuple(to_array(std::move(keys)), to_array(std::move(values)));
}

}  // namespace
}  // namespace pmindex::py

NB_MODULE(_core, m) {
  using namespace pmindex::py;
  m.doc() = "The compiled core of the pmindex package (use `pmindex`, not this module).";
  define_errors(m);

  nb::class_<py_iter>(m, "Iterator", "An iterator over records in key order (see Index.scan).")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &py_iter::next);

  // Every key, value and count is taken as a plain handle that accepts None
  // (`.none()`), so a wrong type reaches args.cpp and gets its one-line
  // TypeError there instead of nanobind's dump of the signatures.
  nb::class_<py_index>(m, "Index",
                       "An open pmindex index (from pmindex.open). A mapping of int or bytes keys to "
                       "int or bytes values, in key order; a context manager that closes it cleanly.")
      .def(
          "insert",
          [](py_index& s, nb::handle k, nb::handle v) { return s.write(py_index::write_op::insert, k, v); },
          "key"_a.none(), "value"_a.none(), "Adds the record; False (and no change) if the key is present.")
      .def(
          "update_existing",
          [](py_index& s, nb::handle k, nb::handle v) { return s.write(py_index::write_op::update, k, v); },
          "key"_a.none(), "value"_a.none(), "Replaces the value of a present key; False (and no change) if "
          "the key is absent.")
      .def("update", &update_dispatch,
           "update([items], **kw): dict.update: upserts every (key, value) of a mapping or an iterable of "
           "pairs, then of the keywords (str keys: keys=bytes indexes). The old form update(key, value) "
           "is update_existing(key, value) and warns (DeprecationWarning).")
      .def(
          "upsert",
          [](py_index& s, nb::handle k, nb::handle v) { return s.write(py_index::write_op::upsert, k, v); },
          "key"_a.none(), "value"_a.none(), "Inserts or replaces; True if the key was new.")
      .def("remove", &py_index::remove, "key"_a.none(), "Removes the record; False if the key is absent.")
      .def(
          "get",
          [](py_index& s, nb::handle k, nb::object def) {
            nb::object v = s.lookup(k);
            return v.is_valid() ? v : def;
          },
          "key"_a.none(), "default"_a.none() = nb::none(), "The value of `key`, or `default` when absent.")
      .def(
          "get_many", &py_index::get_many, "keys"_a.none(), "default"_a.none() = nb::none(),
          "The value of each key (a list, in the order of `keys`), `default` for an absent one: one call "
          "with the GIL released.")
      .def(
          "put_many", &py_index::put_many, "items"_a.none(),
          "Upserts every (key, value) of a mapping or an iterable of pairs, in order (a later duplicate "
          "wins): one call with the GIL released. Returns how many keys were new. Nothing is written "
          "when an item has a wrong type; a failing write "
          "(PoolFull) leaves the items before it.")
      .def(
          "pop",
          [](py_index& s, nb::args a) {
            if (a.size() < 1 || a.size() > 2) {
              PyErr_Format(PyExc_TypeError, "pop expected 1 or 2 arguments, got %zu", a.size());
              throw nb::python_error();
            }
            return s.pop(PyTuple_GET_ITEM(a.ptr(), 0), a.size() == 2 ? PyTuple_GET_ITEM(a.ptr(), 1) : nullptr);
          },
          "pop(key[, default]): removes the key and returns its value; `default` (or KeyError) when absent.")
      .def("setdefault", &py_index::setdefault, "key"_a.none(), "default"_a.none() = nb::none(),
           "The value of `key`; when absent, stores `default` and returns it (None cannot be stored: "
           "TypeError).")
      .def("popitem", &py_index::popitem,
           "Removes and returns the (key, value) pair of the smallest key; KeyError when empty.")
      .def("clear", &py_index::clear, "Removes every record (in key order, in batches, GIL released).")
      .def("__getitem__",
           [](py_index& s, nb::handle k) {
             nb::object v = s.lookup(k);
             if (!v.is_valid()) {
               PyErr_SetObject(PyExc_KeyError, k.ptr());
               throw nb::python_error();
             }
             return v;
           }, nb::arg().none())
      .def("__setitem__",
           [](py_index& s, nb::handle k, nb::handle v) { s.write(py_index::write_op::upsert, k, v); },
           nb::arg().none(), nb::arg().none())
      .def("__delitem__",
           [](py_index& s, nb::handle k) {
             if (!s.remove(k)) {
               PyErr_SetObject(PyExc_KeyError, k.ptr());
               throw nb::python_error();
             }
           }, nb::arg().none())
      .def("__contains__", [](py_index& s, nb::handle k) { return s.lookup(k).is_valid(); }, nb::arg().none())
      .def("__len__", &py_index::size)
      .def(
          "__iter__", [](nb::object self) { return py_iter::scan(self, nb::none(), SIZE_MAX, what::keys); },
          nb::rv_policy::take_ownership)
      .def(
          "scan",
          [](nb::object self, nb::handle start, nb::handle count) {
            return py_iter::scan(self, start, to_count(count, "count"), what::items);
          },
          "start"_a.none(), "count"_a.none(), nb::rv_policy::take_ownership,
          "Up to `count` (key, value) pairs with key >= start (None: the first key), in key order. Up to "
          "65536 records are read by one call of the index (its scan guarantee holds for them), longer "
          "scans in batches.")
      .def(
          "scan_list",
          [](nb::object self, nb::handle start, nb::handle count) {
            std::unique_ptr<py_iter> it(py_iter::scan(self, start, to_count(count, "count"), what::items));
            return it->rest();
          },
          "start"_a.none(), "count"_a.none(),
          "scan(start, count) as a list, built in one call (the GIL released while the index reads).")
      .def(
          "scan_arrays",
          [](nb::object self, nb::handle start, nb::handle count) {
            return scan_arrays(self, start, to_count(count, "count"));
          },
          "start"_a.none(), "count"_a.none(),
          "scan(start, count) of a keys=u64 index as two numpy uint64 arrays (keys, values); needs numpy.")
      .def(
          "range",
          [](nb::object self, nb::handle lo, nb::handle hi) { return py_iter::range(self, lo, hi); },
          "lo"_a.none(), "hi"_a.none(), nb::rv_policy::take_ownership,
          "Every (key, value) pair with lo <= key <= hi, in key order, read by one range() call of the "
          "index (so with its range guarantee; the whole range is held in memory).")
      .def(
          "range_list",
          [](nb::object self, nb::handle lo, nb::handle hi) {
            std::unique_ptr<py_iter> it(py_iter::range(self, lo, hi));
            return it->rest();
          },
          "lo"_a.none(), "hi"_a.none(), "range(lo, hi) as a list, built in one call.")
      .def(
          "items",
          [](nb::object self, nb::handle start) { return py_iter::scan(self, start, SIZE_MAX, what::items); },
          "start"_a.none() = nb::none(), nb::rv_policy::take_ownership,
          "Every (key, value) pair from `start` (None: the first key) on, read in batches.")
      .def(
          "keys",
          [](nb::object self, nb::handle start) { return py_iter::scan(self, start, SIZE_MAX, what::keys); },
          "start"_a.none() = nb::none(), nb::rv_policy::take_ownership, "Every key from `start` on, in order.")
      .def(
          "values",
          [](nb::object self, nb::handle start) {
            return py_iter::scan(self, start, SIZE_MAX, what::values);
          },
          "start"_a.none() = nb::none(), nb::rv_policy::take_ownership,
          "Every value from `start` on, in key order.")
      .def("stats", &py_index::stats,
           "records, pm_bytes_used, pm_bytes_reserved, dram_bytes and the index's own figures ('extra').")
      .def("check", &py_index::check, "Checks the structural invariants: True, or raises CheckFailed.")
      .def_prop_ro("report", &py_index::report,
                   "How the open went: created, was_clean, open_seconds, recover_seconds, traced_blocks.")
      .def("close", &py_index::close, "Clean shutdown (idempotent); later calls raise IndexClosed.")
      .def("abandon", &py_index::abandon,
           "Drops the index without a clean shutdown, as a crash would (for tests: the next open recovers).")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def(
          "__exit__", [](py_index& s, nb::handle, nb::handle, nb::handle) { s.close(); }, nb::arg().none(),
          nb::arg().none(), nb::arg().none())
      .def("__repr__", &py_index::repr)
      .def_prop_ro(
          "name", [](py_index& s) { return s.entry().name; }, "The index (pmindex.indexes()).")
      .def_prop_ro(
          "key_kind", [](py_index& s) { return s.bytes_keys() ? "bytes" : "u64"; },
          "'u64' (int keys and values) or 'bytes'.")
      .def_prop_ro(
          "max_key", [](py_index& s) { return s.bytes_keys() ? s.entry().max_key : size_t{8}; },
          "Longest key in bytes.")
      .def_prop_ro(
          "max_value", [](py_index& s) { return s.bytes_keys() ? s.entry().max_value : size_t{8}; },
          "Longest value in bytes.")
      .def_prop_ro(
          "concurrent", [](py_index& s) { return s.entry().concurrent; },
          "True if several threads may call it at once (others are serialised).")
      .def_prop_ro(
          "scan_guarantee", [](py_index& s) { return s.entry().scan_guarantee; },
          "What a scan running beside writers returns.")
      .def_prop_ro("mode", &py_index::mode, "The persistence mode of this open.")
      .def_prop_ro("path", &py_index::path, "The pool file.")
      .def_prop_ro("closed", &py_index::closed, "True after close().");

  m.def("_open", &open_index, "path"_a, "index"_a, "mode"_a, "size"_a, "open"_a, "params"_a, "flush"_a,
        "quiet"_a, nb::rv_policy::take_ownership, "Use pmindex.open().");
  m.def("indexes", &list_indexes,
        "The registered indexes: name, family, modes, key kinds, limits, parameters.");
}
