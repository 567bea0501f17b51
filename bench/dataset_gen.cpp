// The generated string datasets: names, wiki, urls (see dataset.hpp and
// key_grammar.hpp). Each is shaped like one of the real sets of the Part Two
// evaluation (VLDB'22): the same alphabet and length limit, a comparable
// length distribution and long shared prefixes where the real set has them.
// The words are a syllable code, not English; what an index sees (lengths,
// byte ranges, how far keys share prefixes, how they cluster when sorted) is
// what the grammars reproduce. `pmindex keys --dataset D` prints the figures.
//
// Why each grammar renders distinct keys for distinct field values (on top of
// the rules in key_grammar.hpp): within a template, neighbouring fields are
// split by a separator, by a letter/digit boundary, or by the word code;
// across templates, the comment at each template says what tells it apart.
#include "dataset_gen.hpp"

#include "key_grammar.hpp"
#include "rng.hpp"

namespace pmindex::bench {

namespace {

using c = casing;

// User names (Reddit-like): letters, digits, '_' and '-', at most 25 bytes.
grammar names_grammar() {
  grammar g(uint64_t{1} << 32);
  // No separator: told apart by case pattern and trailing digits. "throwaway"
  // is not a code word (two consonants), so it is not template 1 or 3.
  g.add(0.08, {word(0)});                                             // kavotenu
  g.add(0.14, {word(0, c::capital), word(0, c::capital)});            // KaboTunri
  g.add(0.22, {word(0), num(0, 10000)});                              // kabotun1987
  g.add(0.13, {word(0, c::capital), word(0, c::capital), num(0, 1000)});  // KaboTunri42
  g.add(0.04, {lit("throwaway"), num(0, 0)});                         // throwaway48213
  // One '_': letters after it (lower) or digits after an UPPER word.
  g.add(0.12, {word(0), lit("_"), word(0)});                          // kabo_tunri
  g.add(0.04, {word(0, c::upper), lit("_"), num(0, 100)});            // KABOTUN_42
  // Two '_': Reddit's generated names.
  g.add(0.16, {word(0, c::capital), lit("_"), word(0, c::capital), lit("_"), num(0, 10000)});  // Kabo_Tunri_4821
  // One '-'.
  g.add(0.07, {word(0), lit("-"), word(0)});                          // kabo-tunri
  g.finish();
  return g;
}

// Wikipedia titles: words joined by '_', at most 256 bytes.
grammar wiki_grammar() {
  grammar g(uint64_t{1} << 34);
  // k words, k = 1..7: told apart by the number of '_' and the case of the
  // words after the first. "List", "of", "in" are not code words.
  g.add(0.08, {word(0, c::capital)});                                              // Kabotun
  g.add(0.18, {word(0, c::capital), lit("_"), word(0)});                           // Kabo_tunri
  g.add(0.07, {word(0, c::capital), lit("_"), word(0, c::capital)});               // Kabo_Tunri
  g.add(0.15, {word(0, c::capital), lit("_"), word(0), lit("_"), word(0)});
  g.add(0.08, {word(0, c::capital), lit("_"), word(0, c::capital), lit("_"), word(0, c::capital)});
  g.add(0.09, {word(0, c::capital), lit("_"), word(0), lit("_"), word(0), lit("_"), word(0)});
  g.add(0.05, {word(0, c::capital), lit("_"), word(0), lit("_"), word(0), lit("_"), word(0), lit("_"), word(0)});
  {
    std::vector<field> f{word(0, c::capital)};
    for (int i = 0; i < 6; ++i) f.insert(f.end(), {lit("_"), word(0)});
    g.add(0.03, f);
  }
  // Disambiguation: "Kabo_(tunri)", "Kabo_Tunri_(sel)"; the '(' tells.
  g.add(0.08, {word(0, c::capital), lit("_("), word(0), lit(")")});
  g.add(0.05, {word(0, c::capital), lit("_"), word(0, c::capital), lit("_("), word(0), lit(")")});
  // Places: "Kabo,_Tunri"; lists: "List_of_kabo_tunri"; years: "1987_in_kabo".
  g.add(0.04, {word(0, c::capital), lit(",_"), word(0, c::capital)});
  g.add(0.05, {lit("List_of_"), word(0), lit("_"), word(0)});
  g.add(0.04, {num(1000, 1030), lit("_in_"), word(0)});
  // The long tail: 16 and 24 words (few choices per word, so these are rare).
  for (int k : {16, 24}) {
    std::vector<field> f{word(0, c::capital)};
    for (int i = 1; i < k; ++i) f.insert(f.end(), {lit("_"), word(0)});
    g.add(k == 16 ? 0.004 : 0.001, f);
  }
  g.finish();
  return g;
}

// Web-crawl URLs: at most 2029 bytes, mean about 71, long shared prefixes:
// half the URLs are on a few thousand big sites ("www." hosts, sections,
// then articles), the rest on many small sites (no "www.", a page or two).
grammar urls_grammar() {
  grammar g(uint64_t{1} << 50);
  const std::vector<std::string> tlds = {"com", "org", "net", "de", "uk", "io", "info", "fr", "ru", "jp", "nl", "edu"};
  // Hosts: a fixed list each (a crawl holds many pages per host), scheme
  // and domain chosen per host. Distinct names make distinct hosts; a big
  // site's host starts with "www." ("www" is not a code word, so big and
  // small sites never meet); a small site's host has exactly one '.'.
  const auto hosts = [&](size_t n, bool www, uint64_t salt) {
    const vocabulary_field names(2 * n, salt);
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t h = mix64(salt * 1000003 + i);
      std::string host = h & 1 ? "https://" : "http://";
      if (www) host += "www.";
      names.append(2 * i, host);
      if (!www && h % 5 == 0) {  // two-word names: "kabo-tunri.com"
        host += "-";
        names.append(2 * i + 1, host);
      }
      host += "." + (www ? tlds[(h >> 8) % 4] : tlds[(h >> 8) % tlds.size()]);
      out.push_back(std::move(host));
    }
    return choice(std::move(out));
  };
  const field big_hosts = hosts(400, true, 1), small_hosts = hosts(4000, false, 2);
  // A big site: one of its 16 sections, then what the template says.
  const auto big = [&](std::vector<field> path, double w) {
    std::vector<field> f{big_hosts, lit("/"), word(16)};
    f.insert(f.end(), path.begin(), path.end());
    g.add(w, f);
  };
  // Told apart by what follows the section: the separators of each path.
  const auto slug = [](int k) {
    std::vector<field> f{word(0)};
    for (int i = 1; i < k; ++i) f.insert(f.end(), {lit("-"), word(0)});
    return f;
  };
  const auto cat = [](std::vector<std::vector<field>> parts) {
    std::vector<field> f;
    for (auto& p : parts) f.insert(f.end(), p.begin(), p.end());
    return f;
  };
  big({lit("/"), word(0), lit(".html")}, 0.05);                                             // /sec/page.html
  big(cat({{lit("/"), word(256), lit("/")}, slug(6)}), 0.16);                                // /sec/topic/a-b-c-d-e-f
  big({lit("/"), num(100000, 0)}, 0.03);                                                    // /sec/4821932
  big({lit("/"), word(256), lit("/"), word(0), lit(".php?id="), num(0, 0)}, 0.06);
  big({lit("/"), word(256), lit("/"), word(0), lit("/"), word(0), lit("-"), word(0), lit("/")}, 0.06);
  big({lit("/"), num(2000, 25), lit("/"), num(1, 12), lit("/"), word(0), lit("_"), word(0), lit(".html")}, 0.06);
  big({lit("?q="), word(0), lit("+"), word(0), lit("&page="), num(1, 50)}, 0.03);
  big(cat({{lit("/")}, slug(5),
           {lit(".html?utm_source="), word(64), lit("&utm_medium="), word(8), lit("&utm_campaign="), word(0)}}),
      0.09);
  big({lit("/index.php?option=com_"), word(32), lit("&view="), word(8), lit("&id="), num(0, 0), lit("&Itemid="),
       num(100, 900)},
      0.04);
  // Small sites: the path's separators tell the templates apart; a
  // subdomain host has two '.'.
  const auto small = [&](std::vector<field> path, double w) {
    std::vector<field> f{small_hosts};
    f.insert(f.end(), path.begin(), path.end());
    g.add(w, f);
  };
  small({lit("/")}, 0.02);
  small({lit("/"), word(0)}, 0.05);
  small({lit("/"), word(0), lit("/"), word(0), lit(".html")}, 0.07);
  small({lit("/"), word(0), lit("/"), word(0), lit("/"), word(0)}, 0.07);
  small({lit("/"), word(0), lit(".php?"), word(0), lit("="), num(0, 0)}, 0.04);
  small(cat({{lit("/"), word(0), lit("/")}, slug(6), {lit("/")}}), 0.08);
  small(cat({{lit("/"), word(0), lit("/"), num(0, 0), lit("/")}, slug(4), {lit("?ref="), word(0)}}), 0.06);
  g.add(0.05, {choice({"http://", "https://"}), word(64), lit("."), word(8000), lit("."), choice(tlds), lit("/"),
               word(0)});
  // The long tail: tracking links, a fixed list of 20 or 140 parameters
  // (code words with numbers) after the page, the last value free.
  const vocabulary_field names(4096);
  for (int k : {20, 140}) {
    std::vector<field> f{small_hosts, lit("/"), word(0), lit("?")};
    std::string params;
    for (int i = 0; i < k; ++i) {
      names.append(static_cast<uint64_t>(i) * 97 % 4096, params);
      params += "=" + std::to_string(mix64(static_cast<uint64_t>(i)) % 1000000) + "&";
    }
    names.append(4095, params);
    params += "=";
    f.insert(f.end(), {lit(params), num(0, 0)});
    g.add(k == 20 ? 0.035 : 0.001, f);
  }
  g.finish();
  return g;
}

class grammar_dataset final : public dataset {
 public:
  grammar_dataset(std::string name, grammar g, uint64_t seed)
      : name_(std::move(name)), g_(std::move(g)), perm_(g_.size(), seed) {}
  const std::string& name() const noexcept override { return name_; }
  uint64_t size() const noexcept override { return g_.size(); }
  size_t max_key() const noexcept override { return g_.max_len(); }
  std::string_view key(uint64_t id, std::string& buf) const override {
    g_.render(perm_(id), buf);
    return buf;
  }

 private:
  std::string name_;
  grammar g_;
  feistel_perm perm_;
};

}  // namespace

std::unique_ptr<dataset> make_generated_dataset(const std::string& name, uint64_t seed) {
  const uint64_t s = mix64(seed ^ 0x6B65797365747321ull);
  if (name == "names") return std::make_unique<grammar_dataset>(name, names_grammar(), s);
  if (name == "wiki") return std::make_unique<grammar_dataset>(name, wiki_grammar(), s);
  if (name == "urls") return std::make_unique<grammar_dataset>(name, urls_grammar(), s);
  return nullptr;
}

}  // namespace pmindex::bench
