// Mutants: deliberately broken variants of an index that prove a checker can
// fail. Each is named in index_entry::mutants (with the checker run and the
// violation that must catch it) and chosen by the parameter "mutant=NAME".
// Only test builds (PMINDEX_MUTANTS) accept them; elsewhere index_config
// rejects the parameter and on() is constant false, so every mutant branch
// compiles out of release builds.
//
//   enum class mutant : unsigned { none, publish_before_flush, ... };  // entry order
//   mutant_switch<mutant> mut_(cfg);
//   if (mut_.on(mutant::publish_before_flush)) ...
#pragma once

#include "pmindex/registry.hpp"

namespace pmindex::common {

template <class E>
class mutant_switch {
 public:
  mutant_switch() = default;
  explicit mutant_switch(const index_config& c) noexcept {
#ifdef PMINDEX_MUTANTS
    m_ = static_cast<E>(c.mutant_id());
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
