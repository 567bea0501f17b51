// The root block of the ordered pmemids structures (each its own magic) and
// the pool figures of their stats().
//
//     0  uint64_t magic
//     8  uint64_t tree    the root node (the skip list: its head); the word
//                         that commits a new root
//    16  uint64_t slot    bytes of a record's value slot
//    24  uint64_t kind    0 keys=u64, 1 keys=bytes
#pragma once

#include <cstdint>
#include <string>

#include "common/root_block.hpp"
#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "pmindex/registry.hpp"

namespace pmindex::pmemids {

struct root_block {
  uint64_t magic;
  uint64_t tree;
  uint64_t slot;
  uint64_t kind;
};

// Created (init sets tree; the block is persisted, then committed as the
// pool's root), or attached and checked against this open's parameters
// (errc::corrupt if they differ). The caller checks `tree`.
template <class Init>
root_block* open_root(pm::pool& p, open_kind k, uint64_t magic, const std::string& name, uint64_t slot, bool u64,
                      Init&& init) {
  if (k == open_kind::created)
    return common::create_root<root_block>(p, magic, [&](root_block& r) {
      r.slot = slot;
      r.kind = u64 ? 0 : 1;
      init(r);
    });
  root_block* r = common::attach_root<root_block>(p, magic, name);
  if (r->slot != slot || r->kind != (u64 ? 0u : 1u))
    throw error(errc::corrupt, name + ": the root block does not match the pool's parameters");
  return r;
}

inline void add_pool_usage(index_stats& st, pm::pool& p) {
  auto u = p.usage();
  st.pm_bytes_used = u.used_bytes;
  st.pm_bytes_reserved = u.reserved_bytes;
  st.dram_bytes = u.dram_bytes;
  st.alloc_dram_bytes = u.dram_bytes;
}

}  // namespace pmindex::pmemids
