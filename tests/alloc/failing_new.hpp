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
// Every thread, background threads included: while armed (every > 0),
// every `every`-th allocation made anywhere in the process throws
// std::bad_alloc (the count of allocations runs on across armings, so
// calls that allocate less than `every` meet failures too). 0 disarms.
// Returns how many were thrown since the call before.
unsigned long fail_everywhere(unsigned long every) noexcept;
// Armed: the calling thread's allocations left before the failing one (so
// fail_allocation(LONG_MAX), then a call, then LONG_MAX - this: how many the
// call made).
long allocations_left() noexcept;

}  // namespace pmindex::test
