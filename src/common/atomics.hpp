// The atomic accesses indexes use on pool words: acquire loads, release
// stores and CAS, on plain (non-std::atomic) fields of persistent structs.
#pragma once

namespace pmindex::common {

template <class T>
inline T load_acq(const T* p) noexcept {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <class T>
inline T load_relaxed(const T* p) noexcept {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}
template <class T>
inline void store_rel(T* p, T v) noexcept {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
template <class T>
inline void store_relaxed(T* p, T v) noexcept {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
template <class T>
inline bool cas(T* p, T& expected, T desired) noexcept {
  return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

}  // namespace pmindex::common
