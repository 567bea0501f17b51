// PiBench's `bulk-loading` branch layout of tree_api: master's (tree_api.hpp)
// with bulk_load declared before find, so every later virtual function sits
// one slot further. A wrapper built for that branch is loaded with
// `pmindex bench --plugin LIB.so --plugin-abi bulk`; libpmindex_pibench_bulk.so
// is pmindex's wrapper in this layout. Same tree_options_t and create_tree.
#pragma once

#include "pibench/tree_api.hpp"

class tree_api_bulk {
 public:
  virtual ~tree_api_bulk() {}
  // Optional bulk load of num_records <key><value> pairs; false if unsupported.
  virtual bool bulk_load(const char* data, size_t num_records, size_t key_sz, size_t value_sz) {
    (void)data, (void)num_records, (void)key_sz, (void)value_sz;
    return false;
  }
  virtual bool find(const char* key, size_t key_sz, char* value_out) = 0;
  virtual bool insert(const char* key, size_t key_sz, const char* value, size_t value_sz) = 0;
  virtual bool update(const char* key, size_t key_sz, const char* value, size_t value_sz) = 0;
  virtual bool remove(const char* key, size_t key_sz) = 0;
  virtual int scan(const char* key, size_t key_sz, int scan_sz, char*& values_out) = 0;
};
