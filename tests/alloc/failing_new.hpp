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
// std::bad_alloc, counting from `phase` (a random phase per arming: calls
// that allocate less than `every` meet failures too, and a retried call is
// not failed at the same place each time by a count that moves in step
// with it). 0 disarms. Returns how many were thrown since the call before.
unsigned long fail_everywhere(unsigned long every, unsigned long phase = 0) noexcept;
// Armed: the calling thread's allocations left before the failing one (so
// fail_allocation(LONG_MAX), then a call, then LONG_MAX - this: how many the
// call made).
long allocations_left() noexcept;
// Bytes the calling thread has asked operator new for since it started.
unsigned long long bytes_allocated() noexcept;

}  // namespace pmindex::test
