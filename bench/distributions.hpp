// Access distributions over ranks [0, n): uniform, self-similar, Zipfian.
// Each draws a rank; the workload turns it into a record id (scrambled for
// Zipfian) and the key universe turns the id into a key.
//
// Zipfian (Gray et al., "Quickly Generating Billion-Record Synthetic
// Databases", SIGMOD'94, the generator YCSB uses): rank r has probability
// (1/(r+1)^theta) / zeta(n, theta). The generator needs zeta(n, theta) =
// sum_{i=1..n} i^-theta, which YCSB computes by an O(n) loop: minutes for
// n = 2^40 and impossible for 2^63. Here zeta is the exact sum of the first
// k_exact terms plus the Euler-Maclaurin estimate of the rest:
//   sum_{i=K..n} f(i) ~= int_K^n f + (f(K) + f(n))/2 + (f'(n) - f'(K))/12
// with f(x) = x^-theta. The first omitted term is of order f'''(K)/720, under
// 1e-13 relative for K = 1024, so setup is constant time (microseconds) for
// any n up to 2^64 and the draws are indistinguishable from the exact ones.
//
// Self-similar (same paper): rank = n * u^(log(h)/log(1-h)); with h = 0.2,
// 80% of the draws go to the first 20% of the ranks, recursively.
#pragma once

#include <cmath>
#include <cstdint>

#include "rng.hpp"

namespace pmindex::bench {

// zeta(n, theta) = sum_{i=1..n} i^-theta, exact up to k_exact terms,
// Euler-Maclaurin beyond. theta in (0, 1) U (1, inf); theta = 1 uses log.
inline double zeta(double n, double theta) {
  constexpr double k_exact = 1024;
  double s = 0;
  const double top = n < k_exact ? n : k_exact - 1;
  for (double i = 1; i <= top; i += 1) s += std::pow(i, -theta);
  if (n < k_exact) return s;
  const double a = k_exact;
  auto f = [&](double x) { return std::pow(x, -theta); };
  auto df = [&](double x) { return -theta * std::pow(x, -theta - 1); };
  double integral = theta == 1.0 ? std::log(n / a)
                                 : (std::pow(n, 1 - theta) - std::pow(a, 1 - theta)) / (1 - theta);
  return s + integral + (f(a) + f(n)) / 2 + (df(n) - df(a)) / 12;
}

class zipfian {
 public:
  // Ranks [0, n), skew theta (YCSB: 0.99). Constant-time setup.
  explicit zipfian(uint64_t n = 1, double theta = 0.99) { init(n, theta); }
  void init(uint64_t n, double theta) {
    n_ = n ? n : 1;
    theta_ = theta;
    const double nd = static_cast<double>(n_);
    zetan_ = zeta(nd, theta);
    const double zeta2 = 1 + std::pow(2.0, -theta);
    alpha_ = 1 / (1 - theta);
    eta_ = (1 - std::pow(2.0 / nd, 1 - theta)) / (1 - zeta2 / zetan_);
    half_pow_theta_ = 1 + std::pow(0.5, theta);
  }
  uint64_t n() const noexcept { return n_; }
  double zetan() const noexcept { return zetan_; }

  uint64_t operator()(rng& r) const noexcept {
    const double u = r.unit();
    const double uz = u * zetan_;
    if (uz < 1) return 0;
    if (uz < half_pow_theta_ || n_ < 3) return n_ > 1 ? 1 : 0;
    const double v = static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1, alpha_);
    // v < n in exact arithmetic; clamp the rounding at the top of 2^63-sized ranges.
    if (!(v < static_cast<double>(n_))) return n_ - 1;
    uint64_t rank = static_cast<uint64_t>(v);
    return rank < n_ ? rank : n_ - 1;
  }

 private:
  uint64_t n_ = 1;
  double theta_ = 0.99, zetan_ = 1, alpha_ = 1, eta_ = 1, half_pow_theta_ = 1;
};

class selfsimilar {
 public:
  explicit selfsimilar(uint64_t n = 1, double h = 0.2) { init(n, h); }
  void init(uint64_t n, double h) {
    n_ = n ? n : 1;
    exp_ = std::log(h) / std::log(1 - h);
  }
  uint64_t operator()(rng& r) const noexcept {
    double v = static_cast<double>(n_) * std::pow(r.unit(), exp_);
    if (!(v < static_cast<double>(n_))) return n_ - 1;
    uint64_t rank = static_cast<uint64_t>(v);
    return rank < n_ ? rank : n_ - 1;
  }

 private:
  uint64_t n_ = 1;
  double exp_ = 1;
};

}  // namespace pmindex::bench
