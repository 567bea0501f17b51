#include "pmindex/index.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "pmindex/error.hpp"

namespace pmindex {

[[noreturn]] void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "pmindex: assertion failed: %s (%s:%d)\n", expr, file, line);
  std::abort();
}

std::string_view to_string(key_kind k) noexcept { return k == key_kind::u64 ? "u64" : "bytes"; }

// ------------------------------------------------------------------ limits

void index::check_key(std::string_view key) const {
  if (key.size() > max_key_)
    throw error(errc::key_too_long, name_ + ": key of " + std::to_string(key.size()) + " bytes (longest: " +
                                        std::to_string(max_key_) + ")");
  if (keys_ == key_kind::u64 && key.size() != 8)
    throw error(errc::unsupported, name_ + " was created with keys=u64: keys are 8 bytes, got " +
                                       std::to_string(key.size()) + " (create it with keys=bytes)");
}

void index::check_value(std::string_view value) const {
  if (value.size() > max_value_)
    throw error(errc::value_too_long, name_ + ": value of " + std::to_string(value.size()) +
                                          " bytes (longest: " + std::to_string(max_value_) + ")");
  if (keys_ == key_kind::u64 && value.size() != 8)
    throw error(errc::unsupported, name_ + " was created with keys=u64: values are 8 bytes, got " +
                                       std::to_string(value.size()) + " (create it with keys=bytes)");
}

// ------------------------------------------------------------------ defaults

bool index::upsert(uint64_t key, uint64_t value) {
  if (insert(key, value)) return true;
  update(key, value);
  return false;
}

bool index::upsert(std::string_view key, std::string_view value) {
  if (insert(key, value)) return true;
  update(key, value);
  return false;
}

size_t index::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  // Generic: repeated bounded scans. Indexes with a native range override it
  // (and must, when their scans promise more than each record's presence).
  size_t n0 = out.size();
  record buf[256];
  uint64_t from = lo;
  while (from <= hi) {
    size_t n = scan(from, 256, buf);
    for (size_t i = 0; i < n; ++i) {
      if (buf[i].key > hi) return out.size() - n0;
      out.push_back(buf[i]);
    }
    if (n < 256 || buf[n - 1].key == UINT64_MAX) break;
    from = buf[n - 1].key + 1;
  }
  return out.size() - n0;
}

size_t index::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  if (hi < lo) return 0;
  size_t n0 = out.size();
  std::string from(lo);
  while (true) {
    size_t before = out.size();
    size_t n = scan(from, 256, out);
    for (size_t i = before; i < out.size(); ++i)
      if (out.key(i) > hi) {
        while (out.size() > i) out.pop_back();
        return out.size() - n0;
      }
    if (n < 256) break;
    from.assign(out.key(out.size() - 1));
    from.push_back('\0');  // the smallest key after the last one returned
  }
  return out.size() - n0;
}

void index::close() {
  if (owned_pool_) owned_pool_->close();
}

void index::abandon() {
  if (owned_pool_) owned_pool_->abandon();
}

// ------------------------------------------------------------------ u64_index

namespace {
// The largest 8-byte key <= s; false if there is none.
bool u64_at_or_before(std::string_view s, uint64_t& k) {
  char b[8] = {};
  if (!s.empty()) std::memcpy(b, s.data(), s.size() < 8 ? s.size() : 8);  // a default view's data() is null
  k = key_u64({b, 8});
  if (s.size() >= 8) return true;
  return k-- != 0;  // shorter: every extension (the padded one included) sorts after it
}
}  // namespace

bool u64_index::insert(std::string_view key, std::string_view value) {
  check_key(key);
  check_value(value);
  return insert(key_u64(key), value_u64(value));
}
bool u64_index::update(std::string_view key, std::string_view value) {
  check_key(key);
  check_value(value);
  return update(key_u64(key), value_u64(value));
}
bool u64_index::upsert(std::string_view key, std::string_view value) {
  check_key(key);
  check_value(value);
  return upsert(key_u64(key), value_u64(value));
}
bool u64_index::remove(std::string_view key) {
  check_key(key);
  return remove(key_u64(key));
}
bool u64_index::lookup(std::string_view key, std::string* value) {
  check_key(key);
  auto v = lookup(key_u64(key));
  if (v && value) value->assign(std::string_view(value_bytes(*v)));
  return v.has_value();
}
size_t u64_index::scan(std::string_view from, size_t count, record_buffer& out) {
  uint64_t k;
  if (!count || !u64_at_or_after(from, k)) return 0;
  record buf[128];
  size_t total = 0;
  while (total < count) {
    size_t want = count - total < 128 ? count - total : 128;
    size_t n = scan(k, want, buf);
    for (size_t i = 0; i < n; ++i) out.push_back(key_bytes(buf[i].key), value_bytes(buf[i].value));
    total += n;
    if (n < want || buf[n - 1].key == UINT64_MAX) break;
    k = buf[n - 1].key + 1;
  }
  return total;
}
size_t u64_index::range(std::string_view lo, std::string_view hi, record_buffer& out) {
  uint64_t a, b;
  if (!u64_at_or_after(lo, a) || !u64_at_or_before(hi, b) || a > b) return 0;
  std::vector<record> tmp;
  range(a, b, tmp);
  for (auto& r : tmp) out.push_back(key_bytes(r.key), value_bytes(r.value));
  return tmp.size();
}

// ------------------------------------------------------------------ bytes_index

namespace {
uint64_t as_u64_value(const index& idx, std::string_view v) {
  if (v.size() != 8)
    throw error(errc::unsupported, idx.name() + ": a u64 call met a value of " + std::to_string(v.size()) +
                                       " bytes (use the byte calls)");
  return value_u64(v);
}
record as_record(const index& idx, std::string_view k, std::string_view v) {
  if (k.size() != 8)
    throw error(errc::unsupported, idx.name() + ": a u64 call met a key of " + std::to_string(k.size()) +
                                       " bytes (use the byte calls)");
  return {key_u64(k), as_u64_value(idx, v)};
}
}  // namespace

bool bytes_index::insert(uint64_t key, uint64_t value) { return insert(key_bytes(key), value_bytes(value)); }
bool bytes_index::update(uint64_t key, uint64_t value) { return update(key_bytes(key), value_bytes(value)); }
bool bytes_index::upsert(uint64_t key, uint64_t value) { return upsert(key_bytes(key), value_bytes(value)); }
bool bytes_index::remove(uint64_t key) { return remove(std::string_view(key_bytes(key))); }
std::optional<uint64_t> bytes_index::lookup(uint64_t key) {
  static thread_local std::string v;
  if (!lookup(key_bytes(key), &v)) return std::nullopt;
  return as_u64_value(*this, v);
}
size_t bytes_index::scan(uint64_t from, size_t count, record* out) {
  static thread_local record_buffer buf;
  buf.clear();
  size_t n = scan(key_bytes(from), count, buf);
  for (size_t i = 0; i < n; ++i) out[i] = as_record(*this, buf.key(i), buf.value(i));
  return n;
}
size_t bytes_index::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  static thread_local record_buffer buf;
  buf.clear();
  size_t n = range(key_bytes(lo), key_bytes(hi), buf);
  for (size_t i = 0; i < n; ++i) out.push_back(as_record(*this, buf.key(i), buf.value(i)));
  return n;
}

// ------------------------------------------------------------------ open

std::unique_ptr<index> open(const options& o) {
  auto e = find_index(o.index);
  if (!e) throw error(errc::usage, "unknown index '" + o.index + "' (see `pmindex list`)");
  // An explicit mode is checked before the pool exists; a stored one by the
  // pool, before it marks the pool in use (allowed_modes).
  if (o.mode && !e->supports(*o.mode))
    throw error(errc::unsupported,
                "index " + o.index + " does not support mode " + std::string(pm::to_string(*o.mode)));
  // Checked before the pool exists, so a bad parameter creates no file.
  index_config given = index_config::parse(*e, o.params);

  pm::pool_options po;
  po.path = o.pool_path;
  po.size = o.pool_size;
  po.pm_mode = o.mode;
  if (!o.mode && !e->supports(pm::mode::persist)) po.pm_mode = pm::mode::dram;  // volatile baselines
  po.allowed_modes = e->modes;
  po.flush = o.flush;
  po.write_ns = o.pm_write_ns;
  po.open = o.open;
  po.index_name = o.index;
  po.index_params = given.canonical();
  po.observer = o.observer;
  po.image = o.image;
  po.image_size = o.image_size;
  po.quiet = o.quiet;
  auto p = pm::pool::open(po);
  if (p->index_name() != o.index) {
    std::string held = p->index_name();
    p->abandon();  // leave it exactly as it was
    throw error(errc::wrong_index, o.pool_path + " holds index '" + held + "', not '" + o.index + "'");
  }

  open_kind kind = p->created() ? open_kind::created : p->was_clean() ? open_kind::clean : open_kind::dirty;
  // The root is the one word that commits an index's creation: a dirty pool
  // without one crashed before its index existed, so it holds nothing
  // (and, on a dirty open, the heap starts empty): build the index anew.
  if (kind == open_kind::dirty && p->root() == 0) kind = open_kind::created;
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<index> idx;
  try {
    // An existing pool keeps the parameters it was created with.
    index_config cfg = given;
    if (!p->created()) {
      try {
        cfg = index_config::parse(*e, p->index_params());
      } catch (const error& x) {
        throw error(errc::corrupt, o.pool_path + ": stored parameters are not valid: " + x.what());
      }
    }
    idx = e->factory(*p, kind, cfg);
    idx->name_ = o.index;
    idx->keys_ = cfg.keys();
    idx->max_key_ = cfg.keys() == key_kind::u64 ? 8 : e->max_key;
    idx->max_value_ = cfg.keys() == key_kind::u64 ? 8 : e->max_value;
    open_report r;
    r.created = kind == open_kind::created;
    r.was_clean = p->was_clean();
    r.open_seconds = p->open_seconds();
    r.mode = p->pm_mode();
    r.pool_mode = p->stored_mode();
    r.note = p->mode_note();
    if (kind == open_kind::dirty) {
      r.traced_blocks = p->rebuild_heap([&](pm::pool::trace_sink& s) { idx->trace(s); });
      if (idx->after_recovery())
        r.traced_blocks = p->count_reachable([&](pm::pool::trace_sink& s) { idx->trace(s); });
      r.recover_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    idx->report_ = r;
  } catch (...) {
    idx.reset();
    p->abandon();  // a failed recovery must not mark the pool clean
    throw;
  }
  idx->owned_pool_ = std::move(p);
  return idx;
}

}  // namespace pmindex
