// On-media layout of a pool. Offsets are from the start of the mapping;
// nothing in a pool stores a virtual address, so a pool maps anywhere.
//
//   [0, 4096)            pool_header
//   [4096, heap_offset)  allocator state, written only at a clean close
//   [heap_offset, size)  chunks of k_chunk_size bytes, carved by the allocator
#pragma once

#include <cstdint>

namespace pmindex::pm::detail {

inline constexpr char k_magic[8] = {'P', 'M', 'I', 'N', 'D', 'E', 'X', '\0'};
// Bump on any layout change; older pools then get a clear error.
inline constexpr uint32_t k_format_version = 1;
inline constexpr uint64_t k_header_size = 4096;
inline constexpr uint64_t k_chunk_size = 64 * 1024;
inline constexpr uint64_t k_min_pool_size = 1 << 20;

// clang-format off
struct pool_header {
  char     magic[8];         //   0  written last at creation
  uint32_t format_version;   //   8
  uint32_t header_size;      //  12
  uint64_t pool_size;        //  16
  uint64_t chunk_size;       //  24
  uint64_t meta_offset;      //  32  allocator state area
  uint64_t meta_size;        //  40
  uint64_t heap_offset;      //  48  first chunk
  uint64_t nchunks;          //  56
  // --- line 1: the words that change while the pool is in use
  uint64_t root;             //  64  index root offset; one 8-byte store commits it
  uint64_t clean;            //  72  1 after a clean close, 0 while open
  uint64_t open_count;       //  80
  uint64_t create_time;      //  88  seconds since the epoch
  uint64_t used_at_close;    //  96  bytes in use at the last clean close
  uint64_t reserved1[3];     // 104
  // --- lines 2-7
  char     index_name[64];   // 128  NUL-terminated
  char     index_params[256];// 192  "key=value,..." chosen at creation
};
// clang-format on
static_assert(sizeof(pool_header) == 448);

// Allocator state area: one 32-bit chunk word per chunk, then one bitmap of
// k_bitmap_bytes per chunk (block i of a small-class chunk is bit i).
inline constexpr uint64_t k_bitmap_bytes = k_chunk_size / 16 / 8;  // 512

// Chunk words (also the DRAM encoding): 0 free, 1..k_nclasses a small class
// (class + 1), k_large_head | n for the first of n chunks of a large block,
// k_large_tail for the others.
inline constexpr uint32_t k_chunk_free = 0;
inline constexpr uint32_t k_large_head = 0x80000000u;
inline constexpr uint32_t k_large_tail = 0x40000000u;

}  // namespace pmindex::pm::detail
