// DRAM allocation failures on request (failing_new.cpp replaces the global
// operator new of the binary that links it): the calling thread's n-th
// allocation from now (0: the next one) throws std::bad_alloc, once. Other
// threads (an index's background threads, the test framework's) allocate as
// usual.
#pragma once

namespace pmindex::test {

void fail_allocation(long n) noexcept;
// Disarms; true if the armed failure was thrown since fail_allocation().
bool allow_allocations() noexcept;
// Armed: the calling thread's allocations left before the failing one (so
// fail_allocation(LONG_MAX), then a call, then LONG_MAX - this: how many the
// call made).
long allocations_left() noexcept;

}  // namespace pmindex::test
