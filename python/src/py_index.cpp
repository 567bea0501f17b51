#include "py_index.hpp"

#include <nanobind/stl/string.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>
#include <utility>

#include "args.hpp"
#include "errors.hpp"
#include "pmindex/error.hpp"

namespace pmindex::py {

namespace {

// Pools open in this process (see pool_open_here), by file identity.
std::mutex g_open_mu;
std::set<std::pair<uint64_t, uint64_t>> g_open_files;

}  // namespace

// ------------------------------------------------------------------ call_guard

call_guard::call_guard(py_index& p, bool exclusive) : p_(p), exclusive_(exclusive) {
  bool got = exclusive ? p.mu_.try_lock() : p.mu_.try_lock_shared();
  if (!got) {
    nb::gil_scoped_release r;  // never wait for the lock holding the GIL
    if (exclusive)
      p.mu_.lock();
    else
      p.mu_.lock_shared();
  }
  if (!p.idx_) {
    if (exclusive)
      p.mu_.unlock();
    else
      p.mu_.unlock_shared();
    raise_closed();
  }
}

call_guard::~call_guard() {
  if (exclusive_)
    p_.mu_.unlock();
  else
    p_.mu_.unlock_shared();
}

// ------------------------------------------------------------------ py_index

py_index::py_index(std::unique_ptr<index> idx, std::shared_ptr<const index_entry> entry, std::string path,
                   std::string mode)
    : idx_(std::move(idx)),
      entry_(std::move(entry)),
      concurrent_(entry_->concurrent),
      bytes_(idx_->keys() == key_kind::bytes),
      path_(std::move(path)),
      mode_(std::move(mode)),
      report_(idx_->report()) {
  // A dram index holds no file; anything else maps the pool at path_.
  struct stat st;
  if (report_.mode != pm::mode::dram && ::stat(path_.c_str(), &st) == 0) {
    has_file_ = true;
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    std::lock_guard l(g_open_mu);
    g_open_files.insert({dev_, ino_});
  }
}

void py_index::forget_file() {
  if (!has_file_) return;
  has_file_ = false;
  std::lock_guard l(g_open_mu);
  g_open_files.erase({dev_, ino_});
}

bool pool_open_here(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  std::lock_guard l(g_open_mu);
  return g_open_files.count({static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}) > 0;
}

py_index::~py_index() {
  // Nothing can be in flight: calls and iterators hold a reference.
  if (idx_) {
    try {
      idx_->close();
    } catch (...) {
    }
    idx_.reset();
  }
  forget_file();
}

bool py_index::write(write_op op, nb::handle key, nb::handle value) {
  arg k = to_arg(key, arg_kind::key, bytes_), v = to_arg(value, arg_kind::value, bytes_);
  call_guard g(*this, !concurrent_);
  if (!bytes_ && k.is_int && v.is_int) {  // the fast path
    switch (op) {
      case write_op::insert:
        return g->insert(k.u, v.u);
      case write_op::update:
        return g->update(k.u, v.u);
      case write_op::upsert:
        return g->upsert(k.u, v.u);
    }
  }
  std::string_view ks = k.key_view();
  u64_bytes vb;  // v.buf may not hold both
  std::string_view vs = v.is_int ? (vb = value_bytes(v.u), std::string_view(vb)) : v.s;
  auto run = [&] {
    switch (op) {
      case write_op::insert:
        return g->insert(ks, vs);
      case write_op::update:
        return g->update(ks, vs);
      case write_op::upsert:
        return g->upsert(ks, vs);
    }
    return false;
  };
  if (ks.size() + vs.size() > k_long_bytes) {
    nb::gil_scoped_release r;
    return run();
  }
  return run();
}

bool py_index::remove(nb::handle key) {
  arg k = to_arg(key, arg_kind::key, bytes_);
  call_guard g(*this, !concurrent_);
  if (!bytes_ && k.is_int) return g->remove(k.u);
  return g->remove(k.key_view());
}

nb::object py_index::lookup(nb::handle key) {
  arg k = to_arg(key, arg_kind::key, bytes_);
  if (!bytes_ && k.is_int) {
    std::optional<uint64_t> v;
    {
      call_guard g(*this, !concurrent_);
      v = g->lookup(k.u);
    }
    return v ? value_object(*v) : nb::object();
  }
  static thread_local std::string v;
  bool found;
  {
    call_guard g(*this, !concurrent_);
    found = g->lookup(k.key_view(), &v);
  }
  if (!found) return nb::object();
  return bytes_ ? value_object(std::string_view(v)) : value_object(value_u64(v));
}

nb::object py_index::key_object(uint64_t k) const { return nb::steal(PyLong_FromUnsignedLongLong(k)); }
nb::object py_index::key_object(std::string_view k) const { return bytes_object(k); }
nb::object py_index::value_object(uint64_t v) const { return nb::steal(PyLong_FromUnsignedLongLong(v)); }
nb::object py_index::value_object(std::string_view v) const { return bytes_object(v); }

nb::dict py_index::stats() {
  index_stats s;
  {
    call_guard g(*this, !concurrent_);
    nb::gil_scoped_release r;
    s = g->stats();
  }
  nb::dict d, extra;
  d["records"] = s.records;
  d["pm_bytes_used"] = s.pm_bytes_used;
  d["pm_bytes_reserved"] = s.pm_bytes_reserved;
  d["dram_bytes"] = s.dram_bytes;
  d["alloc_dram_bytes"] = s.alloc_dram_bytes;
  for (auto& [name, value] : s.extra) extra[name.c_str()] = value;
  d["extra"] = extra;
  return d;
}

uint64_t py_index::size() {
  call_guard g(*this, !concurrent_);
  nb::gil_scoped_release r;
  return g->stats().records;
}

bool py_index::check() {
  check_result c;
  {
    call_guard g(*this, !concurrent_);
    nb::gil_scoped_release r;
    c = g->check();
  }
  if (!c.ok) raise_check_failed(name_prefix() + c.message);
  return true;
}

nb::dict py_index::report() {
  nb::dict d;
  d["created"] = report_.created;
  d["was_clean"] = report_.was_clean;
  d["open_seconds"] = report_.open_seconds;
  d["recover_seconds"] = report_.recover_seconds;
  d["traced_blocks"] = report_.traced_blocks;
  d["mode"] = std::string(pm::to_string(report_.mode));
  d["pool_mode"] = std::string(pm::to_string(report_.pool_mode));
  d["note"] = report_.note;
  return d;
}

void py_index::shut_down(bool clean) {
  nb::gil_scoped_release r;
  std::unique_lock lock(mu_);  // waits for the calls in flight
  if (!idx_) return;
  // The file is free once idx is gone (its destructor unmaps and unlocks
  // it), so it leaves the list after idx, even when close() throws.
  struct forget {
    py_index* p;
    ~forget() { p->forget_file(); }
  } f{this};
  std::unique_ptr<index> idx = std::move(idx_);
  closed_.store(true, std::memory_order_release);
  if (clean)
    idx->close();  // then the destructor of idx frees it
  else
    idx->abandon();
}

std::string py_index::name_prefix() const { return entry_->name + ": "; }

std::string py_index::repr() const {
  return "<pmindex.Index " + entry_->name + " keys=" + (bytes_ ? "bytes" : "u64") + " mode=" + mode_ +
         " path=" + path_ + (closed() ? " closed" : "") + ">";
}

// ------------------------------------------------------------------ py_iter

py_iter::py_iter(nb::object owner, what w)
    : owner_(std::move(owner)), ix_(nb::inst_ptr<py_index>(owner_)), what_(w), u64_(!ix_->bytes_keys()) {
  if (ix_->closed()) raise_closed();
}

py_iter* py_iter::scan(nb::object owner, nb::handle start, size_t count, what w) {
  std::unique_ptr<py_iter> it(new py_iter(std::move(owner), w));
  it->remaining_ = count;
  it->more_ = count > 0;
  if (start.is_none()) return it.release();  // from the first key: next_u_ = 0, next_s_ = ""
  arg a = to_arg(start, arg_kind::key, it->ix_->bytes_keys());
  if (it->u64_ && !a.is_int) {
    // A byte start on a keys=u64 index: the first 8-byte key at or after
    // it, found by a byte scan of one record; the rest goes the u64 way.
    record_buffer one;
    size_t n;
    {
      call_guard g(*it->ix_, !it->ix_->concurrent_);
      nb::gil_scoped_release r;
      n = g->scan(a.s, 1, one);
    }
    if (n == 0)
      it->more_ = false;
    else
      it->next_u_ = key_u64(one.key(0));
  } else if (it->u64_) {
    it->next_u_ = a.u;
  } else {
    it->next_s_.assign(a.key_view());
  }
  return it.release();
}

py_iter* py_iter::range(nb::object owner, nb::handle lo, nb::handle hi) {
  std::unique_ptr<py_iter> it(new py_iter(std::move(owner), what::items));
  bool b = it->ix_->bytes_keys();
  arg l = to_arg(lo, arg_kind::key, b), h = to_arg(hi, arg_kind::key, b);
  py_index& ix = *it->ix_;
  call_guard g(ix, !ix.concurrent_);
  if (it->u64_ && l.is_int && h.is_int) {
    nb::gil_scoped_release r;
    if (l.u <= h.u) g->range(l.u, h.u, it->u_);
  } else {
    std::string_view ls = l.key_view();
    u64_bytes hb;
    std::string_view hs = h.is_int ? (hb = key_bytes(h.u), std::string_view(hb)) : h.s;
    nb::gil_scoped_release r;
    g->range(ls, hs, it->b_);
    if (it->u64_) {  // a keys=u64 index hands out ints
      for (size_t i = 0; i < it->b_.size(); ++i)
        it->u_.push_back({key_u64(it->b_.key(i)), value_u64(it->b_.value(i))});
      it->b_.clear();
    }
  }
  it->len_ = it->u64_ ? it->u_.size() : it->b_.size();
  return it.release();
}

bool py_iter::fetch() {
  pos_ = len_ = 0;
  if (!more_) return false;
  // A counted scan up to k_scan_call_max is one call; beyond, and for the
  // unbounded iterators, batches that grow to 8192 records.
  size_t want = remaining_ <= k_scan_call_max ? remaining_ : std::min(remaining_, batch_);
  batch_ = std::min<size_t>(batch_ * 2, 8192);
  call_guard g(*ix_, !ix_->concurrent_);
  nb::gil_scoped_release r;
  if (u64_) {
    u_.resize(want);
    len_ = g->scan(next_u_, want, u_.data());
    if (len_ < want || u_[len_ - 1].key == UINT64_MAX)
      more_ = false;
    else
      next_u_ = u_[len_ - 1].key + 1;
  } else {
    b_.clear();
    len_ = g->scan(next_s_, want, b_);
    if (len_ < want) {
      more_ = false;
    } else {
      next_s_.assign(b_.key(len_ - 1));
      next_s_.push_back('\0');  // the smallest key after the last one
    }
  }
  remaining_ -= len_;
  if (remaining_ == 0) more_ = false;
  return len_ > 0;
}

nb::object py_iter::next() {
  if (pos_ == len_ && !fetch()) throw nb::stop_iteration();
  return item(pos_++);
}

nb::list py_iter::rest() {
  nb::list out;
  while (pos_ < len_ || fetch()) {
    for (; pos_ < len_; ++pos_) out.append(item(pos_));
  }
  return out;
}

void py_iter::rest_u64(std::vector<uint64_t>& keys, std::vector<uint64_t>& values) {
  while (pos_ < len_ || fetch()) {
    for (; pos_ < len_; ++pos_) {
      keys.push_back(u_[pos_].key);
      values.push_back(u_[pos_].value);
    }
  }
}

nb::object py_iter::item(size_t i) const {
  if (u64_) {
    const record& r = u_[i];
    if (what_ == what::keys) return ix_->key_object(r.key);
    if (what_ == what::values) return ix_->value_object(r.value);
    return nb::steal(PyTuple_Pack(2, ix_->key_object(r.key).ptr(), ix_->value_object(r.value).ptr()));
  }
  if (what_ == what::keys) return ix_->key_object(b_.key(i));
  if (what_ == what::values) return ix_->value_object(b_.value(i));
  return nb::steal(PyTuple_Pack(2, ix_->key_object(b_.key(i)).ptr(), ix_->value_object(b_.value(i)).ptr()));
}

}  // namespace pmindex::py
