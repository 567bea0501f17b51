// pmindex_mcload: a small memcached load generator in the manner of
// mc-benchmark (the WORT paper's Memcached runs): C connections, each with
// one request in flight, SETs then GETs of 20-byte keys "foo_rand" + 12
// digits drawn uniformly from a key space, one epoll thread per --threads.
//
//   pmindex_mcload --port P [--host 127.0.0.1] [--conns 50] [--requests 1000000]
//                  [--keyspace 1000000] [--value-size 32] [--threads 1]
//                  [--phases set,get] [--label TEXT] [--sequential 1]
//
// Prints one JSON object per phase (requests, seconds, ops/s, p50/p99
// latency in microseconds, hits for GET); exits 1 on an unexpected reply.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct settings {
  std::string host = "127.0.0.1";
  int port = 11211;
  unsigned conns = 50;
  uint64_t requests = 1000000;
  uint64_t keyspace = 1000000;
  size_t value_size = 32;
  unsigned threads = 1;
  std::string phases = "set,get";
  std::string label;
  bool sequential = false;  // keys 0, 1, 2, ... (each once) instead of uniform
};

struct connection {
  int fd = -1;
  uint64_t rng = 0;
  std::string out, in;
  size_t sent = 0;
  clock_type::time_point started;
  bool busy = false;
};

std::atomic<uint64_t> g_issued{0};
std::atomic<bool> g_failed{false};

uint64_t next_rand(uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

int connect_to(const settings& st) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(st.port));
  inet_pton(AF_INET, st.host.c_str(), &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("connect");
    std::exit(2);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fcntl(fd, F_SETFL, O_NONBLOCK);
  return fd;
}

// Bytes of one complete reply at the front of `in`, 0 if incomplete, -1 if
// unexpected. A GET reply is "END" or "VALUE k f n" + data + "END".
long reply_length(const std::string& in, bool is_get, bool& hit) {
  size_t nl = in.find("\r\n");
  if (nl == std::string::npos) return 0;
  if (!is_get) return in.compare(0, nl, "STORED") == 0 ? static_cast<long>(nl + 2) : -1;
  if (in.compare(0, nl, "END") == 0) {
    hit = false;
    return static_cast<long>(nl + 2);
  }
  if (in.compare(0, 6, "VALUE ") != 0) return -1;
  size_t sp = in.rfind(' ', nl);
  size_t len = std::strtoull(in.c_str() + sp + 1, nullptr, 10);
  size_t total = nl + 2 + len + 2 + 5;
  if (in.size() < total) return 0;
  hit = true;
  return in.compare(total - 5, 5, "END\r\n") == 0 ? static_cast<long>(total) : -1;
}

void run_thread(const settings& st, unsigned nconns, bool is_get, std::vector<uint32_t>& lat, uint64_t& hits,
                unsigned seed) {
  int ep = epoll_create1(0);
  std::vector<connection> cs(nconns);
  std::string value(st.value_size, 'x');
  char key[32];
  auto issue = [&](connection& c) {
    uint64_t id = g_issued.fetch_add(1);
    if (id >= st.requests) return false;
    if (!st.sequential) id = next_rand(c.rng) % st.keyspace;
    std::snprintf(key, sizeof key, "foo_rand%012llu", static_cast<unsigned long long>(id));
    c.out.clear();
    if (is_get) {
      c.out.append("get ").append(key).append("\r\n");
    } else {
      c.out.append("set ").append(key).append(" 0 0 ").append(std::to_string(value.size())).append("\r\n");
      c.out.append(value).append("\r\n");
    }
    c.sent = 0;
    c.busy = true;
    c.started = clock_type::now();
    ssize_t k = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (k > 0) c.sent = static_cast<size_t>(k);
    return true;
  };
  unsigned active = 0;
  for (unsigned i = 0; i < nconns; ++i) {
    cs[i].fd = connect_to(st);
    cs[i].rng = 0x9E3779B97F4A7C15ull * (seed * 1000 + i + 1);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    if (issue(cs[i])) ++active;
  }
  std::vector<epoll_event> evs(nconns);
  char buf[65536];
  while (active > 0 && !g_failed) {
    int n = epoll_wait(ep, evs.data(), static_cast<int>(nconns), 1000);
    for (int e = 0; e < n; ++e) {
      connection& c = cs[evs[e].data.u32];
      if (c.sent < c.out.size()) {  // finish a large SET
        ssize_t k = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (k > 0) c.sent += static_cast<size_t>(k);
      }
      ssize_t k = recv(c.fd, buf, sizeof buf, 0);
      if (k <= 0) continue;
      c.in.append(buf, static_cast<size_t>(k));
      bool hit = false;
      long used = reply_length(c.in, is_get, hit);
      if (used < 0) {
        std::fprintf(stderr, "unexpected reply: %.60s\n", c.in.c_str());
        g_failed = true;
        break;
      }
      if (used == 0) continue;
      c.in.erase(0, static_cast<size_t>(used));
      lat.push_back(static_cast<uint32_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - c.started).count()));
      hits += hit;
      c.busy = false;
      if (!issue(c)) --active;
    }
  }
  for (auto& c : cs) close(c.fd);
  close(ep);
}

void phase(const settings& st, bool is_get) {
  g_issued = 0;
  std::vector<std::vector<uint32_t>> lat(st.threads);
  std::vector<uint64_t> hits(st.threads, 0);
  std::vector<std::thread> ts;
  auto t0 = clock_type::now();
  for (unsigned t = 0; t < st.threads; ++t) {
    unsigned n = st.conns / st.threads + (t < st.conns % st.threads ? 1 : 0);
    lat[t].reserve(st.requests / st.threads + 16);
    ts.emplace_back([&, t, n] { run_thread(st, n, is_get, lat[t], hits[t], t + (is_get ? 100 : 0)); });
  }
  for (auto& t : ts) t.join();
  double secs = std::chrono::duration<double>(clock_type::now() - t0).count();
  std::vector<uint32_t> all;
  uint64_t h = 0;
  for (unsigned t = 0; t < st.threads; ++t) {
    all.insert(all.end(), lat[t].begin(), lat[t].end());
    h += hits[t];
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0u : all[std::min(all.size() - 1, size_t(p * all.size()))];
  };
  std::printf(
      "{\"label\": \"%s\", \"phase\": \"%s\", \"conns\": %u, \"requests\": %zu, \"value_size\": %zu, "
      "\"keyspace\": %llu, \"seconds\": %.3f, \"ops_per_sec\": %.0f, \"p50_us\": %u, \"p99_us\": %u, "
      "\"hits\": %llu}\n",
      st.label.c_str(), is_get ? "get" : "set", st.conns, all.size(), st.value_size,
      static_cast<unsigned long long>(st.keyspace), secs, all.size() / secs, pct(0.5), pct(0.99),
      static_cast<unsigned long long>(h));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  settings st;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--host")
      st.host = v;
    else if (k == "--port")
      st.port = std::atoi(v.c_str());
    else if (k == "--conns")
      st.conns = static_cast<unsigned>(std::atoi(v.c_str()));
    else if (k == "--requests")
      st.requests = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--keyspace")
      st.keyspace = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--value-size")
      st.value_size = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--threads")
      st.threads = static_cast<unsigned>(std::atoi(v.c_str()));
    else if (k == "--phases")
      st.phases = v;
    else if (k == "--label")
      st.label = v;
    else if (k == "--sequential")
      st.sequential = v == "1";
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (st.conns == 0 || st.threads == 0 || st.keyspace == 0 || st.threads > st.conns) {
    std::fprintf(stderr, "need --conns >= --threads >= 1 and --keyspace >= 1\n");
    return 2;
  }
  size_t pos = 0;
  while (pos <= st.phases.size()) {
    size_t e = st.phases.find(',', pos);
    if (e == std::string::npos) e = st.phases.size();
    std::string p = st.phases.substr(pos, e - pos);
    if (p == "set")
      phase(st, false);
    else if (p == "get")
      phase(st, true);
    else if (!p.empty()) {
      std::fprintf(stderr, "unknown phase %s\n", p.c_str());
      return 2;
    }
    if (g_failed) return 1;
    pos = e + 1;
  }
  return 0;
}
