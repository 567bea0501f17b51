// A PiBench wrapper built as a third party would: master_tree_api.hpp, no
// pmindex header, a std::map behind a shared mutex. `pmindex bench --plugin`
// must run it with every answer right (tests/stress/pibench_interop.sh).
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "master_tree_api.hpp"

namespace {

class map_tree final : public tree_api {
 public:
  explicit map_tree(const tree_options_t& o) : key_size_(o.key_size), value_size_(o.value_size) {}
  bool find(const char* key, size_t key_sz, char* value_out) override {
    std::shared_lock l(mu_);
    auto it = map_.find(std::string(key, key_sz));
    if (it == map_.end()) return false;
    std::memset(value_out, 0, value_size_);
    std::memcpy(value_out, it->second.data(), std::min(it->second.size(), value_size_));
    return true;
  }
  bool insert(const char* key, size_t key_sz, const char* value, size_t value_sz) override {
    std::unique_lock l(mu_);
    return map_.emplace(std::string(key, key_sz), std::string(value, value_sz)).second;
  }
  bool update(const char* key, size_t key_sz, const char* value, size_t value_sz) override {
    std::unique_lock l(mu_);
    auto it = map_.find(std::string(key, key_sz));
    if (it == map_.end()) return false;
    it->second.assign(value, value_sz);
    return true;
  }
  bool remove(const char* key, size_t key_sz) override {
    std::unique_lock l(mu_);
    return map_.erase(std::string(key, key_sz)) == 1;
  }
  int scan(const char* key, size_t key_sz, int scan_sz, char*& values_out) override {
    static thread_local std::vector<char> out;
    const size_t stride = key_size_ + value_size_;
    out.clear();
    int n = 0;
    std::shared_lock l(mu_);
    for (auto it = map_.lower_bound(std::string(key, key_sz)); it != map_.end() && n < scan_sz; ++it, ++n) {
      out.resize(out.size() + stride, 0);
      char* rec = out.data() + out.size() - stride;
      std::memcpy(rec, it->first.data(), std::min(it->first.size(), key_size_));
      std::memcpy(rec + key_size_, it->second.data(), std::min(it->second.size(), value_size_));
    }
    values_out = out.data();
    return n;
  }

 private:
  size_t key_size_, value_size_;
  std::shared_mutex mu_;
  std::map<std::string, std::string> map_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) tree_api* create_tree(const tree_options_t& opt) {
  return new map_tree(opt);
}
