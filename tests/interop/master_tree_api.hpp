// PiBench master's wrapper interface (sfu-dis/pibench a78171a), declared
// here on its own from the published facts -- options struct members
// key_size, value_size, pool_path, pool_size, num_threads; virtual functions
// in this order: destructor, find, insert, update, remove, scan -- and NOT
// from bench/pibench/tree_api.hpp, so that the interop tests catch a layout
// pmindex gets wrong on both sides at once.
#pragma once

#include <cstddef>
#include <string>

struct tree_options_t {
  size_t key_size = 8;
  size_t value_size = 8;
  std::string pool_path = "";
  size_t pool_size = 0;
  size_t num_threads = 1;
};

class tree_api {
 public:
  virtual ~tree_api() {}
  virtual bool find(const char* key, size_t key_sz, char* value_out) = 0;
  virtual bool insert(const char* key, size_t key_sz, const char* value, size_t value_sz) = 0;
  virtual bool update(const char* key, size_t key_sz, const char* value, size_t value_sz) = 0;
  virtual bool remove(const char* key, size_t key_sz) = 0;
  virtual int scan(const char* key, size_t key_sz, int scan_sz, char*& values_out) = 0;
};

extern "C" tree_api* create_tree(const tree_options_t& opt);
