// Key grammars: how the generated string datasets (names, wiki, urls) turn a
// record id into a key, without storing any key.
//
// A grammar is a list of templates ("Word_word", "https://www.W.tld/W/W.html",
// ...). A template is a sequence of fields, each with a radix: a literal (1),
// a vocabulary word (n words), a decimal number (n values) or a choice from a
// fixed list. A template with fields of radixes r1..rk holds r1*...*rk keys
// (its "space"); the grammar's key space is the templates' spaces laid end to
// end. A key is made in three bijective steps:
//
//   id --(keyed Feistel permutation of [0, size), from the seed)--> r
//   r  --(which template's range, then mixed radix)--> field values
//   field values --(rendering)--> bytes
//
// so distinct ids give distinct keys as long as rendering is injective, which
// each grammar guarantees by construction (see dataset_gen.cpp):
//   - a word is a syllable code, (consonant vowel)^s consonant, and starts
//     with a consonant, so a run of letters splits into words in one way
//     only (a word ends at the first consonant no vowel follows); its case
//     (lower, Capitalised, UPPER) is read back from the letters;
//   - a number is decimal without leading zeros;
//   - fields that could run together are kept apart by separator literals,
//     and no two templates of a grammar render the same separators, case
//     pattern and letter/digit runs (so the template is read back too).
// Template weights are the spaces: a grammar sets each template's radixes so
// that its share of the key space is the share of such keys in the real set.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pmindex::bench {

// A keyed bijection of [0, n): a balanced Feistel network on the smallest
// even number of bits covering n, cycle-walking back into range (fewer than
// four rounds of walking on average).
class feistel_perm {
 public:
  feistel_perm() = default;
  feistel_perm(uint64_t n, uint64_t seed);
  uint64_t operator()(uint64_t x) const noexcept;
  uint64_t size() const noexcept { return n_; }

 private:
  uint64_t once(uint64_t x) const noexcept;
  uint64_t n_ = 1;
  unsigned half_ = 1;
  uint64_t mask_ = 1;
  uint64_t keys_[4] = {};
};

// The vocabulary: word j of a field of n words (j < n). Words have 1 to 5
// syllables (3 to 11 letters); a field's n words are spread over the lengths
// (about 15% one syllable, 40% two, 30% three, 15% four; more when a length
// runs out) and over the letters.
class vocabulary_field {
 public:
  vocabulary_field() = default;
  // `salt` picks which words of each length the field uses (fields with few
  // words do not all use the same ones).
  explicit vocabulary_field(uint64_t n, uint64_t salt = 0);
  void append(uint64_t j, std::string& out) const;
  size_t max_len() const noexcept;
  uint64_t size() const noexcept { return n_; }
  static uint64_t capacity() noexcept;  // the most words a field can have

 private:
  uint64_t n_ = 0;
  uint64_t count_[5] = {};  // words of 1..5 syllables
  uint64_t offset_[5] = {};
};

enum class casing : uint8_t { lower, capital, upper };

struct field {
  enum class kind : uint8_t { literal, word, number, choice } k = kind::literal;
  uint64_t radix = 1;  // 0 while unsolved (a "free" field, see grammar::add)
  std::string text;                // literal
  casing cs = casing::lower;       // word
  uint64_t lo = 0;                 // number: lo .. lo + radix - 1
  std::vector<std::string> list;   // choice
  vocabulary_field vocab;          // word (set by grammar::finish)
};

// Field constructors for grammar definitions. radix 0: solved by the grammar
// so that the template gets its weight.
field lit(std::string s);
field word(uint64_t radix, casing c = casing::lower);
field num(uint64_t lo, uint64_t radix);
field choice(std::vector<std::string> list);

class grammar {
 public:
  // `target`: about how many keys the grammar should hold; each template's
  // free fields (radix 0) share the radix that gives it `weight` * target keys.
  explicit grammar(uint64_t target) : target_(target) {}
  void add(double weight, std::vector<field> fields);
  // Solves the free fields, lays the templates end to end; then usable.
  void finish();
  uint64_t size() const noexcept { return total_; }
  size_t max_len() const noexcept { return max_len_; }
  size_t templates() const noexcept { return t_.size(); }
  // The key at position r < size() (before the id permutation).
  void render(uint64_t r, std::string& out) const;

 private:
  struct templ {
    double weight;
    std::vector<field> f;
    uint64_t start = 0, space = 1;
  };
  uint64_t target_;
  uint64_t total_ = 0;
  size_t max_len_ = 0;
  std::vector<templ> t_;
};

}  // namespace pmindex::bench
