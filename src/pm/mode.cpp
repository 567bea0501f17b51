#include "pmindex/pm/mode.hpp"

#include <cpuid.h>

namespace pmindex::pm {

std::string_view to_string(mode m) noexcept {
  switch (m) {
    case mode::dram: return "dram";
    case mode::volatile_: return "volatile";
    case mode::persist: return "persist";
    case mode::eadr: return "eadr";
    case mode::tx: return "tx";
  }
  return "?";
}

std::string_view to_string(flush_kind k) noexcept {
  switch (k) {
    case flush_kind::automatic: return "auto";
    case flush_kind::clwb: return "clwb";
    case flush_kind::clflushopt: return "clflushopt";
    case flush_kind::clflush: return "clflush";
    case flush_kind::none: return "none";
  }
  return "?";
}

std::optional<mode> parse_mode(std::string_view s) noexcept {
  for (mode m : {mode::dram, mode::volatile_, mode::persist, mode::eadr, mode::tx})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

std::optional<flush_kind> parse_flush(std::string_view s) noexcept {
  for (flush_kind k : {flush_kind::automatic, flush_kind::clwb, flush_kind::clflushopt,
                       flush_kind::clflush})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

bool cpu_supports(flush_kind k) noexcept {
  unsigned a, b, c, d;
  switch (k) {
    case flush_kind::clwb:
      return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 24));
    case flush_kind::clflushopt:
      return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23));
    case flush_kind::clflush:
      return __get_cpuid(1, &a, &b, &c, &d) && (d & (1u << 19));
    default:
      return true;
  }
}

flush_kind best_flush() noexcept {
  for (flush_kind k : {flush_kind::clwb, flush_kind::clflushopt})
    if (cpu_supports(k)) return k;
  return flush_kind::clflush;
}

}  // namespace pmindex::pm
