#include "pmindex/index.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "builtin_indexes.hpp"
#include "pmindex/error.hpp"

namespace pmindex {

[[noreturn]] void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "pmindex: assertion failed: %s (%s:%d)\n", expr, file, line);
  std::abort();
}

namespace {
std::mutex g_registry_mu;
std::vector<index_entry>& registry() {
  static std::vector<index_entry> r = [] {
    std::vector<index_entry> v;
    detail::add_builtin_indexes(v);
    return v;
  }();
  return r;
}
}  // namespace

const std::vector<index_entry>& registered_indexes() { return registry(); }

const index_entry* find_index(const std::string& name) {
  std::lock_guard lk(g_registry_mu);
  for (auto& e : registry())
    if (e.name == name) return &e;
  return nullptr;
}

void register_index(index_entry e) {
  std::lock_guard lk(g_registry_mu);
  for (auto& x : registry())
    if (x.name == e.name) {
      x = std::move(e);
      return;
    }
  registry().push_back(std::move(e));
}

size_t index::range(uint64_t lo, uint64_t hi, std::vector<record>& out) {
  // Generic: repeated bounded scans. Indexes with a native range override it.
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

void index::close() {
  if (owned_pool_) owned_pool_->close();
}

void index::abandon() {
  if (owned_pool_) owned_pool_->abandon();
}

std::unique_ptr<index> open(const options& o) {
  const index_entry* e = find_index(o.index);
  if (!e) throw error(errc::usage, "unknown index '" + o.index + "' (see `pmindex list`)");
  bool mode_ok = false;
  for (auto m : e->modes) mode_ok |= m == o.mode;
  if (!mode_ok)
    throw error(errc::unsupported,
                "index " + o.index + " does not support mode " + std::string(pm::to_string(o.mode)));

  pm::pool_options po;
  po.path = o.pool_path;
  po.size = o.pool_size;
  po.pm_mode = o.mode;
  po.flush = o.flush;
  po.write_ns = o.pm_write_ns;
  po.open = o.open;
  po.index_name = o.index;
  po.index_params = o.params.empty() ? e->default_params : o.params;
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
    idx = e->factory(*p, kind);
    open_report r;
    r.created = kind == open_kind::created;
    r.was_clean = p->was_clean();
    r.open_seconds = p->open_seconds();
    if (kind == open_kind::dirty) {
      r.traced_blocks = p->rebuild_heap([&](pm::pool::trace_sink& s) { idx->trace(s); });
      r.recover_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    idx->report_ = r;
  } catch (...) {
    idx.reset();
    p->abandon();  // a failed recovery must not mark the pool clean
    throw;
  }
  idx->name_ = o.index;
  idx->owned_pool_ = std::move(p);
  return idx;
}

}  // namespace pmindex
