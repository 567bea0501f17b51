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

}  // namespace pmindex::test
