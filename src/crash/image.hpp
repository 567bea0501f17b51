// Crash images: which state each candidate line takes in one image.
//
// A variant number names one image of a crash point. When the candidate
// lines have few combinations (<= k_enumerate_limit) the variant is the
// mixed-radix number of the choices, so a crash point can be checked
// exhaustively. Otherwise variant 0 keeps only durable values (every
// unfenced store lost), 1 keeps every current value (everything written
// back), and each variant >= 2 picks, per line, one state at random from a
// generator seeded by (seed, crash point, variant) — so it reproduces.
#pragma once

#include <cstdint>
#include <vector>

#include "rng.hpp"
#include "shadow.hpp"

namespace pmindex::crash {

inline constexpr uint64_t k_enumerate_limit = 16;


// Distinct images of a crash point, or k_enumerate_limit + 1 if more.
uint64_t combinations(const std::vector<candidate>& c);

// Writes variant v over the live memory (a forked child's copy of the pool).
void apply_variant(const std::vector<candidate>& c, uint64_t seed, uint64_t point, uint64_t v, char* base);

// Up to m distinct variants of a point with `combos` combinations; the
// first image of a point favours the extremes (all lost, all written back).
std::vector<uint64_t> pick_variants(uint64_t combos, uint64_t m, bench::rng& rng);

// Every variant worth checking at a point in exhaustive mode.
std::vector<uint64_t> all_variants(uint64_t combos, uint64_t random_extra);

}  // namespace pmindex::crash
