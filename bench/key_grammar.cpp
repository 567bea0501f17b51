#include "key_grammar.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pmindex/error.hpp"
#include "rng.hpp"

namespace pmindex::bench {

// ------------------------------------------------------------ permutation

feistel_perm::feistel_perm(uint64_t n, uint64_t seed) : n_(n ? n : 1) {
  unsigned bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n_) bits += 2;
  half_ = bits / 2;
  mask_ = (uint64_t{1} << half_) - 1;
  for (auto& k : keys_) k = splitmix64(seed);
}

uint64_t feistel_perm::once(uint64_t x) const noexcept {
  uint64_t l = x >> half_, r = x & mask_;
  for (uint64_t k : keys_) {
    uint64_t t = l ^ (mix64(r ^ k) & mask_);
    l = r;
    r = t;
  }
  return (l << half_) | r;
}

uint64_t feistel_perm::operator()(uint64_t x) const noexcept {
  // A permutation of [0, 2^bits) restricted to [0, n): follow the cycle of x
  // until it lands inside (it does: x itself is inside).
  do x = once(x);
  while (x >= n_);
  return x;
}

// ------------------------------------------------------------ vocabulary

namespace {

constexpr std::string_view k_consonants = "bcdfghjklmnprstvwxz";  // 19
constexpr std::string_view k_vowels = "aeiou";                    // 5
constexpr uint64_t k_nc = 19, k_nv = 5;
constexpr unsigned k_max_syllables = 5;

// Words of s syllables: 19^(s+1) * 5^s.
constexpr uint64_t bin_capacity(unsigned s) {
  uint64_t c = k_nc;
  for (unsigned i = 0; i < s; ++i) c *= k_nc * k_nv;
  return c;
}

// A stride coprime with m near m * 0.618: i -> i * stride mod m visits every
// word of a length once, neighbouring i far apart (varied letters).
uint64_t spread_stride(uint64_t m) {
  uint64_t s = static_cast<uint64_t>(static_cast<double>(m) * 0.6180339887) | 1;
  while (std::gcd(s, m) != 1) s += 2;
  return s % m ? s % m : 1;
}

}  // namespace

uint64_t vocabulary_field::capacity() noexcept {
  uint64_t c = 0;
  for (unsigned s = 1; s <= k_max_syllables; ++s) c += bin_capacity(s);
  return c;
}

vocabulary_field::vocabulary_field(uint64_t n, uint64_t salt) : n_(n) {
  for (unsigned s = 0; s < k_max_syllables; ++s) offset_[s] = mix64(salt + s) % bin_capacity(s + 1);
  if (n > capacity()) throw error(errc::usage, "key grammar: a word field of " + std::to_string(n) + " words");
  constexpr double share[k_max_syllables] = {0.15, 0.40, 0.30, 0.15, 0};
  uint64_t left = n;
  for (unsigned s = 0; s < k_max_syllables && left; ++s) {
    uint64_t want = static_cast<uint64_t>(share[s] * static_cast<double>(n));
    count_[s] = std::min({want, bin_capacity(s + 1), left});
    left -= count_[s];
  }
  // What a share left over (rounding, or a length that ran out) goes to the
  // shortest lengths with room first.
  for (unsigned s = 0; s < k_max_syllables && left; ++s) {
    uint64_t room = bin_capacity(s + 1) - count_[s];
    uint64_t take = std::min(room, left);
    count_[s] += take;
    left -= take;
  }
}

size_t vocabulary_field::max_len() const noexcept {
  size_t m = 0;
  for (unsigned s = 0; s < k_max_syllables; ++s)
    if (count_[s]) m = 2 * (s + 1) + 1;
  return m;
}

void vocabulary_field::append(uint64_t j, std::string& out) const {
  unsigned s = 0;
  while (j >= count_[s]) j -= count_[s++];
  const uint64_t cap = bin_capacity(s + 1);
  // j + offset stays a bijection of [0, cap) (mod cap), so does the stride.
  uint64_t x = static_cast<uint64_t>((static_cast<unsigned __int128>((j + offset_[s]) % cap) * spread_stride(cap)) % cap);
  // (consonant vowel)^(s+1) consonant, most significant syllable first.
  char w[2 * k_max_syllables + 1];
  size_t len = 2 * (s + 1) + 1;
  w[len - 1] = k_consonants[x % k_nc];
  x /= k_nc;
  for (size_t i = len - 1; i >= 2; i -= 2) {
    w[i - 1] = k_vowels[x % k_nv];
    x /= k_nv;
    w[i - 2] = k_consonants[x % k_nc];
    x /= k_nc;
  }
  out.append(w, len);
}

// ------------------------------------------------------------ fields

field lit(std::string s) {
  field f;
  f.k = field::kind::literal;
  f.text = std::move(s);
  return f;
}
field word(uint64_t radix, casing c) {
  field f;
  f.k = field::kind::word;
  f.radix = radix;
  f.cs = c;
  return f;
}
field num(uint64_t lo, uint64_t radix) {
  field f;
  f.k = field::kind::number;
  f.lo = lo;
  f.radix = radix;
  return f;
}
field choice(std::vector<std::string> list) {
  field f;
  f.k = field::kind::choice;
  f.radix = list.size();
  f.list = std::move(list);
  return f;
}

namespace {
size_t digits(uint64_t v) {
  size_t d = 1;
  while (v >= 10) v /= 10, ++d;
  return d;
}
}  // namespace

// ------------------------------------------------------------ grammar

void grammar::add(double weight, std::vector<field> fields) { t_.push_back({weight, std::move(fields)}); }

void grammar::finish() {
  total_ = 0;
  max_len_ = 0;
  for (size_t ti = 0; ti < t_.size(); ++ti) {
    auto& t = t_[ti];
    double fixed = 1;
    unsigned nfree = 0;
    for (auto& f : t.f) {
      if (f.radix) fixed *= static_cast<double>(f.radix);
      else ++nfree;
    }
    if (nfree) {
      double want = std::max(1.0, t.weight * static_cast<double>(target_) / fixed);
      auto r = static_cast<uint64_t>(std::llround(std::pow(want, 1.0 / nfree)));
      for (auto& f : t.f)
        if (!f.radix) f.radix = std::clamp<uint64_t>(r, 1, f.k == field::kind::word ? vocabulary_field::capacity() : r);
    }
    t.space = 1;
    size_t len = 0;
    for (size_t fi = 0; fi < t.f.size(); ++fi) {
      auto& f = t.f[fi];
      if (t.space > (uint64_t{1} << 62) / f.radix) throw error(errc::usage, "key grammar: a template too large");
      t.space *= f.radix;
      switch (f.k) {
        case field::kind::literal: len += f.text.size(); break;
        case field::kind::word:
          f.vocab = vocabulary_field(f.radix, ti * 1000 + fi);
          len += f.vocab.max_len();
          break;
        case field::kind::number: len += digits(f.lo + f.radix - 1); break;
        case field::kind::choice: {
          size_t m = 0;
          for (auto& s : f.list) m = std::max(m, s.size());
          len += m;
          break;
        }
      }
    }
    t.start = total_;
    total_ += t.space;
    max_len_ = std::max(max_len_, len);
  }
}

void grammar::render(uint64_t r, std::string& out) const {
  // The template whose range holds r (few templates: a linear walk).
  size_t i = 0;
  while (i + 1 < t_.size() && r >= t_[i + 1].start) ++i;
  const templ& t = t_[i];
  r -= t.start;
  out.clear();
  for (const field& f : t.f) {
    // Mixed radix, first field least significant.
    uint64_t v = r % f.radix;
    r /= f.radix;
    switch (f.k) {
      case field::kind::literal: out += f.text; break;
      case field::kind::word: {
        size_t at = out.size();
        f.vocab.append(v, out);
        if (f.cs == casing::capital) out[at] = static_cast<char>(out[at] - 'a' + 'A');
        if (f.cs == casing::upper)
          for (size_t k = at; k < out.size(); ++k) out[k] = static_cast<char>(out[k] - 'a' + 'A');
        break;
      }
      case field::kind::number: {
        char b[24];
        int n = std::snprintf(b, sizeof b, "%llu", static_cast<unsigned long long>(f.lo + v));
        out.append(b, static_cast<size_t>(n));
        break;
      }
      case field::kind::choice: out += f.list[v]; break;
    }
  }
}

}  // namespace pmindex::bench
