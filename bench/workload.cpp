#include "workload.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pmindex/error.hpp"

namespace pmindex::bench {

std::string_view to_string(op_type t) noexcept {
  switch (t) {
    case op_type::read: return "read";
    case op_type::insert: return "insert";
    case op_type::update: return "update";
    case op_type::remove: return "remove";
    case op_type::scan: return "scan";
    case op_type::rmw: return "rmw";
  }
  return "?";
}

std::string_view to_string(distribution d) noexcept {
  switch (d) {
    case distribution::uniform: return "uniform";
    case distribution::selfsimilar: return "selfsimilar";
    case distribution::zipfian: return "zipfian";
    case distribution::latest: return "latest";
  }
  return "?";
}

std::optional<distribution> parse_distribution(std::string_view s) noexcept {
  for (auto d : {distribution::uniform, distribution::selfsimilar, distribution::zipfian, distribution::latest})
    if (to_string(d) == s) return d;
  return std::nullopt;
}

namespace {
workload make(const char* name, std::initializer_list<std::pair<op_type, double>> mix, distribution d) {
  workload w;
  w.name = name;
  std::fill(std::begin(w.mix), std::end(w.mix), 0.0);
  for (auto [t, f] : mix) w.mix[static_cast<unsigned>(t)] = f;
  w.dist = d;
  return w;
}
}  // namespace

// YCSB core workloads (workloads/workload{a..f} of YCSB): request
// distribution zipfian except D (latest); E's scan length is uniform in
// [1, 100]. pmemids_bench: 100% reads and 90% updates + 10% inserts, uniform
// (read100, update90insert10) and scrambled Zipfian as the study ran them
// (pmemids-read, pmemids-write).
std::optional<workload> preset(std::string_view name) {
  using enum op_type;
  if (name == "ycsb-a") return make("ycsb-a", {{read, 0.5}, {update, 0.5}}, distribution::zipfian);
  if (name == "ycsb-b") return make("ycsb-b", {{read, 0.95}, {update, 0.05}}, distribution::zipfian);
  if (name == "ycsb-c") return make("ycsb-c", {{read, 1.0}}, distribution::zipfian);
  if (name == "ycsb-d") return make("ycsb-d", {{read, 0.95}, {insert, 0.05}}, distribution::latest);
  if (name == "ycsb-e") {
    auto w = make("ycsb-e", {{scan, 0.95}, {insert, 0.05}}, distribution::zipfian);
    w.scan_size = 100;
    w.scan_uniform = true;
    return w;
  }
  if (name == "ycsb-f") return make("ycsb-f", {{read, 0.5}, {rmw, 0.5}}, distribution::zipfian);
  if (name == "read100") return make("read100", {{read, 1.0}}, distribution::uniform);
  if (name == "update90insert10")
    return make("update90insert10", {{update, 0.9}, {insert, 0.1}}, distribution::uniform);
  // The pmemids_bench study's workloads A and B: scrambled Zipfian (θ 0.99).
  if (name == "pmemids-read") return make("pmemids-read", {{read, 1.0}}, distribution::zipfian);
  if (name == "pmemids-write")
    return make("pmemids-write", {{update, 0.9}, {insert, 0.1}}, distribution::zipfian);
  return std::nullopt;
}

std::vector<std::string> preset_names() {
  return {"ycsb-a",  "ycsb-b",           "ycsb-c",       "ycsb-d",       "ycsb-e",
          "ycsb-f",  "read100",          "update90insert10", "pmemids-read", "pmemids-write"};
}

// A workload given as its mix, e.g. "read=0.9+insert=0.1" (uniform unless
// --distribution says otherwise); its name is the spec itself. A scan share
// may carry its own length, "scan=1:160", so that phases of one --same-index
// run can scan different lengths; it then wins over --scan-size.
namespace {
workload parse_mix(const std::string& spec) {
  workload w;
  w.name = spec;
  w.mix[0] = 0;
  const char* names[k_nops] = {"read", "insert", "update", "remove", "scan", "rmw"};
  double sum = 0;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find('+', pos);
    if (end == std::string::npos) end = spec.size();
    std::string part = spec.substr(pos, end - pos);
    size_t eq = part.find('=');
    unsigned i = 0;
    while (i < k_nops && (eq == std::string::npos || part.compare(0, eq, names[i]) != 0 ||
                                 std::strlen(names[i]) != eq))
      ++i;
    char* rest = nullptr;
    double v = eq == std::string::npos ? -1 : std::strtod(part.c_str() + eq + 1, &rest);
    if (i == static_cast<unsigned>(op_type::scan) && rest && *rest == ':') {
      char* len_end = nullptr;
      unsigned long long len = std::strtoull(rest + 1, &len_end, 10);
      if (len_end != rest + 1 && !*len_end && len >= 1 && len <= 100000) {
        w.scan_size = static_cast<uint32_t>(len);
        w.scan_size_given = true;
        rest = len_end;
      }
    }
    if (i == k_nops || !(v >= 0 && v <= 1) || (rest && *rest))
      throw error(errc::usage, "bad workload mix '" + spec + "' (e.g. read=0.9+insert=0.1 or scan=1:160; operations "
                               "read, insert, update, remove, scan[:length], rmw)");
    w.mix[i] = v;
    sum += v;
    pos = end + 1;
  }
  if (!(sum > 0)) throw error(errc::usage, "the workload mix '" + spec + "' is empty");
  return w;
}
}  // namespace

workload parse_workload(const std::string& spec) {
  if (spec.find('=') != std::string::npos) return parse_mix(spec);  // read=0.9+insert=0.1
  auto p = preset(spec);
  if (!p) {
    std::string known;
    for (auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw error(errc::usage, "unknown --workload '" + spec + "' (" + known + ")");
  }
  return *p;
}

std::string mix_string(const workload& w) {
  std::string s;
  for (unsigned i = 0; i < k_nops; ++i) {
    if (w.mix[i] <= 0) continue;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%s=%g", s.empty() ? "" : ",",
                  std::string(to_string(static_cast<op_type>(i))).c_str(), w.mix[i]);
    s += buf;
  }
  return s;
}

op_generator::op_generator(const params& p)
    : p_(p),
      r_(thread_seed(p.seed, p.thread, 1)),
      sample_r_(thread_seed(p.seed, p.thread, 2)),
      scramble_(mix64(p.seed ^ 0x5CA7B1E5ull)) {
  if (p_.key_space == 0) p_.key_space = p_.prefill ? p_.prefill : 1;
  double total = 0;
  for (double f : p_.w.mix) total += f;
  for (unsigned i = 0; i < k_nops; ++i) {
    share_[i] = total > 0 ? p_.w.mix[i] / total : (i == 0 ? 1 : 0);
    quota_[i] = 0;
  }
  // The hot set is the same for every thread: Zipfian ranks are scrambled
  // with a seed-wide constant, not the thread's.
  if (p_.w.dist == distribution::zipfian) zipf_.init(p_.key_space, p_.w.theta);
  if (p_.w.dist == distribution::selfsimilar) ss_.init(p_.key_space, p_.w.skew);
}

uint64_t op_generator::draw_id() {
  switch (p_.w.dist) {
    case distribution::uniform: return r_.below(p_.key_space);
    case distribution::selfsimilar: return ss_(r_);
    case distribution::zipfian: {
      // Scrambled Zipfian (YCSB): hot ranks spread over the id space.
      uint64_t rank = zipf_(r_);
      return mix64(rank ^ scramble_) % p_.key_space;
    }
    case distribution::latest: {
      // Recency rank 0 is this thread's newest insert (or the last prefill id).
      uint64_t rank = latest_zipf_(r_);
      if (rank < own_inserts_) return insert_id(own_inserts_ - 1 - rank);
      rank -= own_inserts_;
      return rank < p_.prefill ? p_.prefill - 1 - rank : r_.below(p_.key_space);
    }
  }
  return 0;
}

size_t op_generator::fill(op* out, size_t count) {
  if (exhausted_) return 0;
  if (p_.w.dist == distribution::latest) latest_zipf_.init(p_.prefill + own_inserts_, p_.w.theta);
  // Exact counts per type: each type carries its quota (share * ops so far
  // minus ops given); a batch gives floor(quota) of each, and the few slots
  // left go to the largest remainders. Every type's running count stays
  // within one operation of its exact share.
  size_t pos = 0;
  int64_t given[k_nops];
  size_t left = count;
  for (unsigned t = 0; t < k_nops; ++t) {
    quota_[t] += share_[t] * static_cast<double>(count);
    given[t] = quota_[t] > 0 ? static_cast<int64_t>(quota_[t]) : 0;
    if (static_cast<size_t>(given[t]) > left) given[t] = static_cast<int64_t>(left);
    left -= static_cast<size_t>(given[t]);
    quota_[t] -= static_cast<double>(given[t]);
  }
  while (left > 0) {
    unsigned best = 0;
    for (unsigned t = 1; t < k_nops; ++t)
      if (quota_[t] > quota_[best]) best = t;
    ++given[best];
    quota_[best] -= 1;
    --left;
  }
  for (unsigned t = 0; t < k_nops; ++t)
    for (int64_t i = 0; i < given[t]; ++i) out[pos++].type = static_cast<op_type>(t);
  for (; pos < count; ++pos) out[pos].type = op_type::read;  // unreachable: counts add up to count
  for (size_t i = count; i > 1; --i) std::swap(out[i - 1].type, out[r_.below(i)].type);
  generated_ += count;

  for (size_t i = 0; i < count; ++i) {
    op& o = out[i];
    o.len = 0;
    o.pad = 0;
    o.sampled = p_.sample_every && sample_r_.below(p_.sample_every) == 0;
    if (o.type == op_type::insert && !p_.random_inserts) {
      const uint64_t id = insert_id(own_inserts_);
      if (id >= p_.id_limit) {
        exhausted_ = true;
        return i;
      }
      ++own_inserts_;
      o.key = p_.emit_ids ? id : p_.keys(id);
      continue;
    }
    const uint64_t id = draw_id();
    o.key = p_.emit_ids ? id : p_.keys(id);
    if (o.type == op_type::scan)
      o.len = p_.w.scan_uniform ? 1 + static_cast<uint32_t>(r_.below(p_.w.scan_size)) : p_.w.scan_size;
  }
  return count;
}

}  // namespace pmindex::bench
