#include "key_stats.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace pmindex::bench {

key_stats measure_keys(const dataset& d, uint64_t seed, uint64_t n, size_t samples) {
  key_stats s;
  s.dataset = d.name();
  s.seed = seed;
  s.size = d.size();
  s.limit = d.max_key();
  n = std::min(n, d.size());
  s.keys = n;
  if (!n) return s;
  // One arena of key bytes (generated keys) plus a view per key; a file
  // dataset's views point into its own storage and the arena stays empty.
  std::string arena, buf;
  std::vector<std::pair<uint64_t, uint32_t>> at;  // arena offset (or ~0 + view index), length
  std::vector<std::string_view> views(n);
  std::vector<size_t> offs;
  bool copied = false;
  for (uint64_t id = 0; id < n; ++id) {
    std::string_view k = d.key(id, buf);
    if (k.data() == buf.data()) {  // generated into buf: keep a copy
      if (!copied) offs.assign(n, SIZE_MAX), copied = true;
      offs[id] = arena.size();
      arena.append(k);
      views[id] = std::string_view(nullptr, k.size());
    } else {
      views[id] = k;
    }
    if (id < samples) s.samples.emplace_back(k);
  }
  if (copied)
    for (uint64_t id = 0; id < n; ++id)
      if (offs[id] != SIZE_MAX) views[id] = std::string_view(arena.data() + offs[id], views[id].size());
  offs.clear();
  offs.shrink_to_fit();

  std::vector<uint64_t> by_len;
  for (auto v : views) {
    if (v.size() >= by_len.size()) by_len.resize(v.size() + 1, 0);
    ++by_len[v.size()];
    s.total_bytes += v.size();
  }
  s.mean_len = static_cast<double>(s.total_bytes) / static_cast<double>(n);
  uint64_t seen = 0;
  bool p50 = false, p99 = false, first = true;
  for (size_t len = 0; len < by_len.size(); ++len) {
    if (!by_len[len]) continue;
    if (first) s.min_len = len, first = false;
    seen += by_len[len];
    if (!p50 && seen * 2 >= n) s.p50_len = len, p50 = true;
    if (!p99 && seen * 100 >= n * 99) s.p99_len = len, p99 = true;
    s.max_len = len;
  }

  std::sort(views.begin(), views.end());
  uint64_t shared = 0;
  for (uint64_t i = 1; i < n; ++i) {
    const auto a = views[i - 1], b = views[i];
    size_t m = std::min(a.size(), b.size()), j = 0;
    while (j < m && a[j] == b[j]) ++j;
    shared += j;
    s.duplicates += a == b;
  }
  s.mean_prefix = n > 1 ? static_cast<double>(shared) / static_cast<double>(n - 1) : 0;
  return s;
}

namespace {
// Printable ASCII as is, other bytes as \xNN (binary keys, and JSON must
// stay valid UTF-8 whatever the key bytes are).
std::string printable(const std::string& x) {
  std::string shown;
  for (unsigned char c : x) {
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      shown += static_cast<char>(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      shown += b;
    }
  }
  return shown;
}
}  // namespace

json::value to_json(const key_stats& s) {
  auto j = json::value::object();
  j["dataset"] = s.dataset;
  j["seed"] = s.seed;
  j["keys"] = s.keys;
  j["dataset_size"] = s.size;
  j["max_key"] = static_cast<uint64_t>(s.limit);
  j["duplicates"] = s.duplicates;
  auto l = json::value::object();
  l["min"] = static_cast<uint64_t>(s.min_len);
  l["p50"] = static_cast<uint64_t>(s.p50_len);
  l["mean"] = s.mean_len;
  l["p99"] = static_cast<uint64_t>(s.p99_len);
  l["max"] = static_cast<uint64_t>(s.max_len);
  j["length"] = l;
  j["total_bytes"] = s.total_bytes;
  j["mean_shared_prefix"] = s.mean_prefix;
  auto a = json::value::array();
  for (auto& x : s.samples) a.push_back(printable(x));
  j["samples"] = a;
  return j;
}

std::string to_text(const key_stats& s) {
  char b[512];
  std::string o;
  std::snprintf(b, sizeof b, "dataset   %s (seed %" PRIu64 ")\n", s.dataset.c_str(), s.seed);
  o += b;
  std::snprintf(b, sizeof b, "keys      %" PRIu64 " (ids 0..%" PRIu64 " of %" PRIu64 "), %s\n", s.keys,
                s.keys ? s.keys - 1 : 0, s.size,
                s.duplicates ? (std::to_string(s.duplicates) + " DUPLICATES").c_str() : "all distinct");
  o += b;
  std::snprintf(b, sizeof b, "length    min %zu  p50 %zu  mean %.1f  p99 %zu  max %zu bytes (limit %zu)\n", s.min_len,
                s.p50_len, s.mean_len, s.p99_len, s.max_len, s.limit);
  o += b;
  std::snprintf(b, sizeof b, "prefix    %.1f bytes shared with the sorted predecessor, on average\n", s.mean_prefix);
  o += b;
  std::snprintf(b, sizeof b, "bytes     %" PRIu64 " in all\n", s.total_bytes);
  o += b;
  for (auto& x : s.samples) o += "sample    " + printable(x) + "\n";
  return o;
}

}  // namespace pmindex::bench
