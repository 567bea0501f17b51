// Key universes: how a record id (0, 1, 2, ...) becomes a 64-bit key. This
// is the one key generator of pmindex: the harness, the u64 datasets, the
// checkers (crash, stress, snapshot, damage) and `pmindex load/verify` all
// take their integer keys from it (and their random numbers from rng.hpp).
// The harness reasons only in ids (the prefill holds ids [0, n), run-phase
// inserts take ids >= n, reads draw ids from a distribution); the universe
// turns an id into the key the index sees. Every mapping is a bijection, so
// distinct ids are distinct keys, for every id below 2^63.
//
//   dense      key = id + 1                 (1..U, PiBench without hashing)
//   sparse     key = a 64-bit bijective mix of id (random-looking 64-bit keys)
//   clustered  runs of 64 consecutive keys at random 64-bit places (the WORT
//              evaluation's clustered set): key = mix58(id / 64) * 64 + id % 64
//   hashed     key = 11400714819323198393 * (id + 1) mod 2^64 (PiBench's
//              multiplicative hash of 1..U, Knuth's golden-ratio constant)
//   slots      key = id (0..U-1: an array's slot numbers; what bench uses
//              for an index with a key limit, index_entry::key_limit)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "rng.hpp"

namespace pmindex::bench {

enum class key_universe : uint8_t { dense, sparse, clustered, hashed, slots };

inline std::string_view to_string(key_universe u) noexcept {
  switch (u) {
    case key_universe::dense: return "dense";
    case key_universe::sparse: return "sparse";
    case key_universe::clustered: return "clustered";
    case key_universe::hashed: return "hashed";
    case key_universe::slots: return "slots";
  }
  return "?";
}

inline std::optional<key_universe> parse_universe(std::string_view s) noexcept {
  for (auto u : {key_universe::dense, key_universe::sparse, key_universe::clustered, key_universe::hashed,
                 key_universe::slots})
    if (to_string(u) == s) return u;
  return std::nullopt;
}

// The salt of --seed's key universe (the harness and the u64 datasets agree).
inline uint64_t key_salt(uint64_t seed) noexcept { return mix64(seed ^ 0x6B657973ull); }

class key_map {
 public:
  key_map(key_universe u = key_universe::sparse, uint64_t seed = 0) noexcept : u_(u), salt_(seed) {}
  key_universe universe() const noexcept { return u_; }

  uint64_t operator()(uint64_t id) const noexcept {
    switch (u_) {
      case key_universe::dense: return id + 1;
      case key_universe::sparse: return mix64(id ^ salt_);
      case key_universe::clustered: return (mix_bits((id >> 6) ^ salt_, 58) << 6) | (id & 63);
      case key_universe::hashed: return (id + 1) * 11400714819323198393ull;
      case key_universe::slots: return id;
    }
    return id;
  }

 private:
  key_universe u_;
  uint64_t salt_;  // sparse/clustered: which random placement (fixed per --seed)
};

// The value stored with a key: derived from it, so a lookup can be checked.
inline uint64_t value_of(uint64_t key) noexcept { return key * 0x2545F4914F6CDD1Dull + 1; }

}  // namespace pmindex::bench
