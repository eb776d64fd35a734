#include "common/fault.hpp"

namespace apairs::fault {
namespace {
thread_local int64_t countdown = 0;  // 0: disarmed
thread_local int64_t counted = 0;
}  // namespace

void fail_nth_allocation(int64_t n) {
    countdown = n > 0 ? n : 0;
    counted = 0;
}

bool allocation_fails() noexcept {
    ++counted;
    if (countdown == 0) return false;
    return --countdown == 0;
}

int64_t allocations_counted() noexcept { return counted; }

}  // namespace apairs::fault
