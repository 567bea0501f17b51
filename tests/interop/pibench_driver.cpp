// A stand-in for PiBench master's driver: dlopen()s a wrapper library, makes
// a tree through create_tree and runs insert / find / update / remove / scan
// through master_tree_api.hpp, checking every answer against a std::map.
// Built without any pmindex header. Exit 0: every answer right; 1: a wrong
// answer (printed); a wrapper in another layout usually crashes instead.
// usage: pibench_driver LIB.so POOL [KEY_SIZE VALUE_SIZE]
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "master_tree_api.hpp"

namespace {

int failures = 0;
void expect(bool ok, const char* what, size_t i) {
  if (ok) return;
  if (++failures <= 10) std::printf("FAIL: %s (record %zu)\n", what, i);
}

// Key i: its 8 big-endian bytes (PiBench's layout) padded with 'k' to ks.
std::string key_of(size_t i, size_t ks) {
  std::string k(ks, 'k');
  uint64_t x = (i * 2654435761u) % 1000003u;  // not inserted in key order
  for (size_t b = 0; b < 8 && b < ks; ++b) k[b] = static_cast<char>((x >> (56 - 8 * b)) & 0xff);
  return k;
}
std::string value_of(size_t i, size_t vs, int version) {
  std::string v(vs, 0);
  for (size_t b = 0; b < vs; ++b) v[b] = static_cast<char>('a' + (i + b + static_cast<size_t>(version) * 7) % 26);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr, "usage: %s LIB.so POOL [KEY_SIZE VALUE_SIZE]\n", argv[0]);
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::printf("FAIL: dlopen: %s\n", dlerror());
    return 1;
  }
  auto create = reinterpret_cast<tree_api* (*)(const tree_options_t&)>(dlsym(h, "create_tree"));
  if (!create) {
    std::printf("FAIL: no create_tree\n");
    return 1;
  }
  tree_options_t o;
  o.key_size = argc == 5 ? std::strtoul(argv[3], nullptr, 10) : 8;
  o.value_size = argc == 5 ? std::strtoul(argv[4], nullptr, 10) : 8;
  o.pool_path = argv[2];
  o.pool_size = size_t{64} << 20;
  o.num_threads = 1;
  std::unique_ptr<tree_api> t(create(o));
  if (!t) {
    std::printf("FAIL: create_tree returned null\n");
    return 1;
  }
  const size_t n = 2000, ks = o.key_size, vs = o.value_size;
  std::map<std::string, std::string> oracle;
  std::string out(vs, 0);
  for (size_t i = 0; i < n; ++i) {
    std::string k = key_of(i, ks), v = value_of(i, vs, 0);
    expect(t->insert(k.data(), ks, v.data(), vs), "insert of a new key failed", i);
    oracle[k] = v;
  }
  for (size_t i = 0; i < n; i += 7) {
    std::string k = key_of(i, ks), v = value_of(i, vs, 9);
    expect(!t->insert(k.data(), ks, v.data(), vs), "insert of a present key succeeded", i);
  }
  for (size_t i = 0; i < n; ++i) {
    std::string k = key_of(i, ks);
    expect(t->find(k.data(), ks, out.data()) && out == oracle[k], "find: missing or wrong value", i);
  }
  for (size_t i = 0; i < n; i += 2) {
    std::string k = key_of(i, ks), v = value_of(i, vs, 1);
    expect(t->update(k.data(), ks, v.data(), vs), "update of a present key failed", i);
    oracle[k] = v;
  }
  std::string absent = key_of(n + 5, ks), av = value_of(0, vs, 0);
  expect(!t->update(absent.data(), ks, av.data(), vs), "update of an absent key succeeded", n + 5);
  for (size_t i = 0; i < n; i += 3) {
    std::string k = key_of(i, ks);
    expect(t->remove(k.data(), ks), "remove of a present key failed", i);
    oracle.erase(k);
  }
  expect(!t->remove(absent.data(), ks), "remove of an absent key succeeded", n + 5);
  for (size_t i = 0; i < n; ++i) {
    std::string k = key_of(i, ks);
    auto it = oracle.find(k);
    bool found = t->find(k.data(), ks, out.data());
    expect(found == (it != oracle.end()), "find after remove: wrong presence", i);
    if (found && it != oracle.end()) expect(out == it->second, "find after update: wrong value", i);
  }
  // Scans of 10 from 50 starting keys: records are <key_size><value_size>.
  for (size_t s = 0; s < 50; ++s) {
    std::string from = key_of(s * 37, ks);
    char* recs = nullptr;
    int got = t->scan(from.data(), ks, 10, recs);
    auto it = oracle.lower_bound(from);
    int want = 0;
    for (auto j = it; j != oracle.end() && want < 10; ++j) ++want;
    expect(got == want, "scan returned a wrong number of records", s);
    for (int r = 0; r < got && r < want && recs; ++r, ++it) {
      const char* rec = recs + static_cast<size_t>(r) * (ks + vs);
      expect(std::string(rec, ks) == it->first && std::string(rec + ks, vs) == it->second,
             "scan returned a wrong record", s);
    }
  }
  t.reset();
  if (failures) {
    std::printf("%d wrong answers\n", failures);
    return 1;
  }
  std::printf("ok: %zu records, key_size %zu, value_size %zu\n", n, ks, vs);
  return 0;
}
