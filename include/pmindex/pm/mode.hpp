// Persistence modes (README, "Persistence modes") and flush instructions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pmindex::pm {

enum class mode : uint8_t {
  dram,      // anonymous memory; flush and fence are no-ops
  volatile_, // mapped pool file used as big volatile memory; no-ops
  persist,   // mapped pool file; flush lines and fence (the default)
  eadr,      // caches are in the persistence domain: fence only
  tx,        // undo-logged transactions (basic structures only)
};

enum class flush_kind : uint8_t { automatic, clwb, clflushopt, clflush, none };

std::string_view to_string(mode m) noexcept;
std::string_view to_string(flush_kind k) noexcept;
std::optional<mode> parse_mode(std::string_view s) noexcept;
std::optional<flush_kind> parse_flush(std::string_view s) noexcept;

// The best flush instruction this CPU has (clwb > clflushopt > clflush).
flush_kind best_flush() noexcept;
// True if the CPU supports `k` (automatic and none are always supported).
bool cpu_supports(flush_kind k) noexcept;

}  // namespace pmindex::pm
