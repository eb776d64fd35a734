// Fault injection for the tests: make the n-th allocation fail. Internal only (hidden
// visibility, absent from apairs.h and the version script); the tests link the core.
//
// The count runs per thread over every allocation the library reports through
// allocation_fails(): each device allocation (cuda/runtime.cu) and, in the test
// programs, each host allocation (their replacement of operator new asks it too), so
// that one sweep n = 1, 2, ... reaches every allocation of a call in order.
#pragma once

#include <cstdint>

namespace apairs::fault {

// From now on, on this thread, the n-th allocation (n >= 1) fails; n = 0 disarms.
void fail_nth_allocation(int64_t n);

// Counts one allocation on this thread; true (and disarmed) when it is the one to fail.
bool allocation_fails() noexcept;

// Allocations counted on this thread since the last fail_nth_allocation call.
int64_t allocations_counted() noexcept;

}  // namespace apairs::fault
