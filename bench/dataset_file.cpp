// Datasets read from a file: `file:PATH` (newline-separated keys, .gz read
// through zlib) and `words` (Debian's wamerican-insane word list). See
// dataset.hpp for the rules; docs/bench.md for the errors and exit codes.
//
// Memory: the file's bytes are held once, in blocks of 64 MiB that never
// move (no reallocation doubling a 4 GB set), and each key is one 8-byte
// word (block, offset, length) pointing into them. key() returns a view of
// the block: nothing is copied.
#include "dataset_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

#include <vector>

#include "pmindex/error.hpp"
#include "rng.hpp"

namespace pmindex::bench {

namespace {

constexpr size_t k_block = size_t{64} << 20;
constexpr size_t k_max_line = 65535;

// (block << 48) | (offset << 16) | length.
inline uint64_t pack(size_t block, size_t off, size_t len) {
  return (uint64_t{block} << 48) | (uint64_t{off} << 16) | len;
}

class file_dataset final : public dataset {
 public:
  file_dataset(std::string name, const std::string& path, uint64_t seed, const std::string& missing_hint)
      : name_(std::move(name)) {
    load(path, missing_hint);
    dedup_and_shuffle(seed);
  }
  const std::string& name() const noexcept override { return name_; }
  uint64_t size() const noexcept override { return keys_.size(); }
  size_t max_key() const noexcept override { return max_len_; }
  std::string_view key(uint64_t id, std::string&) const override { return view(keys_[id]); }
  const load_report& report() const noexcept { return rep_; }

 private:
  std::string_view view(uint64_t e) const noexcept {
    return {blocks_[e >> 48].get() + ((e >> 16) & 0xFFFFFFFFu), static_cast<size_t>(e & 0xFFFF)};
  }

  void load(const std::string& path, const std::string& missing_hint) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
      throw error(errc::missing_file, "dataset " + name_ + ": cannot open " + path + ": " + std::strerror(errno) +
                                          missing_hint);
    if (S_ISDIR(st.st_mode)) throw error(errc::usage, "dataset " + name_ + ": " + path + " is a directory");
    // gzread reads plain files as they are, so one reader serves both.
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) throw error(errc::io, "dataset " + name_ + ": cannot open " + path + ": " + std::strerror(errno));
    struct closer {
      gzFile f;
      ~closer() { gzclose(f); }
    } guard{f};
    gzbuffer(f, 1 << 20);
    size_t used = 0;     // bytes in cur_
    size_t line_at = 0;  // where the unfinished line starts in cur_
    uint64_t line_no = 1;
    const auto where = [&] { return "dataset " + name_ + ": " + path + " line " + std::to_string(line_no); };
    for (;;) {
      if (!cur_ || used == k_block) {
        // A new block; the unfinished line moves along with it.
        auto next = std::make_unique<char[]>(k_block);
        size_t carry = cur_ ? used - line_at : 0;
        if (carry) std::memcpy(next.get(), cur_.get() + line_at, carry);
        if (cur_) blocks_.push_back(std::move(cur_));
        if (blocks_.size() >= 65535) throw error(errc::usage, "dataset " + name_ + ": " + path + " is over 4 TiB");
        cur_ = std::move(next);
        used = carry;
        line_at = 0;
      }
      int got = gzread(f, cur_.get() + used, static_cast<unsigned>(k_block - used));
      if (got < 0) {
        int code = 0;
        const char* m = gzerror(f, &code);
        throw error(code == Z_ERRNO ? errc::io : errc::usage,
                    "dataset " + name_ + ": cannot read " + path + ": " +
                        (code == Z_ERRNO ? std::string(std::strerror(errno)) : std::string("corrupt gzip data (") + m + ")"));
      }
      const char* b = cur_.get();
      for (size_t i = used; i < used + static_cast<size_t>(got); ++i) {
        // A NUL is binary data: this is not a file of keys, one a line.
        if (b[i] == '\0') throw error(errc::usage, where() + ": a NUL byte (binary data, not a file of keys, one a line)");
        if (b[i] != '\n') continue;
        if (i - line_at > k_max_line + 1) break;  // reported below
        add_line(line_at, i);
        ++line_no;
        line_at = i + 1;
      }
      used += static_cast<size_t>(got);
      if (got == 0 && line_at < used && used - line_at <= k_max_line) {  // the last line has no newline
        add_line(line_at, used);
        line_at = used;
      }
      if (used - line_at > k_max_line)
        throw error(errc::usage, where() + " is longer than " + std::to_string(k_max_line) +
                                     " bytes (binary data, or not one key a line)");
      if (got == 0) break;
    }
    blocks_.push_back(std::move(cur_));
    if (keys_.empty())
      throw error(errc::usage, "dataset " + name_ + ": " + path + " holds no keys (an empty file, or only empty lines)");
  }

  // cur_[from, to) is a line (without its '\n'); a '\r' before the newline
  // is dropped (files written on Windows); empty lines are skipped.
  void add_line(size_t from, size_t to) {
    if (to > from && cur_[to - 1] == '\r') --to;
    if (to - from > k_max_line) throw error(errc::usage, "dataset " + name_ + ": a line over 65535 bytes");
    if (to == from) {
      ++rep_.empty_lines;
      return;
    }
    keys_.push_back(pack(blocks_.size(), from, to - from));
  }

  void dedup_and_shuffle(uint64_t seed) {
    // Sorted, duplicates dropped, then shuffled by the seed: ids are a
    // random order of the distinct keys, reproducible from --seed.
    std::sort(keys_.begin(), keys_.end(), [&](uint64_t a, uint64_t b) { return view(a) < view(b); });
    size_t n = 0;
    for (size_t i = 0; i < keys_.size(); ++i)
      if (n == 0 || view(keys_[i]) != view(keys_[n - 1])) keys_[n++] = keys_[i];
    rep_.duplicates = keys_.size() - n;
    keys_.resize(n);
    keys_.shrink_to_fit();
    rng r(mix64(seed ^ 0x66696C656B657973ull));
    for (size_t i = n; i > 1; --i) std::swap(keys_[i - 1], keys_[r.below(i)]);
    std::vector<uint64_t> by_len(k_max_line + 1, 0);
    rep_.keys = n;
    for (uint64_t e : keys_) {
      ++by_len[e & 0xFFFF];
      rep_.total_bytes += e & 0xFFFF;
    }
    uint64_t seen = 0;
    bool p50 = false, p99 = false;
    for (size_t len = 0; len <= k_max_line; ++len) {
      if (!by_len[len]) continue;
      if (!seen) rep_.min_len = len;
      seen += by_len[len];
      if (!p50 && seen * 2 >= n) rep_.p50_len = len, p50 = true;
      if (!p99 && seen * 100 >= n * 99) rep_.p99_len = len, p99 = true;
      rep_.max_len = len;
    }
    max_len_ = rep_.max_len;
  }

  std::string name_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::unique_ptr<char[]> cur_;  // the block being filled while loading
  std::vector<uint64_t> keys_;
  size_t max_len_ = 0;
  load_report rep_;
};

}  // namespace

std::unique_ptr<dataset> make_file_dataset(const std::string& name, const std::string& path, uint64_t seed,
                                           const std::string& missing_hint, load_report* rep) {
  auto d = std::make_unique<file_dataset>(name, path, seed, missing_hint);
  if (rep) *rep = d->report();
  return d;
}

std::string describe(const load_report& r) {
  char b[256];
  std::snprintf(b, sizeof b,
                "%" PRIu64 " keys (%" PRIu64 " duplicates and %" PRIu64
                " empty lines dropped), length min %zu, p50 %zu, mean %.1f, p99 %zu, max %zu bytes",
                r.keys, r.duplicates, r.empty_lines, r.min_len, r.p50_len,
                r.keys ? static_cast<double>(r.total_bytes) / static_cast<double>(r.keys) : 0.0, r.p99_len, r.max_len);
  return b;
}

}  // namespace pmindex::bench
