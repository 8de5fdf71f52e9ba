#include "futex_word.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

namespace phantora::shim {
namespace {

long futex(const std::atomic<uint32_t>* word, int op, uint32_t value,
           const timespec* timeout = nullptr) {
  // The kernel reads the word itself; a lock-free atomic of 32 bits is that word.
  return syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), op, value, timeout, nullptr,
                 0);
}

}  // namespace

void FutexWord::wait_while(uint32_t seen) const {
  // EAGAIN: the word had changed already; EINTR: a signal. Either way the caller looks again.
  while (value_.load(std::memory_order_acquire) == seen) futex(&value_, FUTEX_WAIT_PRIVATE, seen);
}

bool FutexWord::wait_while_for(uint32_t seen, int64_t timeout_ns) const {
  if (value_.load(std::memory_order_acquire) != seen) return true;
  const timespec span{static_cast<time_t>(timeout_ns / 1'000'000'000),
                      static_cast<long>(timeout_ns % 1'000'000'000)};
  // A relative timeout; EAGAIN (changed already) and ETIMEDOUT end it as a wake-up does.
  return futex(&value_, FUTEX_WAIT_PRIVATE, seen, &span) == 0 || errno != EINTR;
}

void FutexWord::bump_and_wake_all() {
  value_.fetch_add(1, std::memory_order_release);
  futex(&value_, FUTEX_WAKE_PRIVATE, INT_MAX);
}

}  // namespace phantora::shim
