// PiBench's index wrapper interface, declared here from its documented
// signatures (PiBench, include/tree_api.hpp and wrappers/README.md) so that
// `pmindex bench --plugin LIB.so` can drive any wrapper built for PiBench and
// libpmindex_pibench.so can be driven by PiBench. The layout must match
// PiBench's: same members in the same order, same virtual functions in the
// same order (the vtable is the ABI).
//
// Keys and values are byte strings. PiBench passes 8-byte integer keys in
// big-endian byte order (so byte order = numeric order); pmindex does too.
// scan() points values_out at wrapper-owned memory holding `result` records
// laid out as <key bytes><value bytes>, in ascending key order.
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

class tree_api;
extern "C" tree_api* create_tree(const tree_options_t& opt);

class tree_api {
 public:
  virtual ~tree_api() {}
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
