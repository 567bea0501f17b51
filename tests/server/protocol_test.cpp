// The protocol engine of `pmindex serve` driven directly (no sockets): exact
// replies for each command and each bad input, and a fuzz test that checks
// a std::map model through one session while another session is fed
// mangled commands in random pieces.
#include "protocol.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "pmindex/index.hpp"

namespace pmindex::server {
namespace {

struct fixture {
  std::unique_ptr<index> idx;
  std::unique_ptr<store> st;
  counters ctr;
  server_info info;
  explicit fixture(const std::string& name = "fptree", size_t max_item = 1000,
                   uint64_t pool_size = 64 << 20) {
    options o;
    o.index = name;
    o.mode = pm::mode::dram;
    o.pool_size = pool_size;
    o.params = "keys=bytes";
    o.quiet = true;
    idx = open(o);
    st = std::make_unique<store>(*idx, max_item);
  }
};

// Feeds `in` to a session the way the network layer does (in pieces of at
// most `piece` bytes, keeping what was not used) and returns all replies.
std::string run(session& s, const std::string& in, size_t piece = SIZE_MAX) {
  std::string buf, out;
  for (size_t pos = 0; pos < in.size() && !s.closing();) {
    size_t k = std::min(piece, in.size() - pos);
    buf.append(in, pos, k);
    pos += k;
    if (buf.size() < s.need()) continue;
    size_t used = s.feed(buf.data(), buf.size(), out);
    buf.erase(0, used);
  }
  while (s.busy()) buf.erase(0, s.feed(buf.data(), buf.size(), out));  // a streamed reply's rest
  return out;
}

std::string run(fixture& f, const std::string& in, size_t piece = SIZE_MAX) {
  session s(*f.st, f.ctr, f.info);
  return run(s, in, piece);
}

TEST(ServerProtocol, Base64RoundTrip) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 2000; ++i) {
    std::string in(rng() % 40, '\0');
    for (char& c : in) c = static_cast<char>(rng());
    std::string enc = base64_encode(in), dec;
    if (in.empty()) continue;
    ASSERT_TRUE(base64_decode(enc, dec)) << enc;
    EXPECT_EQ(dec, in);
  }
  std::string d;
  EXPECT_TRUE(base64_decode("Zm9v", d) && d == "foo");
  EXPECT_TRUE(base64_decode("Zm8=", d) && d == "fo");
  EXPECT_TRUE(base64_decode("Zg==", d) && d == "f");
  for (const char* bad : {"", "Zm9", "Zm9v!", "Z===", "=Zm9", "Zm=v", "Zm9v Zg=="}) EXPECT_FALSE(base64_decode(bad, d)) << bad;
}

TEST(ServerProtocol, BinaryRequestGetsAnErrorAndCloses) {
  fixture f;
  session s(*f.st, f.ctr, f.info);
  std::string req(24, '\0'), out;
  req[0] = static_cast<char>(0x80);
  req[1] = 0x0b;  // version
  req[12] = 1, req[13] = 2, req[14] = 3, req[15] = 4;
  EXPECT_EQ(s.feed(req.data(), 10, out), 0u);  // a header in pieces: wait for all 24 bytes
  EXPECT_EQ(s.need(), 24u);
  EXPECT_EQ(s.feed(req.data(), req.size(), out), req.size());
  EXPECT_TRUE(s.closing());
  ASSERT_GT(out.size(), 24u);
  EXPECT_EQ(static_cast<unsigned char>(out[0]), 0x81);
  EXPECT_EQ(out[1], 0x0b);
  EXPECT_EQ(out.substr(6, 2), std::string("\0\x81", 2));
  EXPECT_EQ(out.substr(12, 4), "\x01\x02\x03\x04");
}

TEST(ServerProtocol, RangeStreamsInPieces) {
  fixture f;
  f.info.scan_batch = 16;
  std::string fill;
  for (int i = 0; i < 500; ++i) fill += "set k" + std::to_string(1000 + i) + " 0 0 3\r\nabc\r\n";
  run(f, fill);
  const std::string cmd = "mr k v c\r\nmn\r\nmr k1100 L5 Hk1200\r\nmr azE0OTc= b\r\n";  // base64 of k1497
  std::string whole = run(f, cmd);
  session s(*f.st, f.ctr, f.info);
  std::string out, part;
  size_t used = 0, rounds = 0;
  do {  // at most ~100 bytes of replies per call, as if the client read slowly
    part.clear();
    used += s.feed(cmd.data() + used, cmd.size() - used, part, 100);
    out += part;
    ++rounds;
  } while (s.busy() || used < cmd.size());
  EXPECT_EQ(out, whole);
  EXPECT_GT(rounds, 20u);  // the reply came in parts
  EXPECT_EQ(std::count(whole.begin(), whole.end(), '\n'), 500 * 2 + 1 + 1 + 6 + 4);
  EXPECT_NE(whole.find("HD kk1104\r\nCN kk1105\r\n"), std::string::npos);
}

TEST(ServerProtocol, StorageAndRetrieval) {
  fixture f;
  EXPECT_EQ(run(f, "set a 5 0 3\r\nabc\r\nget a b\r\n"), "STORED\r\nVALUE a 5 3\r\nabc\r\nEND\r\n");
  EXPECT_EQ(run(f, "add a 0 0 1\r\nx\r\nadd b 1 0 1\r\ny\r\n"), "NOT_STORED\r\nSTORED\r\n");
  EXPECT_EQ(run(f, "replace c 0 0 1\r\nx\r\nreplace b 2 0 2\r\nzz\r\nget b\r\n"),
            "NOT_STORED\r\nSTORED\r\nVALUE b 2 2\r\nzz\r\nEND\r\n");
  EXPECT_EQ(run(f, "append a 9 0 2\r\nde\r\nprepend a 9 0 1\r\n_\r\nget a\r\n"),
            "STORED\r\nSTORED\r\nVALUE a 5 6\r\n_abcde\r\nEND\r\n");
  std::string g = run(f, "gets a\r\n");
  unsigned long long cas = std::stoull(g.substr(g.find(' ', 10) + 1));
  EXPECT_EQ(run(f, "cas a 1 0 1 " + std::to_string(cas + 1) + "\r\nq\r\n"), "EXISTS\r\n");
  EXPECT_EQ(run(f, "cas a 1 0 1 " + std::to_string(cas) + "\r\nq\r\nget a\r\n"),
            "STORED\r\nVALUE a 1 1\r\nq\r\nEND\r\n");
  EXPECT_EQ(run(f, "cas zz 1 0 1 1\r\nq\r\n"), "NOT_FOUND\r\n");
  EXPECT_EQ(run(f, "delete a\r\ndelete a\r\n"), "DELETED\r\nNOT_FOUND\r\n");
  EXPECT_EQ(run(f, "set n 0 0 2\r\n41\r\nincr n 1\r\ndecr n 50\r\nincr x 1\r\n"),
            "STORED\r\n42\r\n0\r\nNOT_FOUND\r\n");
  EXPECT_EQ(run(f, "incr b 1\r\n"), "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n");
  EXPECT_EQ(run(f, "touch b 100\r\ntouch x 1\r\n"), "TOUCHED\r\nNOT_FOUND\r\n");
  EXPECT_EQ(run(f, "set e 0 -1 1\r\nx\r\nget e\r\n"), "STORED\r\nEND\r\n");
  EXPECT_EQ(run(f, "flush_all\r\nget b n\r\n"), "OK\r\nEND\r\n");
  EXPECT_EQ(run(f, "set k 0 0 1 noreply\r\nx\r\nget k\r\n"), "VALUE k 0 1\r\nx\r\nEND\r\n");
  EXPECT_EQ(run(f, "version\r\nverbosity 1\r\n"),
            std::string("VERSION ") + std::string(k_version) + "\r\nOK\r\n");
  EXPECT_EQ(run(f, "get k\nquit\r\nget k\r\n"),
            "VALUE k 0 1\r\nx\r\nEND\r\n");  // bare \n; nothing after quit
}

TEST(ServerProtocol, BadInput) {
  fixture f;
  const std::string bad = "CLIENT_ERROR bad command line format\r\n";
  EXPECT_EQ(run(f, "\r\nnope\r\nget\r\nset a 0 0\r\n"), "ERROR\r\nERROR\r\nERROR\r\nERROR\r\n");
  EXPECT_EQ(run(f, "set a 0 0 -1\r\n"), bad);
  EXPECT_EQ(run(f, "set " + std::string(251, 'k') + " 0 0 1\r\nx\r\nget a\r\n"), bad + "END\r\n");
  EXPECT_EQ(run(f, "set a\x01 0 0 1\r\nx\r\nget a\r\n"), bad + "END\r\n");
  EXPECT_EQ(run(f, "set a 0 0 3\r\nabcdef\r\nget a\r\n"), "CLIENT_ERROR bad data chunk\r\nEND\r\n");
  EXPECT_EQ(run(f, "set a 0 0 1001\r\n" + std::string(1001, 'x') + "\r\nget a\r\n"),
            "SERVER_ERROR object too large for cache\r\nEND\r\n");
  EXPECT_EQ(run(f, "set a 0 0 600\r\n" + std::string(600, 'x') + "\r\nappend a 0 0 600\r\n" +
                       std::string(600, 'y') + "\r\n"),
            "STORED\r\nSERVER_ERROR object too large for cache\r\n");
  session s(*f.st, f.ctr, f.info);
  EXPECT_EQ(run(s, "get " + std::string(k_max_line + 10, 'k')), "CLIENT_ERROR line too long\r\n");
  EXPECT_TRUE(s.closing());
}

// --allow-control-keys (memaslap's keys): control characters pass, NUL (the
// server's own records) never does.
TEST(ServerProtocol, ControlKeysOnRequest) {
  fixture f;
  const std::string key("\x10\x10k", 3), nul("\0k", 2);
  EXPECT_EQ(run(f, "set " + key + " 0 0 1\r\nx\r\n"), "CLIENT_ERROR bad command line format\r\n");
  f.info.control_keys = true;
  EXPECT_EQ(run(f, "set " + key + " 0 0 1\r\nx\r\nget " + key + "\r\n"),
            "STORED\r\nVALUE " + key + " 0 1\r\nx\r\nEND\r\n");
  EXPECT_EQ(run(f, "set " + nul + " 0 0 1\r\nx\r\nget " + nul + "\r\n"),
            "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\n");
}

TEST(ServerProtocol, FullPoolLosesNothing) {
  fixture f("fptree", 100000, 8 << 20);
  session s(*f.st, f.ctr, f.info);
  std::string v(50000, 'v');
  int stored = 0;
  std::string r;
  for (; stored < 10000; ++stored) {
    r = run(s, "set k" + std::to_string(stored) + " 0 0 50000\r\n" + v + "\r\n");
    if (r != "STORED\r\n") break;
  }
  ASSERT_EQ(r, "SERVER_ERROR out of memory storing object\r\n");
  ASSERT_GT(stored, 0);
  for (int i = 0; i < stored; ++i)
    ASSERT_EQ(run(s, "get k" + std::to_string(i) + "\r\n"),
              "VALUE k" + std::to_string(i) + " 0 50000\r\n" + v + "\r\nEND\r\n");
  EXPECT_TRUE(f.idx->check().ok);
}

// A command of the valid mix with its expected reply from the model.
struct model {
  std::map<std::string, std::pair<std::string, uint32_t>> m;
};

TEST(ServerProtocol, FuzzAgainstModel) {
  unsigned seed = std::random_device{}();
  if (const char* e = std::getenv("PMINDEX_SEED")) seed = static_cast<unsigned>(std::stoul(e));
  SCOPED_TRACE("PMINDEX_SEED=" + std::to_string(seed));
  std::mt19937 rng(seed);
  fixture f("fptree", 4000);
  session good(*f.st, f.ctr, f.info);
  model md;
  auto rnd = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  const int rounds = std::getenv("PMINDEX_LONG") ? 20000 : 2000;
  for (int round = 0; round < rounds; ++round) {
    // One valid command on keys v0..v15, checked against the model, fed in pieces.
    std::string k = "v" + std::to_string(rnd(16)), in, want;
    auto it = md.m.find(k);
    switch (rnd(6)) {
      case 0: {
        std::string v(rnd(3000), static_cast<char>('a' + rnd(26)));
        if (rnd(4) == 0 && !v.empty()) v[rnd(v.size())] = '\n';
        uint32_t fl = rng();
        in = "set " + k + " " + std::to_string(fl) + " 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\n";
        want = "STORED\r\n";
        md.m[k] = {v, fl};
        break;
      }
      case 1:
        in = "get " + k + "\r\n";
        want = it == md.m.end()
                   ? "END\r\n"
                   : "VALUE " + k + " " + std::to_string(it->second.second) + " " +
                         std::to_string(it->second.first.size()) + "\r\n" + it->second.first + "\r\nEND\r\n";
        break;
      case 2:
        in = "delete " + k + "\r\n";
        want = it == md.m.end() ? "NOT_FOUND\r\n" : "DELETED\r\n";
        md.m.erase(k);
        break;
      case 3: {
        std::string v(rnd(100), 'z');
        in = "append " + k + " 0 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\n";
        if (it == md.m.end())
          want = "NOT_STORED\r\n";
        else if (it->second.first.size() + v.size() > 4000)
          want = "SERVER_ERROR object too large for cache\r\n";
        else {
          want = "STORED\r\n";
          it->second.first += v;
        }
        break;
      }
      case 4: {
        std::string v = std::to_string(rnd(1000));
        in = "add " + k + " 7 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\n";
        want = it == md.m.end() ? "STORED\r\n" : "NOT_STORED\r\n";
        if (it == md.m.end()) md.m[k] = {v, 7};
        break;
      }
      default: {
        in = "incr " + k + " 3\r\n";
        if (it == md.m.end()) {
          want = "NOT_FOUND\r\n";
        } else {
          const std::string& d = it->second.first;
          bool num = !d.empty() && d.size() <= 19 && d.find_first_not_of("0123456789") == std::string::npos;
          if (!num) {
            want = "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n";
          } else {
            it->second.first = std::to_string(std::stoull(d) + 3);
            want = it->second.first + "\r\n";
          }
        }
      }
    }
    ASSERT_EQ(run(good, in, 1 + rnd(64)), want) << "round " << round << ": " << in.substr(0, 80);

    // Mangled commands on keys g*, fed to a fresh session in random pieces:
    // replies must be well-formed lines and the model's keys untouched.
    static const char* k_cmds[] = {"get g1 g2", "set g1 0 0 5", "cas g2 0 0 3 9",   "append g1 0 0 4",
                                   "incr g1 5", "delete g2 0",  "touch g1 10",      "set g3 1 2 100000",
                                   "stats",     "decr g2 99",   "prepend g2 0 0 2", "gets g3"};
    std::string junk;
    for (int j = 0, n = 1 + rnd(8); j < n; ++j) {
      std::string c = k_cmds[rnd(sizeof k_cmds / sizeof *k_cmds)];
      for (int m = rnd(4); m > 0; --m) c[rnd(c.size())] = " \r\n\x00x9-"[rnd(8)];
      junk += c + (rnd(3) ? "\r\n" : "\n");
      for (int m = rnd(40); m > 0; --m)
        junk.push_back(rnd(5) ? static_cast<char>('A' + rnd(26)) : "\r\n "[rnd(3)]);
    }
    session bad(*f.st, f.ctr, f.info);
    std::string out = run(bad, junk, 1 + rnd(32));
    for (size_t pos = 0; pos < out.size();) {
      size_t nl = out.find("\r\n", pos);
      ASSERT_NE(nl, std::string::npos) << "partial reply: " << out.substr(pos);
      std::string line = out.substr(pos, nl - pos);
      pos = nl + 2;
      static const char* k_ok[] = {"VALUE ",        "END",           "STORED",  "NOT_STORED", "EXISTS",
                                   "NOT_FOUND",     "DELETED",       "TOUCHED", "OK",         "ERROR",
                                   "CLIENT_ERROR ", "SERVER_ERROR ", "STAT ",   "VERSION "};
      bool ok = !line.empty() && line.find_first_not_of("0123456789") == std::string::npos;
      for (const char* p : k_ok) ok = ok || line.rfind(p, 0) == 0;
      ASSERT_TRUE(ok) << "round " << round << " reply '" << line << "' to: " << junk;
      if (line.rfind("VALUE ", 0) == 0) {  // VALUE <key> <flags> <bytes> [<cas>]
        size_t a = line.find(' ', 6), b = line.find(' ', a + 1);
        pos += std::stoull(line.substr(b + 1)) + 2;
      }
    }
  }
  for (auto& [k, v] : md.m)
    ASSERT_EQ(run(good, "get " + k + "\r\n"), "VALUE " + k + " " + std::to_string(v.second) + " " +
                                                  std::to_string(v.first.size()) + "\r\n" + v.first +
                                                  "\r\nEND\r\n");
  EXPECT_TRUE(f.idx->check().ok);
}

}  // namespace
}  // namespace pmindex::server
