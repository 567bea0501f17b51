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
// 2: header_sum and meta_sum (a damaged header or allocator state is
//    refused as corrupt instead of being followed).
// 3: create_mode and last_mode (a pool reopens in the persistence mode it
//    was created in; see pm::pool::open for the rules of switching).
inline constexpr uint32_t k_format_version = 3;
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
  uint64_t header_sum;       // 104  checksum of bytes [0, 64) and [128, 512): the
                             //      words fixed at creation (written before magic)
  uint64_t meta_sum;         // 112  checksum of the allocator state area, valid
                             //      when clean == 1 (persisted before clean)
  uint64_t last_mode;        // 120  pm::mode of the open in progress, or of the last
                             //      one; stored before clean = 0 (a dirty pool last
                             //      used in volatile mode is not crash-consistent)
  // --- lines 2-6
  char     index_name[64];   // 128  NUL-terminated
  char     index_params[256];// 192  "key=value,..." chosen at creation
  // --- line 7
  uint64_t create_mode;      // 448  pm::mode chosen at creation: an open that names
                             //      no mode uses it
  // The undo logs of a tx pool (pm/tx.hpp), between the allocator state and
  // the heap; zero in the other modes. Added to format 3 without a bump:
  // the words were zero (reserved) and no index had a tx mode before them.
  uint64_t tx_log_offset;    // 456  first log (64-aligned), 0: none
  uint64_t tx_log_count;     // 464  logs (one per concurrent transaction)
  uint64_t tx_log_size;      // 472  bytes per log (a multiple of 64)
  uint64_t reserved[4];      // 480  zero
};
// clang-format on
static_assert(sizeof(pool_header) == 512);

// The checksum of header_sum and meta_sum: 64-bit words (a tail of fewer
// bytes zero padded), four lanes mixed with murmur3's finaliser constants.
inline uint64_t checksum(const void* p, uint64_t n, uint64_t seed = 0) noexcept {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  uint64_t lane[4] = {seed ^ 0x9E3779B97F4A7C15ull, seed + n, ~seed, seed ^ 0xC2B2AE3D27D4EB4Full};
  auto mix = [](uint64_t h, uint64_t w) {
    h ^= w * 0xff51afd7ed558ccdull;
    h = (h << 31) | (h >> 33);
    return h * 0xc4ceb9fe1a85ec53ull;
  };
  uint64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int l = 0; l < 4; ++l) {
      uint64_t w;
      __builtin_memcpy(&w, b + i + 8 * l, 8);
      lane[l] = mix(lane[l], w);
    }
  for (int l = 0; i < n; ++l, i += 8) {
    uint64_t w = 0;
    __builtin_memcpy(&w, b + i, n - i < 8 ? n - i : 8);
    lane[l] = mix(lane[l], w);
  }
  uint64_t h = lane[0] ^ (lane[1] * 3) ^ (lane[2] * 5) ^ (lane[3] * 7);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

// header_sum's value for a header (with `magic` as it will read).
inline uint64_t header_checksum(const pool_header& h) noexcept {
  const char* p = reinterpret_cast<const char*>(&h);
  return checksum(p + 128, sizeof(pool_header) - 128, checksum(p, 64));
}

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
