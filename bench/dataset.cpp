#include "dataset.hpp"

#include "dataset_file.hpp"
#include "dataset_gen.hpp"

#include <cstdio>
#include <cstring>

#include "pmindex/error.hpp"
#include "pmindex/index.hpp"
#include "rng.hpp"

namespace pmindex::bench {

namespace {

// u64 and u64-bytes: the key universe's integer keys.
class integer_dataset final : public dataset {
 public:
  integer_dataset(std::string name, bool as_bytes, key_universe u, uint64_t seed)
      : name_(std::move(name)), bytes_(as_bytes), map_(u, key_salt(seed)) {}
  const std::string& name() const noexcept override { return name_; }
  bool integer_keys() const noexcept override { return !bytes_; }
  uint64_t size() const noexcept override { return uint64_t{1} << 63; }
  size_t max_key() const noexcept override { return 8; }
  std::string_view key(uint64_t id, std::string& buf) const override {
    buf.assign(std::string_view(key_bytes(map_(id))));
    return buf;
  }
  uint64_t key_u64(uint64_t id) const noexcept override { return map_(id); }

 private:
  std::string name_;
  bool bytes_;
  key_map map_;
};

}  // namespace

std::unique_ptr<dataset> make_dataset(const std::string& spec, uint64_t seed, key_universe universe, bool quiet) {
  if (spec == "u64") return std::make_unique<integer_dataset>(spec, false, universe, seed);
  if (spec == "u64-bytes") return std::make_unique<integer_dataset>(spec, true, universe, seed);
  if (auto d = make_generated_dataset(spec, seed)) return d;
  std::string path;
  std::string hint;
  if (spec == "words") {
    path = k_words_path;
    hint = " (the words dataset is Debian's word list: apt-get install wamerican-insane)";
  } else if (spec.rfind("file:", 0) == 0) {
    path = spec.substr(5);
    if (path.empty()) throw error(errc::usage, "dataset file: needs a path (file:PATH)");
  } else {
    throw error(errc::usage, "unknown dataset '" + spec + "' (datasets: " + dataset_names() + ")");
  }
  load_report rep;
  auto d = make_file_dataset(spec, path, seed, hint, &rep);
  if (!quiet) std::fprintf(stderr, "pmindex: dataset %s: %s\n", spec.c_str(), describe(rep).c_str());
  return d;
}

std::string dataset_names() { return "u64, u64-bytes, names, wiki, urls, words, file:PATH"; }

void value_bytes(uint64_t id, size_t size, std::string& out) {
  out.resize(size);
  uint64_t x = mix64(id * 0x9E3779B97F4A7C15ull + size);
  for (size_t i = 0; i < size; i += 8) {
    size_t n = size - i < 8 ? size - i : 8;
    std::memcpy(out.data() + i, &x, n);
    x = mix64(x + 1);
  }
}

void value_bytes(uint64_t id, uint64_t version, size_t size, std::string& out) {
  if (version == 0 || size <= 8) return value_bytes(id, size, out);
  out.resize(size);
  std::memcpy(out.data(), &version, 8);
  uint64_t x = mix64(mix64(id) ^ (version * 0xD1B54A32D192ED03ull));
  for (size_t i = 8; i < size; i += 8) {
    size_t n = size - i < 8 ? size - i : 8;
    std::memcpy(out.data() + i, &x, n);
    x = mix64(x + 1);
  }
}

bool value_check(uint64_t id, std::string_view v) {
  static thread_local std::string want;
  value_bytes(id, v.size(), want);
  if (v == want) return true;
  if (v.size() <= 8) return false;
  uint64_t version;
  std::memcpy(&version, v.data(), 8);
  if (version == 0) return false;
  value_bytes(id, version, v.size(), want);
  return v == want;
}

bool value_matches(uint64_t id, std::string_view v) {
  static thread_local std::string want;
  value_bytes(id, v.size(), want);
  return v == want;
}

}  // namespace pmindex::bench
