#include "plugin.hpp"

#include <dlfcn.h>

#include "pmindex/error.hpp"

namespace pmindex::bench {

plugin::plugin(const std::string& path) : path_(path) {
  // RTLD_LOCAL: the wrapper's symbols (it may carry its own copy of a
  // library we also link) stay its own.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* e = dlerror();
    throw error(errc::usage, "cannot load plugin " + path + ": " + (e ? e : "unknown error"));
  }
  create_ = reinterpret_cast<tree_api* (*)(const tree_options_t&)>(dlsym(handle_, "create_tree"));
  if (!create_) {
    dlclose(handle_);
    handle_ = nullptr;
    throw error(errc::usage, "plugin " + path + " exports no create_tree (not a PiBench wrapper)");
  }
}

plugin::~plugin() {
  // Trees must be destroyed before; the library stays mapped until exit so
  // that thread-local destructors it registered can still run.
}

std::unique_ptr<tree_api> plugin::create(const tree_options_t& o) {
  tree_api* t = create_(o);
  if (!t) throw error(errc::failure, "plugin " + path_ + ": create_tree returned null");
  return std::unique_ptr<tree_api>(t);
}

}  // namespace pmindex::bench
