// PiBench's index wrapper interface as PiBench's master branch declares it
// (sfu-dis/pibench a78171a, 2022-07-27, include/tree_api.hpp: the version
// every published wrapper targets), written here from its documented
// signatures. `pmindex bench --plugin LIB.so` drives any wrapper built for
// master, and libpmindex_pibench.so can be driven by master's PiBench. The
// layout is the ABI: the same members in the same order and the same
// virtual functions in the same order -- destructor, find, insert, update,
// remove, scan. The `bulk-loading` branch adds bulk_load before find (one
// vtable slot later for every call): tree_api_bulk.hpp, `--plugin-abi bulk`
// and libpmindex_pibench_bulk.so.
//
// Keys and values are byte strings. PiBench passes 8-byte integer keys in
// big-endian byte order (so byte order = numeric order); pmindex does too.
// scan() points values_out at wrapper-owned memory holding `result` records
// laid out as <key bytes><value bytes>, in ascending key order.
//
// Wrappers export `extern "C" tree_api* create_tree(const tree_options_t&)`
// (declared by each side with its own return type: the two layouts share it).
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
