#include "plugin.hpp"

#include <dlfcn.h>

#include "pibench/tree_api_bulk.hpp"
#include "pmindex/error.hpp"

namespace pmindex::bench {

namespace {

// A bulk-layout tree seen through master's layout (one forwarding call).
class bulk_adapter final : public tree_api {
 public:
  explicit bulk_adapter(tree_api_bulk* t) : t_(t) {}
  ~bulk_adapter() override { delete t_; }
  bool find(const char* k, size_t ks, char* out) override { return t_->find(k, ks, out); }
  bool insert(const char* k, size_t ks, const char* v, size_t vs) override { return t_->insert(k, ks, v, vs); }
  bool update(const char* k, size_t ks, const char* v, size_t vs) override { return t_->update(k, ks, v, vs); }
  bool remove(const char* k, size_t ks) override { return t_->remove(k, ks); }
  int scan(const char* k, size_t ks, int n, char*& out) override { return t_->scan(k, ks, n, out); }

 private:
  tree_api_bulk* t_;
};

}  // namespace

plugin::plugin(const std::string& path, plugin_abi abi) : path_(path), abi_(abi) {
  // RTLD_LOCAL: the wrapper's symbols (it may carry its own copy of a
  // library we also link) stay its own.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* e = dlerror();
    throw error(errc::usage, "cannot load plugin " + path + ": " + (e ? e : "unknown error"));
  }
  create_ = dlsym(handle_, "create_tree");
  if (!create_) {
    dlclose(handle_);
    handle_ = nullptr;
    throw error(errc::usage, "plugin " + path + " exports no create_tree (not a PiBench wrapper)");
  }
  counters_ = reinterpret_cast<counters_fn>(dlsym(handle_, "pmindex_pibench_counters"));
}

plugin::~plugin() {
  // Trees must be destroyed before; the library stays mapped until exit so
  // that thread-local destructors it registered can still run.
}

std::unique_ptr<tree_api> plugin::create(const tree_options_t& o) {
  if (abi_ == plugin_abi::bulk) {
    auto* t = reinterpret_cast<tree_api_bulk* (*)(const tree_options_t&)>(create_)(o);
    if (!t) throw error(errc::failure, "plugin " + path_ + ": create_tree returned null");
    return std::make_unique<bulk_adapter>(t);
  }
  tree_api* t = reinterpret_cast<tree_api* (*)(const tree_options_t&)>(create_)(o);
  if (!t) throw error(errc::failure, "plugin " + path_ + ": create_tree returned null");
  return std::unique_ptr<tree_api>(t);
}

}  // namespace pmindex::bench
