// A fixed log-linear latency histogram (the HdrHistogram idea): values below
// 2^k_sub_bits are exact; above, each power of two is split into
// 2^(k_sub_bits-1) equal buckets, so a percentile is off by at most 1/64 (1.6%) of its value.
// Fixed size (no allocation when recording), mergeable, and every query
// works on an empty histogram (percentiles of nothing are 0).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

namespace pmindex::bench {

class histogram {
 public:
  static constexpr unsigned k_sub_bits = 7;     // values < 128 exact, then 64 buckets per octave
  static constexpr unsigned k_max_bits = 44;    // values up to 2^44 ns (~4.9 hours)
  static constexpr unsigned k_sub = 1u << k_sub_bits;
  static constexpr unsigned k_half = k_sub / 2;
  static constexpr unsigned k_buckets = (k_max_bits - k_sub_bits + 1) * k_half + k_half;

  void record(uint64_t v) noexcept {
    ++counts_[bucket_of(v)];
    ++total_;
    sum_ += v;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }
  void merge(const histogram& o) noexcept {
    for (unsigned i = 0; i < k_buckets; ++i) counts_[i] += o.counts_[i];
    total_ += o.total_;
    sum_ += o.sum_;
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }
  uint64_t count() const noexcept { return total_; }
  uint64_t min() const noexcept { return total_ ? min_ : 0; }
  uint64_t max() const noexcept { return max_; }
  double mean() const noexcept { return total_ ? static_cast<double>(sum_) / total_ : 0; }

  // The smallest recorded-bucket value v such that a fraction q of the
  // samples is <= v (q in [0, 1]); the bucket's upper edge, clamped to
  // [min, max]. 0 when empty.
  uint64_t percentile(double q) const noexcept {
    if (!total_) return 0;
    if (q <= 0) return min();
    if (q >= 1) return max_;
    uint64_t rank = static_cast<uint64_t>(q * static_cast<double>(total_));
    if (static_cast<double>(rank) < q * static_cast<double>(total_)) ++rank;  // ceil
    if (rank == 0) rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < k_buckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::clamp(upper_edge(i), min(), max_);
    }
    return max_;
  }

  static unsigned bucket_of(uint64_t v) noexcept {
    if (v < k_sub) return static_cast<unsigned>(v);
    unsigned msb = 63 - static_cast<unsigned>(std::countl_zero(v));  // >= k_sub_bits
    if (msb >= k_max_bits) return k_buckets - 1;
    unsigned shift = msb - k_sub_bits + 1;
    // values [2^msb, 2^(msb+1)) have v >> shift in [k_half, k_sub): one of
    // k_half buckets of width 2^shift, after the k_sub exact ones.
    return shift * k_half + static_cast<unsigned>(v >> shift);
  }
  // The largest value that falls into bucket i.
  static uint64_t upper_edge(unsigned i) noexcept {
    if (i < k_sub) return i;
    unsigned shift = (i - k_sub) / k_half + 1;
    uint64_t top = (i - k_sub) % k_half + k_half;
    return ((top + 1) << shift) - 1;
  }

 private:
  std::array<uint64_t, k_buckets> counts_{};
  uint64_t total_ = 0, sum_ = 0;
  uint64_t min_ = UINT64_MAX, max_ = 0;
};

}  // namespace pmindex::bench
