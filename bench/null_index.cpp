#include "null_index.hpp"

namespace pmindex::bench {

namespace {
class null_index final : public index {
 public:
  explicit null_index(pm::pool& p) : index(p) {}
  bool insert(uint64_t, uint64_t) override { return false; }
  bool update(uint64_t, uint64_t) override { return false; }
  bool remove(uint64_t) override { return false; }
  std::optional<uint64_t> lookup(uint64_t) override { return std::nullopt; }
  size_t scan(uint64_t, size_t, record*) override { return 0; }
  bool insert(std::string_view, std::string_view) override { return false; }
  bool update(std::string_view, std::string_view) override { return false; }
  bool remove(std::string_view) override { return false; }
  bool lookup(std::string_view, std::string*) override { return false; }
  size_t scan(std::string_view, size_t, record_buffer&) override { return 0; }
  check_result check() override { return {}; }
  void trace(pm::pool::trace_sink&) override {}
  index_stats stats() override { return {}; }
};
}  // namespace

index_entry make_null_entry() {
  index_entry e;
  e.name = "null";
  e.family = "test";
  e.description = "baseline: does nothing (measures the harness itself)";
  e.concurrent = true;
  e.modes = {pm::mode::dram};
  e.key_kinds = {key_kind::u64, key_kind::bytes};
  e.max_key = 1 << 16;
  e.max_value = 1 << 30;
  e.scan_guarantee = "returns nothing";
  e.factory = [](pm::pool& p, open_kind, const index_config&) -> std::unique_ptr<index> {
    return std::make_unique<null_index>(p);
  };
  return e;
}

void register_null_index() {
  static const bool once = [] {
    register_index(make_null_entry());
    return true;
  }();
  (void)once;
}

bool discards_records(const index_entry& e) noexcept { return e.name == "null" && e.family == "test"; }

}  // namespace pmindex::bench
