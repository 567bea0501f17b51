#include "dataset.hpp"

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
      : name_(std::move(name)), bytes_(as_bytes), map_(u, seed) {}
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

std::unique_ptr<dataset> make_dataset(const std::string& spec, uint64_t seed, key_universe universe) {
  if (spec == "u64") return std::make_unique<integer_dataset>(spec, false, universe, seed);
  if (spec == "u64-bytes") return std::make_unique<integer_dataset>(spec, true, universe, seed);
  throw error(errc::usage, "unknown dataset '" + spec + "' (datasets: " + dataset_names() + ")");
}

std::string dataset_names() { return "u64, u64-bytes"; }

void value_bytes(uint64_t id, size_t size, std::string& out) {
  out.resize(size);
  uint64_t x = mix64(id * 0x9E3779B97F4A7C15ull + size);
  for (size_t i = 0; i < size; i += 8) {
    size_t n = size - i < 8 ? size - i : 8;
    std::memcpy(out.data() + i, &x, n);
    x = mix64(x + 1);
  }
}

bool value_matches(uint64_t id, std::string_view v) {
  static thread_local std::string want;
  value_bytes(id, v.size(), want);
  return v == want;
}

}  // namespace pmindex::bench
