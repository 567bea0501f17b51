#include "plan.hpp"

#include <sys/statvfs.h>

#include <algorithm>

#include "pmindex/error.hpp"

namespace pmindex::bench {

std::vector<std::string> select_indexes(const std::string& list) {
  std::vector<std::string> out;
  if (list == "all") {
    for (auto& e : registered_indexes()) out.push_back(e->name);
    return out;
  }
  std::string cur;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || list[i] == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += list[i];
    }
  }
  for (auto& n : out)
    if (!find_index(n)) throw error(errc::usage, "unknown index '" + n + "' (see `pmindex list`)");
  return out;
}

fit fit_to_index(run_config& cfg, bool mode_given) {
  auto e = find_index(cfg.index);
  if (!e) return {"not registered"};
  const pm::mode m = cfg.base.mode.value_or(pm::mode::persist);
  if (!e->supports(m)) {
    if (!mode_given && e->supports(pm::mode::dram)) cfg.base.mode = pm::mode::dram;  // volatile baselines
    else return {"no mode " + std::string(pm::to_string(m)), true};
  }
  if (!e->ordered && cfg.range_threads) return {"unordered: no range queries (--range-threads)"};
  // An index with a key limit: the records must fit below it (`--index all`
  // skips it, a named one is an error).
  if (const uint64_t limit = key_limit(*e, cfg.base.params); limit && std::max(cfg.records, cfg.key_space) > limit)
    return {"takes keys below " + std::to_string(limit) + ", fewer than --records / --key-space (--params capacity=N)",
            true};
  if (!cfg.byte_path()) return {};
  if (!e->supports(key_kind::bytes)) return {"takes no byte keys (keys=bytes)"};
  const size_t longest = cfg.data ? cfg.data->max_key() : 8;
  if (longest > e->max_key)
    return {"takes keys up to " + std::to_string(e->max_key) + " bytes, dataset " + cfg.dataset + " has up to " +
            std::to_string(longest)};
  if (cfg.value_size > e->max_value)
    return {"takes values up to " + std::to_string(e->max_value) + " bytes, not " + std::to_string(cfg.value_size)};
  return {};
}

uint64_t default_pool_size(const run_config& cfg, const std::vector<workload>& phases) {
  double ins = 0;
  for (auto& w : phases) {
    double s = 0;
    for (double f : w.mix) s += f;
    ins = std::max(ins, w.mix[static_cast<unsigned>(op_type::insert)] / std::max(1e-9, s));
  }
  double est_ops = cfg.ops ? static_cast<double>(cfg.ops) : cfg.seconds * 4e6 * cfg.threads;
  double recs = static_cast<double>(cfg.records) + ins * est_ops;
  if (cfg.parallel == parallel_mode::instance) recs = static_cast<double>(cfg.records) + ins * est_ops / cfg.threads;
  // Random inserts draw from the key space: at most key_space records.
  if (cfg.random_inserts) recs = static_cast<double>(std::max(cfg.records, cfg.key_space));
  // An index with a key limit (arraylist) reserves room for every key below
  // it when it is created.
  double per_record = index_entry::k_pool_bytes_per_record;  // (a plugin: no entry)
  if (auto e = find_index(cfg.index)) {
    if (const uint64_t limit = key_limit(*e, cfg.base.params)) recs = std::max(recs, static_cast<double>(limit));
    per_record = e->pool_bytes_per_record;
  }
  if (cfg.byte_path() && cfg.data) {
    // Mean key length over a sample of ids; keys and values may be stored
    // twice (a leaf and a copy-on-write, a key prefix and a suffix).
    std::string buf;
    const uint64_t n = std::min<uint64_t>(cfg.data->size(), 1000);
    double sum = 0;
    for (uint64_t i = 0; i < n; ++i) sum += static_cast<double>(cfg.data->key(i, buf).size());
    per_record += 2 * (sum / static_cast<double>(std::max<uint64_t>(n, 1)) + cfg.value_size);
  }
  uint64_t want = static_cast<uint64_t>(recs * per_record) + (uint64_t{64} << 20);
  want = std::max<uint64_t>(want, uint64_t{256} << 20);
  return (want + (uint64_t{1} << 20) - 1) & ~((uint64_t{1} << 20) - 1);
}

uint64_t cap_to_free_space(uint64_t want, const std::string& pool_path) {
  const auto slash = pool_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : pool_path.substr(0, slash);
  struct statvfs v {};
  if (statvfs(dir.c_str(), &v) != 0) return want;  // the create reports what is wrong with the path
  const uint64_t free = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  const uint64_t cap = std::max<uint64_t>(free / 10 * 9, uint64_t{256} << 20) & ~((uint64_t{1} << 20) - 1);
  return std::min(want, cap);
}

}  // namespace pmindex::bench
