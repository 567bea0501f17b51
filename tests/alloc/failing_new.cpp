// The replaced global allocation functions of pmindex_alloc_tests (see
// failing_new.hpp). Every form allocates with malloc or aligned_alloc and
// frees with free, so any new pairs with any delete; the nothrow forms of
// libstdc++ call these and catch.
#include "failing_new.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace pmindex::test {
namespace {
// -1: disarmed; -2: the armed failure was thrown; n >= 0: allocations left
// before the one that fails.
thread_local long t_countdown = -1;
thread_local unsigned long long t_bytes = 0;

std::atomic<unsigned long> g_every{0}, g_count{0}, g_thrown{0};

void maybe_fail() {
  if (const unsigned long every = g_every.load(std::memory_order_relaxed)) [[unlikely]]
    if (g_count.fetch_add(1, std::memory_order_relaxed) % every == every - 1) {
      g_thrown.fetch_add(1, std::memory_order_relaxed);
      throw std::bad_alloc();
    }
  if (t_countdown < 0) return;
  if (t_countdown-- == 0) {
    t_countdown = -2;
    throw std::bad_alloc();
  }
}
}  // namespace

void fail_allocation(long n) noexcept { t_countdown = n; }
long allocations_left() noexcept { return t_countdown; }
unsigned long long bytes_allocated() noexcept { return t_bytes; }
unsigned long fail_everywhere(unsigned long every, unsigned long phase) noexcept {
  g_every.store(0);
  g_count.store(phase);
  g_every.store(every);
  return g_thrown.exchange(0);
}
bool allow_allocations() noexcept {
  const bool thrown = t_countdown == -2;
  t_countdown = -1;
  return thrown;
}

}  // namespace pmindex::test

void* operator new(std::size_t n) {
  pmindex::test::maybe_fail();
  pmindex::test::t_bytes += n;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  pmindex::test::maybe_fail();
  pmindex::test::t_bytes += n;
  const std::size_t al = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;  // a multiple of the alignment
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) { return ::operator new(n, a); }

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
