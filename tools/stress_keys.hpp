// Keys and values of `pmindex stress` (cmd_stress.cpp).
//
// Keys: worker (or check) o of M owns its own keys, so its oracle of them is
// exact. Without --dataset they are stress's own u64 keys: the harness's
// sparse keys (bench/keys.hpp) moved to residue o modulo M, and the ends of
// the 64-bit space; with a dataset,
// owner o's i-th key is the dataset's key of id i * M + o, and a table maps
// a key read back to its owner.
//
// Values carry the key's 24-bit tag and a 40-bit sequence number of its
// owner (value id = tag << 40 | seq), so any read can be checked: right key,
// already issued. u64 runs store the id; byte runs store
// value_codec::encode(id): the id's 8 bytes then bench's value_bytes(id,
// B - 8), so a torn or foreign value of any size shows. Values under 8
// bytes hold the id's low bytes: own keys stay exact, other reads are
// checked for their size only.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "dataset.hpp"
#include "keys.hpp"
#include "pmindex/index.hpp"
#include "pmindex/error.hpp"

namespace pmindex::cli::stress {

inline constexpr int k_seq_bits = 40;

template <class K>  // uint64_t or std::string
class key_space {
  static constexpr bool k_u64 = std::is_same_v<K, uint64_t>;

 public:
  // Stress's own u64 keys.
  key_space(uint32_t modulus, uint64_t per_owner, uint64_t seed)
      : modulus_(modulus), per_(per_owner), map_(bench::key_universe::sparse, bench::key_salt(seed)) {
    static_assert(k_u64, "own keys are u64");
  }
  // The keys of a dataset (integer keys when K is uint64_t).
  key_space(uint32_t modulus, uint64_t per_owner, const bench::dataset& ds)
      : modulus_(modulus), per_(per_owner) {
    if (ds.size() / modulus < per_owner)
      throw error(errc::usage, "dataset " + ds.name() + " has " + std::to_string(ds.size()) +
                                   " keys, fewer than --keys times the owners (" + std::to_string(modulus) + ")");
    std::string buf;
    keys_.reserve(modulus * per_owner);
    for (uint64_t id = 0; id < uint64_t{modulus} * per_owner; ++id) {
      if constexpr (k_u64) keys_.push_back(ds.key_u64(id));
      else keys_.emplace_back(ds.key(id, buf));
      ids_.emplace(keys_.back(), id);
    }
  }

  // An index with a key limit (index_entry::key_limit): owner o's i-th key
  // is the integer i * M + o (byte runs: its 8 bytes), all below `limit`.
  struct below {
    uint64_t limit;
  };
  key_space(uint32_t modulus, uint64_t per_owner, below b) : modulus_(modulus), per_(per_owner) {
    if (b.limit / modulus < per_owner)
      throw error(errc::usage, "the index takes keys below " + std::to_string(b.limit) + ": fewer than --keys " +
                                   std::to_string(per_owner) + " times the owners (" + std::to_string(modulus) + ")");
    keys_.reserve(modulus * per_owner);
    for (uint64_t id = 0; id < uint64_t{modulus} * per_owner; ++id) {
      if constexpr (k_u64) keys_.push_back(id);
      else keys_.emplace_back(std::string_view(key_bytes(id)));
      ids_.emplace(keys_.back(), id);
    }
  }

  K key(uint32_t owner, uint64_t i) const {
    if (!keys_.empty()) return keys_[i * modulus_ + owner];
    if constexpr (k_u64) {
      if (i == 0) return owner;                                               // smallest
      if (i == 1) return (UINT64_MAX - owner) / modulus_ * modulus_ + owner;  // largest
      // The harness's sparse key of id (i, owner), moved to the owner's residue.
      return map_(i * modulus_ + owner) % (UINT64_MAX / modulus_) * modulus_ + owner;
    } else {
      return K();
    }
  }
  // The owner of a key; UINT32_MAX for a key outside the space.
  uint32_t owner_of(const K& k) const {
    if (keys_.empty()) {
      if constexpr (k_u64) return static_cast<uint32_t>(k % modulus_);
    }
    auto it = ids_.find(k);
    return it == ids_.end() ? UINT32_MAX : static_cast<uint32_t>(it->second % modulus_);
  }
  // The 24-bit tag a key's values carry.
  uint64_t tag(const K& k) const {
    uint64_t h;
    if constexpr (k_u64) h = k;
    else h = std::hash<std::string>{}(k);
    return bench::mix64(h ^ 0x5bd1e995) >> k_seq_bits;
  }
  // A scan start: mostly a key of the space, else anything (u64: a random
  // integer; bytes: a prefix of a key, the empty one included).
  K scan_start(bench::rng& rng, uint32_t owners) const {
    K k = key(static_cast<uint32_t>(rng() % owners), rng() % per_);
    if (rng() % 4) return k;
    if constexpr (k_u64) return rng();
    else return k.substr(0, k.empty() ? 0 : rng() % k.size());
  }

 private:
  uint32_t modulus_;
  uint64_t per_;
  bench::key_map map_;  // own keys
  std::vector<K> keys_;
  std::unordered_map<K, uint64_t> ids_;
};

class value_codec {
 public:
  explicit value_codec(uint64_t size) : size_(size) {}
  void encode(uint64_t vid, std::string& out) const {
    if (size_ < 8) {
      out.assign(reinterpret_cast<const char*>(&vid), size_);
      return;
    }
    bench::value_bytes(vid, size_ - 8, out);
    out.insert(0, reinterpret_cast<const char*>(&vid), 8);
  }
  // The id of a value read back (values >= 8 bytes); false when the bytes
  // are no value encode() makes: wrong size, torn, foreign.
  bool decode(std::string_view v, uint64_t& vid) const {
    if (v.size() != size_ || size_ < 8) return false;
    std::memcpy(&vid, v.data(), 8);
    return bench::value_matches(vid, v.substr(8));
  }
  bool checkable() const { return size_ >= 8; }
  uint64_t size() const { return size_; }

 private:
  uint64_t size_;
};

}  // namespace pmindex::cli::stress
