// A kv block: one immutable {key, value} pair of byte strings in one pool
// block, the unit most byte-keyed layouts point to (a key block has an empty
// value, a value block an empty key).
//
// Protocol: make_kv_block() allocates, writes and flushes the whole block
// (no fence); the caller's fence before the 8-byte store that publishes its
// offset makes it durable first. It is never changed after publication: an
// update writes a new block, swings the pointer (8-byte commit) and retires
// the old one through the epochs once the swing is durable. Recovery traces
// it with kv_block_size() and checks it with kv_block_valid().
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "common/full_pool.hpp"
#include "pmindex/pm/pool.hpp"

namespace pmindex::common {

// clang-format off
struct kv_block {
  uint32_t klen;   //  0
  uint32_t vlen;   //  4
  char data[8];    //  8  key bytes, then value bytes (klen + vlen in all)
};
// clang-format on
inline constexpr uint64_t k_kv_header = 8;

// The longest value of the byte layouts: every index's keys=bytes
// max_value, and so the largest item `pmindex serve -I` can allow. The
// lengths are 32-bit (kv_block here, PermART's pairs, record_buffer), so
// the layouts could go to 4 GiB - 1; the cap leaves room for the copies a
// value makes on its way (a reader's buffer, the server's input and reply
// buffers, an update's new block beside the retired one until its grace
// period ends) and lets a test write one quickly. Large blocks are runs of
// 64 KiB chunks (alloc/heap.hpp: 30 bits of chunk count), far above it.
inline constexpr size_t k_max_value = size_t{128} << 20;
static_assert(k_max_value + 4096 + k_kv_header < (uint64_t{1} << 32), "lengths are 32-bit");

inline uint64_t kv_block_bytes(size_t klen, size_t vlen) noexcept { return k_kv_header + klen + vlen; }

// Allocates and fills a block and flushes it (no fence). Throws
// error(pool_full) when the pool is full.
inline uint64_t make_kv_block(pm::pool& p, std::string_view key, std::string_view value) {
  uint64_t n = kv_block_bytes(key.size(), value.size());
  uint64_t off = p.alloc_or_throw(n);
  auto* b = p.ptr<kv_block>(off);
  b->klen = static_cast<uint32_t>(key.size());
  b->vlen = static_cast<uint32_t>(value.size());
  if (!key.empty()) std::memcpy(b->data, key.data(), key.size());
  if (!value.empty()) std::memcpy(b->data + key.size(), value.data(), value.size());
  p.flush(b, n);
  return off;
}

inline const kv_block* kv_at(const pm::pool& p, uint64_t off) noexcept { return p.ptr<const kv_block>(off); }
inline std::string_view kv_key(const kv_block* b) noexcept { return {b->data, b->klen}; }
inline std::string_view kv_value(const kv_block* b) noexcept { return {b->data + b->klen, b->vlen}; }
inline std::string_view kv_key(const pm::pool& p, uint64_t off) noexcept { return kv_key(kv_at(p, off)); }
inline std::string_view kv_value(const pm::pool& p, uint64_t off) noexcept { return kv_value(kv_at(p, off)); }

inline uint64_t kv_block_size(const pm::pool& p, uint64_t off) noexcept {
  auto* b = kv_at(p, off);
  return kv_block_bytes(b->klen, b->vlen);
}

// A block read from a (possibly damaged) pool: inside the heap, lengths
// within the limits and within the pool. Check before trusting it.
inline bool kv_block_valid(const pm::pool& p, uint64_t off, size_t max_key, size_t max_value) noexcept {
  if (!p.valid_block(off, k_kv_header)) return false;
  auto* b = kv_at(p, off);
  return b->klen <= max_key && b->vlen <= max_value && p.valid_block(off, kv_block_bytes(b->klen, b->vlen));
}

// The byte insert or update of an index that names each record by its
// block: a new block for (key, value), then `commit(kv, old)` stores its
// offset and returns whether it did (an insert: the key was absent; an
// update: present, `old` set to the block it replaced). commit's protocol
// fences before that store, so the block is durable first. Runs pinned; a
// block never published is freed at once (also when commit throws), a
// replaced one retired. A full pool: tried once more (full_pool.hpp).
template <class Commit>
bool publish_kv_block(pm::pool& p, std::string_view key, std::string_view value, Commit&& commit) {
  return retry_when_full(p, [&] {
    const uint64_t kv = make_kv_block(p, key, value);
    auto g = p.pin();
    uint64_t old = 0;
    bool ok;
    try {
      ok = commit(kv, old);
    } catch (...) {
      p.free(kv);
      throw;
    }
    if (!ok) p.free(kv);
    else if (old) p.retire(old);
    return ok;
  });
}

// The byte remove of such an index: `unlink(old)` removes the record's word
// durably and sets `old` to its block, which is then retired. Runs pinned.
template <class Unlink>
bool unlink_kv_block(pm::pool& p, Unlink&& unlink) {
  auto g = p.pin();
  uint64_t old = 0;
  if (!unlink(old)) return false;
  p.retire(old);
  return true;
}

}  // namespace pmindex::common
