// Mutants: deliberately broken variants of an index that prove a checker can
// fail. Each is named in its index's tests.cpp (index_tests::mutants, with
// the checker run and the violation that must catch it) and chosen by the
// parameter "mutant=NAME".
// Only test builds (PMINDEX_MUTANTS) accept them; elsewhere index_config
// rejects the parameter and on() is constant false, so every mutant branch
// compiles out of release builds.
//
//   enum class mutant : unsigned { none, publish_before_flush, ... };  // tests.cpp order
//   mutant_switch<mutant> mut_(cfg);
//   if (mut_.on(mutant::publish_before_flush)) ...
#pragma once

#include "pmindex/registry.hpp"

namespace pmindex::detail {
// The mutant an index_config selects ("" and 0: none).
struct config_access {
  static const std::string& mutant(const index_config& c) noexcept { return c.mutant_; }
  static unsigned mutant_id(const index_config& c) noexcept { return c.mutant_id_; }
};
}  // namespace pmindex::detail

namespace pmindex::common {

template <class E>
class mutant_switch {
 public:
  mutant_switch() = default;
  explicit mutant_switch(const index_config& c) noexcept {
#ifdef PMINDEX_MUTANTS
    m_ = static_cast<E>(::pmindex::detail::config_access::mutant_id(c));
#else
    (void)c;
#endif
  }
#ifdef PMINDEX_MUTANTS
  bool on(E m) const noexcept { return m_ == m; }
  bool any() const noexcept { return m_ != E{}; }

 private:
  E m_{};
#else
  static constexpr bool on(E) noexcept { return false; }
  static constexpr bool any() noexcept { return false; }
#endif
};

}  // namespace pmindex::common
